"""The database file: opened private to its owner, in WAL mode with a busy timeout (several processes
share it), migrated on open; and the one way to write, `transaction()`."""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Self

from checkpoint.ownership import database_folder_problem
from checkpoint.store.migrations import APPLICATION_ID, MIGRATIONS, Identity, identify, migrate


def private(path: Path) -> None:
    """A new database and its WAL and shared-memory files readable by their owner alone. Never done
    to an existing one: its mode is the user's (a 0444 or 0640 they set stays so)."""
    for suffix in ("", "-wal", "-shm"):
        p = Path(str(path) + suffix)
        if p.exists():
            os.chmod(p, 0o600)


def _enable_wal(conn: sqlite3.Connection, wait_seconds: float = 30.0) -> None:
    """Two processes opening the same new database at once: the switch to WAL answers SQLITE_BUSY
    without going through the busy handler, so wait for the other one here instead of failing."""
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


# How long grouped_commits() holds one transaction open: short enough that another process's
# writer (a daemon appending a turn) barely notices the wait, long enough to group the files of a
# cold scan (2,000 small sessions: ~80 files a commit).
GROUP_SECONDS = 0.2


class StoreUnavailable(RuntimeError):
    """A database a read-only front end cannot read now: missing, locked past the wait, or of another
    schema version. The message says which, and where."""


class StoreFault(StoreUnavailable):
    """A database Checkpoint cannot or must not use: a full disk, a read-only or foreign directory,
    a corrupt file, a newer schema. One line that names the path and what to do."""


def fault_message(exc: BaseException, path: Path) -> str:
    """What a storage error means for the database at `path`, in one line with what to do."""
    text = str(exc)
    low = text.lower()
    if isinstance(exc, StoreUnavailable):
        return text
    if ("disk is full" in low or "disk i/o error" in low
            or getattr(exc, "errno", None) in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)):
        return (f"could not write the database {path} ({text}): the disk is full (or over a quota or"
                " size limit); free some space and run again"
                " (nothing was lost: what was not written is read again from the transcripts)")
    if "readonly" in low or "read-only" in low or getattr(exc, "errno", None) in (errno.EROFS, errno.EACCES,
                                                                                  errno.EPERM):
        return (f"cannot write the database {path} ({text}): make its directory writable by you,"
                " or set CHECKPOINT_DB to a writable place")
    if _unreadable(exc):
        return _unreadable_message(text, path)
    if "unable to open" in low:
        return f"cannot open the database {path} ({text}): check that its directory exists and is yours"
    return f"the database {path} failed: {text}"


def _unreadable(exc: BaseException) -> bool:
    """SQLite could not read the file as a database: not one at all, or damaged pages."""
    low = str(exc).lower()
    return "not a database" in low or "malformed" in low or "corrupt" in low


SQLITE_MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file


class _Whose(Enum):
    NOT_SQLITE = "not sqlite"
    OURS = "ours"  # our application id in the header, or (from before the id) our tables
    UNKNOWN = "unknown"  # an SQLite file too damaged to tell, or another program's


def _whose(path: Path) -> _Whose:
    """Whose unreadable file this is, from its header (and its schema, when that can still be read):
    advice that moves a file is given only for one Checkpoint made."""
    try:
        with path.open("rb") as fh:
            header = fh.read(100)
    except OSError:
        return _Whose.UNKNOWN
    if not header.startswith(SQLITE_MAGIC):
        return _Whose.NOT_SQLITE
    if int.from_bytes(header[68:72], "big") == APPLICATION_ID:
        return _Whose.OURS
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=0.5)
        try:
            identity = identify(conn)
        finally:
            conn.close()
    except sqlite3.Error:
        return _Whose.UNKNOWN
    return _Whose.OURS if identity in (Identity.OURS, Identity.EARLIER) else _Whose.UNKNOWN


def _not_sqlite_message(path: Path) -> str:
    return (f"{path} is not a Checkpoint database (not an SQLite file: it was left as it is): give --db or "
            "CHECKPOINT_DB a new file, or the database Checkpoint made")


def _unreadable_message(text: str, path: Path) -> str:
    """Only a file Checkpoint made may be moved aside: a text file or another program's is named, and left."""
    whose = _whose(path)
    if whose is _Whose.NOT_SQLITE:
        return _not_sqlite_message(path)
    if whose is _Whose.OURS:
        return (f"the Checkpoint database {path} is damaged ({text}): move it aside (mv '{path}' '{path}.broken')"
                " and run again; a new one is built from the transcripts, which are untouched")
    return (f"{path} is a damaged SQLite file not known to be a Checkpoint database ({text}): it was left as it"
            " is; give --db or CHECKPOINT_DB a new file, or the database Checkpoint made")


def _check_directory(directory: Path) -> None:
    """Refuse a directory another user owns or others may write (they could swap the database, or read it)."""
    problem = database_folder_problem(directory)
    if problem:
        raise StoreFault(problem)


def read_only_file(path: Path) -> bool:
    """An existing database this user may not or chose not to write: its directory or the file is not
    writable by them, or the file has no owner write bit (a 0444 set by hand, honoured even by root)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return False
    return (not info.st_mode & stat.S_IWUSR or not os.access(path, os.W_OK)
            or not os.access(path.parent, os.W_OK))


def _check_file(path: Path) -> None:
    try:
        info = path.stat()
    except FileNotFoundError:
        return
    if info.st_uid != os.getuid():
        raise StoreFault(f"the database {path} belongs to another user (uid {info.st_uid}): "
                         "set CHECKPOINT_DB to a file of your own")


def open_database(path: Path, busy_seconds: float | None = None, *, migrating: bool = True) -> sqlite3.Connection:
    """A connection to the database at `path` (created private if new), pragmas set, migrated.
    Raises StoreFault (one line: the path and what to do) when it cannot or must not be used.

    `busy_seconds`: how long any statement waits for another process's lock, from the very first
    (the default, 30 s, is a CLI's or the daemon's patience; a hook or the MCP server has far less).
    `migrating=False` (a front end on an agent's path): a database that does not exist yet or is not
    at this Checkpoint's schema is StoreUnavailable, neither created nor migrated (a migration takes
    the write lock, and may take long)."""
    if not migrating:
        _current_or_refused(path, busy_seconds)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        _check_directory(path.parent)
        _check_file(path)
        if not os.access(path.parent, os.W_OK) or read_only_file(path):
            raise StoreFault(f"cannot write the database {path}: its directory or file is read-only; make them "
                             "writable by you, or set CHECKPOINT_DB to a writable place")
        return _open(path, 30.0 if busy_seconds is None else busy_seconds, migrating)
    except StoreFault:
        raise
    except (OSError, sqlite3.Error) as exc:
        raise StoreFault(fault_message(exc, path)) from exc


def _current_or_refused(path: Path, busy_seconds: float | None) -> None:
    """For a front end that must not create or migrate: the database exists at the current schema,
    or StoreUnavailable (open_read_only says which)."""
    open_read_only(path, 0.0 if busy_seconds is None else busy_seconds).close()


def _open(path: Path, busy_seconds: float, migrating: bool) -> sqlite3.Connection:
    new = not path.exists()
    old_umask = os.umask(0o077)
    try:
        conn = sqlite3.connect(path, timeout=busy_seconds, isolation_level=None, check_same_thread=False)
    finally:
        os.umask(old_umask)
    try:
        _refuse_foreign(conn, path)
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > len(MIGRATIONS):
            raise StoreFault(f"the database {path} is at schema version {version}, newer than this Checkpoint "
                             f"({len(MIGRATIONS)}): upgrade Checkpoint, or set CHECKPOINT_DB to another file")
        # Takes effect only when the database is created. Rows hold turn text (a few hundred bytes to
        # many KB): 16 KB pages store them with less B-tree overhead than 4 KB ones (a cold scan of a
        # 100 MB session: 10% less CPU, a 10% smaller file).
        conn.execute("PRAGMA page_size=16384")
        _enable_wal(conn, busy_seconds)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        # The turn-id index takes random inserts: past a few hundred MB of transcript it outgrows the
        # default 2 MB cache, and every insert reads pages back (a 400 MB cold scan: 8.1 s with the
        # default, 7.5 s with 16 MB, no faster with 48 MB). Allocated as used: small databases pay nothing.
        conn.execute("PRAGMA cache_size=-16384")
        if migrating or version != len(MIGRATIONS):  # not migrating: checked current before the open
            migrate(conn)
        if new:
            private(path)
    except BaseException:
        conn.close()
        raise
    return conn


def _foreign_message(path: Path) -> str:
    return (f"{path} is not a Checkpoint database (another program's SQLite file: it was left as it is): "
            "set CHECKPOINT_DB to a new file, or to the database Checkpoint made")


def _refuse_foreign(conn: sqlite3.Connection, path: Path) -> None:
    """Before the first write (WAL, page size, migrations, chmod): only a database Checkpoint made,
    or an empty one, is ours to change."""
    if identify(conn) is Identity.FOREIGN:
        raise StoreFault(_foreign_message(path))


def open_read_only(path: Path, busy_seconds: float) -> sqlite3.Connection:
    """A connection that can only read (mode=ro: never creates, never migrates), waiting at most
    `busy_seconds` for a lock: what a hook, with its one second, may afford."""
    if not path.is_file():
        raise StoreUnavailable(f"no database at {path} (nothing captured there yet, or CHECKPOINT_DB points elsewhere)")
    try:
        # The same checks as a writer's open: another user's file would put their items in our agent's context.
        _check_directory(path.parent)
        _check_file(path)
    except OSError as exc:
        raise StoreUnavailable(f"cannot read the database at {path}: {exc}") from exc
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=busy_seconds,
                               isolation_level=None, check_same_thread=False)
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        identity = identify(conn)
    except sqlite3.Error as exc:
        raise StoreUnavailable(_unreadable_message(str(exc), path) if _unreadable(exc)
                               else f"cannot read the database at {path}: {exc}") from exc
    if identity is Identity.FOREIGN or identity is Identity.EMPTY:
        conn.close()
        raise StoreUnavailable(_foreign_message(path) if identity is Identity.FOREIGN
                               else f"the database at {path} is empty (nothing captured there yet)")
    if version != len(MIGRATIONS):
        conn.close()
        raise StoreUnavailable(f"the database at {path} is at schema version {version}, this Checkpoint reads "
                               f"{len(MIGRATIONS)}: a `checkpoint` command that writes (e.g. `checkpoint scan`, "
                               "with the file writable) migrates it")
    return conn


class StoreBase:
    """The connection and clock every part of the store shares, and its transactions."""

    def __init__(self, path: Path | str, clock: Callable[[], float] = time.time,
                 *, connection: sqlite3.Connection | None = None, busy_seconds: float | None = None,
                 migrating: bool = True) -> None:
        """busy_seconds: a front end on an agent's path waits for a writer only briefly, from the first
        statement on; migrating=False: it neither creates nor migrates the database (StoreUnavailable)."""
        self.path = Path(path)
        self.clock = clock
        self.conn = connection if connection is not None else open_database(self.path, busy_seconds,
                                                                             migrating=migrating)
        if busy_seconds is not None:
            self.conn.execute(f"PRAGMA busy_timeout = {int(busy_seconds * 1000)}")
        self._group_seconds: float | None = None  # set while grouped_commits() is open
        self._group_began = 0.0

    def backfills_due(self) -> list[str]:
        """The back-fills a migration left due (named in `backfills`): checkpoint.backfills runs each once."""
        return [row[0] for row in self.conn.execute("SELECT name FROM backfills ORDER BY name")]

    @classmethod
    def read_only(cls, path: Path | str, busy_seconds: float = 0.5) -> Self:
        """The store opened for reading only (see open_read_only); raises StoreUnavailable."""
        return cls(path, connection=open_read_only(Path(path), busy_seconds))

    def close(self) -> None:
        self.conn.close()

    def give_up_at(self, deadline: float) -> None:
        """Every query still running at `deadline` (time.monotonic) is interrupted (sqlite3.OperationalError):
        for a caller with a hard time budget (a hook on the agent's path)."""
        self.conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 5_000)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE: take the write lock up front so concurrent writers queue, not deadlock.
        Inside grouped_commits(), a savepoint of the group's transaction instead: it stands or falls
        alone just the same (a failed one leaves nothing), and is committed with the group."""
        if self._group_seconds is not None:
            with self._grouped_transaction(self._group_seconds) as c:
                yield c
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    @contextmanager
    def grouped_commits(self, seconds: float = GROUP_SECONDS) -> Iterator[None]:
        """Transactions opened within are committed together, once at least `seconds` went by since
        the group's first (checked as the next one opens) and when the block ends: for a one-shot
        `checkpoint scan` of many files. Each commit writes every page it changed to the WAL once
        more; a file's batch dirties pages all over the turn-id index (random ids) and one page of
        each small table, so a commit per file wrote 4x the WAL a cold scan of 2,000 sessions needs.
        What stays as it was: each batch's turns and cursor are stored together or not at all (a
        crash loses at most the group, read again from the transcripts next time); another process
        sees a group's writes when it commits, and a writer waits for the lock at most `seconds`
        plus one batch longer. Single-threaded use only (the savepoints nest on one connection)."""
        if self._group_seconds is not None:
            yield
            return
        self._group_seconds = seconds
        try:
            yield
        except BaseException:
            if self.conn.in_transaction:  # what completed before the failure is kept, as before
                self.conn.execute("COMMIT")
            raise
        finally:
            self._group_seconds = None
        if self.conn.in_transaction:
            self.conn.execute("COMMIT")

    @contextmanager
    def _grouped_transaction(self, seconds: float) -> Iterator[sqlite3.Connection]:
        now = time.monotonic()
        if self.conn.in_transaction and now - self._group_began >= seconds:
            self.conn.execute("COMMIT")
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN IMMEDIATE")
            self._group_began = now
        self.conn.execute("SAVEPOINT grouped")
        try:
            yield self.conn
        except BaseException:
            # An error that rolled the whole transaction back (a full disk) leaves no savepoint.
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK TO grouped")
                self.conn.execute("RELEASE grouped")
            raise
        self.conn.execute("RELEASE grouped")

    @property
    def schema_version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def data_version(self) -> int:
        """Changes whenever another connection (another thread or process) committed: a cheap way
        to notice what another window's daemon did."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def compact(self) -> bool:
        """VACUUM (the file is rewritten without the deleted rows' pages), then truncate the WAL (whose
        old frames hold what was written before). False when a reader in another process kept the WAL
        from being truncated: its old frames go at a later checkpoint."""
        self.conn.execute("VACUUM")
        busy = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        private(self.path)
        return not busy
