"""The schema, as numbered migrations. A database records in `PRAGMA user_version` how many of them
it has had; opening it applies the rest, each in order, in one transaction.

Every migration is a tuple of single statements, executed one at a time: nothing splits a script on
`;`, which a trigger body or a comment may hold. Never edit a migration that has shipped (databases
at its version already have it): append a new one.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from checkpoint.repository import workspace_key

# `PRAGMA application_id`, set when Checkpoint makes a database: what tells its file from another
# program's SQLite file that CHECKPOINT_DB (or a symlink) happens to name. "CPKT".
APPLICATION_ID = 0x43504B54


@dataclass(frozen=True)
class Migration:
    name: str
    statements: tuple[str, ...]  # one SQL statement each
    # What SQL cannot derive (a folder's repository is read from disk), run after the statements in
    # the same transaction
    derive: Callable[[sqlite3.Connection], None] | None = None

    def __post_init__(self) -> None:
        for statement in self.statements:
            if not sqlite3.complete_statement(statement + "\n;"):  # a newline ends a trailing comment
                raise ValueError(f"migration {self.name!r}: not one whole statement: {statement[:80]!r}")


def derive_workspaces(c: sqlite3.Connection) -> None:
    """The workspace of every recorded folder, of every session (its first folder's) and of every item
    (its session's; an item of a session with no folder keeps none)."""
    folders = [row[0] for row in c.execute("SELECT DISTINCT cwd FROM session_cwds")]
    c.executemany("UPDATE session_cwds SET workspace = ? WHERE cwd = ?", [(workspace_key(f), f) for f in folders])
    sessions = c.execute("SELECT id, cwd FROM sessions WHERE cwd IS NOT NULL AND cwd != ''").fetchall()
    c.executemany("UPDATE sessions SET workspace = ? WHERE id = ?",
                  [(workspace_key(cwd), session_id) for session_id, cwd in sessions])
    c.execute("UPDATE items SET workspace = (SELECT s.workspace FROM sessions s WHERE s.id = items.session_id)"
              " WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.id = items.session_id AND s.workspace IS NOT NULL)")


# The tables a session's counts are read from, and the column naming the session.
_COUNTED = (("sessions", "id"), ("chunks", "session_id"), ("drops", "session_id"), ("session_usage", "session_id"),
            ("problems", "session_id"), ("redactions", "session_id"), ("files", "session_id"))


def _change_triggers(table: str, key: str) -> tuple[str, ...]:
    """After each insert, update and delete of `table`: its session's next number in session_changes."""
    out = []
    for event, row in (("INSERT", "new"), ("UPDATE", "new"), ("DELETE", "old"), ("UPDATE", "old")):
        name = f"{table}_{event.lower()}_{row}_changes"
        out.append(
            f"CREATE TRIGGER {name} AFTER {event} ON {table} WHEN {row}.{key} IS NOT NULL"
            + (f" AND old.{key} IS NOT new.{key}" if event == "UPDATE" and row == "old" else "")
            + f" BEGIN INSERT INTO session_changes (session_id, seq) SELECT {row}.{key},"
            " coalesce((SELECT max(seq) FROM session_changes), 0) + 1 WHERE 1"
            " ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq; END"
        )
    return tuple(out)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        # the initial schema
        "initial schema",
        (
            """
            CREATE TABLE sessions (
                id TEXT PRIMARY KEY,
                agent TEXT NOT NULL,
                title TEXT,
                cwd TEXT,
                turns INTEGER NOT NULL DEFAULT 0,       -- highest seq given out
                watermark INTEGER NOT NULL DEFAULT 0,   -- every turn with seq <= watermark is captured
                first_ts TEXT,
                last_ts TEXT,
                updated_at REAL
            )
            """,
            """
            CREATE TABLE files (
                path TEXT PRIMARY KEY,
                agent TEXT NOT NULL,
                session_id TEXT,
                subagent INTEGER NOT NULL DEFAULT 0,
                dev INTEGER NOT NULL DEFAULT 0,
                inode INTEGER NOT NULL DEFAULT 0,
                size INTEGER NOT NULL DEFAULT 0,
                mtime_ns INTEGER NOT NULL DEFAULT 0,
                offset INTEGER NOT NULL DEFAULT 0,
                line_no INTEGER NOT NULL DEFAULT 0,
                head_hash TEXT NOT NULL DEFAULT '',
                head_len INTEGER NOT NULL DEFAULT 0,
                reader_state TEXT NOT NULL DEFAULT '{}',
                missing INTEGER NOT NULL DEFAULT 0,
                last_error TEXT
            )
            """,
            """
            CREATE TABLE turns (
                id TEXT PRIMARY KEY,
                session_id TEXT NOT NULL REFERENCES sessions(id),
                seq INTEGER NOT NULL,
                role TEXT NOT NULL,
                text TEXT NOT NULL,
                files TEXT NOT NULL DEFAULT '[]',
                ts TEXT,
                message_id TEXT,
                source_path TEXT NOT NULL,
                line_no INTEGER NOT NULL,
                tokens INTEGER NOT NULL,
                header_tokens INTEGER NOT NULL,
                chunked INTEGER NOT NULL DEFAULT 0,
                UNIQUE (session_id, seq)
            )
            """,
            'CREATE INDEX turns_unchunked ON turns (session_id, seq) WHERE chunked = 0',
            """
            CREATE TABLE chunks (
                id INTEGER PRIMARY KEY,
                session_id TEXT NOT NULL REFERENCES sessions(id),
                first_seq INTEGER NOT NULL,
                last_seq INTEGER NOT NULL,
                char_start INTEGER NOT NULL DEFAULT 0,
                char_end INTEGER,                        -- NULL: to the end of the turn
                part INTEGER NOT NULL DEFAULT 1,
                parts INTEGER NOT NULL DEFAULT 1,
                tokens INTEGER NOT NULL,
                state TEXT NOT NULL DEFAULT 'pending',
                attempts INTEGER NOT NULL DEFAULT 0,
                cause TEXT,
                lease_owner TEXT,
                lease_until REAL,
                next_try REAL NOT NULL DEFAULT 0,
                updated_at REAL,
                UNIQUE (session_id, first_seq, char_start)
            )
            """,
            'CREATE INDEX chunks_state ON chunks (state, next_try)',
            """
            CREATE TABLE items (
                id TEXT PRIMARY KEY,
                session_id TEXT NOT NULL REFERENCES sessions(id),
                fingerprint TEXT NOT NULL,
                kind TEXT NOT NULL,
                statement TEXT NOT NULL,
                rationale TEXT,
                confidence REAL NOT NULL,
                turn_ids TEXT NOT NULL,
                files TEXT NOT NULL DEFAULT '[]',
                state TEXT NOT NULL DEFAULT 'new',
                extractor TEXT NOT NULL,
                first_chunk INTEGER NOT NULL,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                UNIQUE (session_id, fingerprint)
            )
            """,
            """
            CREATE TABLE drops (
                session_id TEXT NOT NULL,
                policy TEXT NOT NULL,
                records INTEGER NOT NULL DEFAULT 0,
                chars INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (session_id, policy)
            )
            """,
            """
            CREATE TABLE problems (
                path TEXT NOT NULL,
                line_no INTEGER NOT NULL,
                message TEXT NOT NULL,
                session_id TEXT,
                seen_at REAL NOT NULL,
                PRIMARY KEY (path, line_no, message)
            )
            """,
            """
            CREATE TABLE runs (
                id INTEGER PRIMARY KEY,
                started_at REAL NOT NULL,
                finished_at REAL,
                extractor TEXT NOT NULL,
                chunks_tried INTEGER NOT NULL DEFAULT 0,
                chunks_captured INTEGER NOT NULL DEFAULT 0,
                chunks_failed INTEGER NOT NULL DEFAULT 0,
                items_added INTEGER NOT NULL DEFAULT 0,
                input_tokens INTEGER NOT NULL DEFAULT 0,
                output_tokens INTEGER NOT NULL DEFAULT 0,
                cache_creation_input_tokens INTEGER NOT NULL DEFAULT 0,
                cache_read_input_tokens INTEGER NOT NULL DEFAULT 0,
                requests INTEGER NOT NULL DEFAULT 0,
                note TEXT
            )
            """,
        ),
    ),
    Migration(
        # what extraction costs, per session and per run; restatements merged into an existing item
        "usage and item aliases",
        (
            """
            CREATE TABLE session_usage (
                session_id TEXT PRIMARY KEY REFERENCES sessions(id),
                requests INTEGER NOT NULL DEFAULT 0,
                input_tokens INTEGER NOT NULL DEFAULT 0,
                output_tokens INTEGER NOT NULL DEFAULT 0,
                cache_creation_input_tokens INTEGER NOT NULL DEFAULT 0,
                cache_read_input_tokens INTEGER NOT NULL DEFAULT 0,
                cost_usd REAL NOT NULL DEFAULT 0,
                updated_at REAL
            )
            """,
            "ALTER TABLE runs ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0",
            "ALTER TABLE runs ADD COLUMN chunks_resplit INTEGER NOT NULL DEFAULT 0",
            """
            CREATE TABLE item_aliases (
                session_id TEXT NOT NULL,
                fingerprint TEXT NOT NULL,
                item_id TEXT NOT NULL REFERENCES items(id),
                PRIMARY KEY (session_id, fingerprint)
            )
            """,
        ),
    ),
    Migration(
        # secrets redacted before storing, per session and kind; sessions forgotten on request (their
        # transcripts are not read into the database again until `checkpoint forget --undo`)
        "redactions and forgotten sessions",
        (
            """
            CREATE TABLE redactions (
                session_id TEXT NOT NULL,
                kind TEXT NOT NULL,
                count INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (session_id, kind)
            )
            """,
            """
            CREATE TABLE forgotten (
                session_id TEXT PRIMARY KEY,
                forgotten_at REAL NOT NULL,
                turns INTEGER NOT NULL DEFAULT 0
            )
            """,
        ),
    ),
    Migration(
        # chunks a run tried but lost to another runner before it could record their answers
        "chunks lost per run",
        (
            "ALTER TABLE runs ADD COLUMN chunks_lost INTEGER NOT NULL DEFAULT 0",
        ),
    ),
    Migration(
        # each file's share of its session's drop counts ({policy: [records, chars]}), taken back when
        # the file is read again from the start, so that a re-read does not count its drops twice
        "drop shares per file",
        (
            "ALTER TABLE files ADD COLUMN drops TEXT NOT NULL DEFAULT '{}'",
        ),
    ),
    Migration(
        # how an item knows its source: 'turns' it cited, or 'chunk' when it cited no turn of its
        # chunk and was attributed to the chunk (every item stored before this cited its turns);
        # and how many items of each run were so attributed
        "item citations",
        (
            "ALTER TABLE items ADD COLUMN cited TEXT NOT NULL DEFAULT 'turns'",
            "ALTER TABLE runs ADD COLUMN items_attributed INTEGER NOT NULL DEFAULT 0",
        ),
    ),
    Migration(
        # full-text search over items (statement, rationale, files), kept in step by triggers. The
        # index's rows are keyed by item_search_rows.row, not by items.rowid: items has no INTEGER
        # PRIMARY KEY, so VACUUM (which `forget` runs) may renumber its rowids under the index.
        "item search",
        (
            "CREATE TABLE item_search_rows (row INTEGER PRIMARY KEY, item_id TEXT NOT NULL UNIQUE)",
            # unicode61 folds case and (remove_diacritics 2) accents: "Café" finds "cafe". The prefix
            # indexes make a short word being typed (`"ca"*`) a lookup, not a merge of every word it starts.
            """
            CREATE VIRTUAL TABLE item_search USING fts5(
                statement, rationale, files, prefix = '2 3 4 5 6', tokenize = 'unicode61 remove_diacritics 2'
            )
            """,
            """
            CREATE TRIGGER items_search_insert AFTER INSERT ON items BEGIN
                INSERT INTO item_search_rows (item_id) VALUES (new.id);
                INSERT INTO item_search (rowid, statement, rationale, files)
                VALUES ((SELECT row FROM item_search_rows WHERE item_id = new.id),
                        new.statement, coalesce(new.rationale, ''), new.files);
            END
            """,
            """
            CREATE TRIGGER items_search_update AFTER UPDATE OF statement, rationale, files ON items BEGIN
                UPDATE item_search SET statement = new.statement, rationale = coalesce(new.rationale, ''),
                    files = new.files
                WHERE rowid = (SELECT row FROM item_search_rows WHERE item_id = new.id);
            END
            """,
            """
            CREATE TRIGGER items_search_delete AFTER DELETE ON items BEGIN
                DELETE FROM item_search WHERE rowid = (SELECT row FROM item_search_rows WHERE item_id = old.id);
                DELETE FROM item_search_rows WHERE item_id = old.id;
            END
            """,
            "INSERT INTO item_search_rows (item_id) SELECT id FROM items ORDER BY created_at, id",
            """
            INSERT INTO item_search (rowid, statement, rationale, files)
            SELECT r.row, i.statement, coalesce(i.rationale, ''), i.files
            FROM item_search_rows r JOIN items i ON i.id = r.item_id
            """,
        ),
    ),
    Migration(
        # items belong to a workspace (their first session's cwd, without a trailing separator) as
        # well as a session: a restatement in another session of the workspace merges into them
        "items per workspace",
        (
            "ALTER TABLE items ADD COLUMN workspace TEXT",
            """
            UPDATE items SET workspace = (
                SELECT CASE WHEN rtrim(cwd, '/') = '' THEN cwd ELSE rtrim(cwd, '/') END
                FROM sessions WHERE sessions.id = items.session_id
            )
            """,
            "CREATE INDEX items_workspace ON items (workspace, fingerprint)",
            "CREATE INDEX items_workspace_updated ON items (workspace, updated_at)",  # its latest, unsorted
            "CREATE INDEX item_aliases_fingerprint ON item_aliases (fingerprint)",
        ),
    ),
    Migration(
        # a later item supersedes an earlier one: who said so (model, heuristic, user), why, at which
        # turn; the old item stays. Links go with either item (a forgotten session's items).
        "supersessions",
        (
            """
            CREATE TABLE supersessions (
                old_id TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
                new_id TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
                said_by TEXT NOT NULL,   -- model, heuristic or user
                reason TEXT,
                turn_id TEXT,            -- the turn that said so (NULL: by hand)
                created_at REAL NOT NULL,
                PRIMARY KEY (old_id, new_id)
            )
            """,
            "CREATE INDEX supersessions_new ON supersessions (new_id)",
        ),
    ),
    Migration(
        # who holds a lease, so that another process on the same machine can tell whether it is alive
        # (checkpoint.liveness): a dead owner's chunks are due at once, not after their lease expires
        "lease owners",
        (
            """
            CREATE TABLE lease_owners (
                owner TEXT PRIMARY KEY,        -- chunks.lease_owner
                host TEXT NOT NULL,            -- machine, boot and pid namespace (liveness.host_key)
                pid INTEGER NOT NULL,
                started INTEGER NOT NULL,      -- the process's start time, in clock ticks after boot
                since REAL NOT NULL
            )
            """,
            "CREATE INDEX chunks_lease_owner ON chunks (lease_owner) WHERE lease_owner IS NOT NULL",
        ),
    ),
    Migration(
        # Every folder a session worked in (its cwd changes after `cd`, a relocation, a Codex turn in
        # another folder): a workspace's sessions are those that worked in it at all, not only those
        # whose first cwd is in it. Without a trailing separator, as items.workspace.
        "session folders",
        (
            """
            CREATE TABLE session_cwds (
                session_id TEXT NOT NULL REFERENCES sessions(id),
                cwd TEXT NOT NULL,
                PRIMARY KEY (session_id, cwd)
            ) WITHOUT ROWID
            """,
            "CREATE INDEX session_cwds_cwd ON session_cwds (cwd)",
            """
            INSERT OR IGNORE INTO session_cwds (session_id, cwd)
                SELECT id, CASE WHEN rtrim(cwd, '/') = '' THEN cwd ELSE rtrim(cwd, '/') END
                FROM sessions WHERE cwd IS NOT NULL AND cwd != ''
            """,
        ),
    ),
    Migration(
        # What a turn's tool calls wrote to files (the readers' FileEdit records), stored beside the
        # turn: diagnostics anchor on them. Turns stored before this have none; the back-fill named
        # in `backfills` derives theirs from their stored text once (checkpoint.backfills).
        "turn edits",
        (
            """
            CREATE TABLE turn_edits (
                turn_id TEXT NOT NULL REFERENCES turns(id),
                n INTEGER NOT NULL,                     -- its place among the turn's edits
                session_id TEXT NOT NULL REFERENCES sessions(id),
                path TEXT NOT NULL,
                text TEXT NOT NULL,
                PRIMARY KEY (turn_id, n)
            ) WITHOUT ROWID
            """,
            "CREATE INDEX turn_edits_session ON turn_edits (session_id)",
            "CREATE TABLE backfills (name TEXT PRIMARY KEY) WITHOUT ROWID",
            "INSERT INTO backfills (name) SELECT 'turn_edits' WHERE EXISTS (SELECT 1 FROM turns)",
        ),
    ),
    Migration(
        # The longest line of a file skipped as too long (0: none): once the limit admits it, the file
        # is read again from the start, so a raised limit reads what the lower one skipped. A file with
        # skips from before (their sizes unknown) is read again once.
        "longest skipped line",
        (
            "ALTER TABLE files ADD COLUMN longest_skipped INTEGER NOT NULL DEFAULT 0",
            "UPDATE files SET longest_skipped = 1 WHERE drops LIKE '%\"oversized_line\"%'",
        ),
    ),
    Migration(
        # A workspace is a repository (checkpoint.repository): every folder a session worked in is
        # recorded with its workspace (the git common directory, else the folder), a session with its
        # first folder's, and items move to their session's workspace, so that two worktrees of a clone,
        # and a repository's subfolders, share their items. A folder gone from the disk is its own.
        "workspaces are repositories",
        (
            "ALTER TABLE session_cwds ADD COLUMN workspace TEXT",
            "ALTER TABLE sessions ADD COLUMN workspace TEXT",
            "CREATE INDEX session_cwds_workspace ON session_cwds (workspace)",
        ),
        derive=derive_workspaces,
    ),
    Migration(
        # Decision records shared through the repository (checkpoint.team): an item's origin ('local':
        # captured here; 'shared': read from a record) and the record's path, relative to its worktree
        "shared decision records",
        (
            "ALTER TABLE items ADD COLUMN origin TEXT NOT NULL DEFAULT 'local'",
            "ALTER TABLE items ADD COLUMN record TEXT",
            "CREATE INDEX items_record ON items (workspace, record) WHERE record IS NOT NULL",
        ),
    ),
    Migration(
        # An item that reads as a planted instruction to an agent (checkpoint.extract.held) is held:
        # agents are shown it only once the user accepts it. Items stored before this are judged once
        # by the back-fill named in `backfills` (checkpoint.backfills). And the items each run's
        # validation dropped, by reason ({"tool_output_only": n}).
        "held items",
        (
            "ALTER TABLE items ADD COLUMN held INTEGER NOT NULL DEFAULT 0",
            "INSERT INTO backfills (name) SELECT 'item_holds' WHERE EXISTS (SELECT 1 FROM items)",
            "ALTER TABLE runs ADD COLUMN items_dropped TEXT NOT NULL DEFAULT '{}'",
        ),
    ),
    Migration(
        # A record's status is its author's claim, not this user's: `accepted_here` says this user
        # accepted the item (`checkpoint accept`, the editor), the only acceptance that releases a held
        # item to agents; `record_by` is who the record says decided (its decision-makers), shown
        # with the claim. Items accepted before this were accepted here, unless a record said so. Items
        # known only from a record were never judged by the hold rule: held (-1, "not judged yet") until
        # the next sync of their repository judges them (Store.sync_shared).
        "record trust",
        (
            "ALTER TABLE items ADD COLUMN accepted_here INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE items ADD COLUMN record_by TEXT",
            "UPDATE items SET accepted_here = 1 WHERE state = 'accepted' AND session_id NOT LIKE 'team:%'",
            "UPDATE items SET held = -1 WHERE session_id LIKE 'team:%'",
        ),
    ),
    Migration(
        # Each item's statement as an agent is shown it (checkpoint.shown_text), rendered by the writer
        # under the key of its redactor, for the pre-edit hook's narrow path (standard library only).
        # A statement that changes, or an item deleted, takes its line with it.
        "agent lines",
        (
            """
            CREATE TABLE agent_lines (
                item_id TEXT PRIMARY KEY,
                redaction TEXT NOT NULL,  -- shown_text.redaction_key of the redactor that rendered it
                source TEXT NOT NULL,  -- shown_text.source_digest of the statement it was rendered from
                statement TEXT NOT NULL,
                session TEXT NOT NULL,  -- the session's short id as shown
                item TEXT NOT NULL  -- the item's id as shown
            ) WITHOUT ROWID
            """,
            """
            CREATE TRIGGER agent_lines_statement AFTER UPDATE OF statement ON items BEGIN
                DELETE FROM agent_lines WHERE item_id = old.id;
            END
            """,
            """
            CREATE TRIGGER agent_lines_item_gone AFTER DELETE ON items BEGIN
                DELETE FROM agent_lines WHERE item_id = old.id;
            END
            """,
        ),
    ),
    Migration(
        # The change feed: every write to what a session's counts are read from (session_counts)
        # raises that session's number in one sequence, by triggers, whichever process writes. A
        # reader keeps the counts it read and re-reads only `WHERE seq > last` (status_counts.py):
        # the daemon's status costs what changed, not the whole history. Writers hold the write lock,
        # so max(seq) + 1 only grows. And the indexes that re-read asks for.
        "session changes",
        (
            """
            CREATE TABLE session_changes (
                session_id TEXT PRIMARY KEY,
                seq INTEGER NOT NULL
            ) WITHOUT ROWID
            """,
            "CREATE INDEX session_changes_seq ON session_changes (seq)",
            "CREATE INDEX files_session ON files (session_id) WHERE session_id IS NOT NULL",
            "CREATE INDEX problems_session ON problems (session_id) WHERE session_id IS NOT NULL",
            "CREATE INDEX chunks_session_failed ON chunks (session_id) WHERE state = 'failed'",
            *(trigger for table, key in _COUNTED for trigger in _change_triggers(table, key)),
        ),
    ),
    Migration(
        # Checks on items (checkpoint.checks): what code breaks a decision or constraint, as data (an
        # ast-grep rule, a name used, or a re2 regex; JSON). Proposed until accepted (or its item is);
        # it acts by its item's fate: a superseded or dismissed item's checks retire with it.
        "item checks",
        (
            """
            CREATE TABLE checks (
                id TEXT PRIMARY KEY,           -- checks.model.check_id: the item and the check's text
                -- forgetting a session deletes the items only it said: their checks go with them
                item_id TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
                rule TEXT NOT NULL,            -- the check as JSON
                state TEXT NOT NULL DEFAULT 'proposed',  -- proposed, accepted, dismissed
                said_by TEXT NOT NULL,         -- model, heuristic or user
                created_at REAL NOT NULL
            )
            """,
            "CREATE INDEX checks_item ON checks (item_id)",
        ),
    ),
    Migration(
        # An item that is an order about the task at hand ("when you're done", "for now": `lasting` 0,
        # checkpoint.extract.one_off) stays in its session and reaches no later session, reminder, MCP
        # answer (unless asked for) or shared record. Items from before were all taken as lasting.
        "one-off items",
        ("ALTER TABLE items ADD COLUMN lasting INTEGER NOT NULL DEFAULT 1",),
    ),
    Migration(
        # Where each of an item's files came from (checkpoint.extract.item_files): {path: "statement" |
        # "edit" | "statement+edit"}, so the editor anchors a named file by name and an edited one by
        # what was written. Items from before know none ({}): their files are as they were.
        "item file sources",
        ("ALTER TABLE items ADD COLUMN file_sources TEXT NOT NULL DEFAULT '{}'",),
    ),
    Migration(
        # An open question answered later (checkpoint.store.answered): the item that answers it and the
        # turn that says the answer (its citation). NULL: still open.
        "answered questions",
        (
            "ALTER TABLE items ADD COLUMN answered_by TEXT",
            "ALTER TABLE items ADD COLUMN answered_turn TEXT",
        ),
    ),
    Migration(
        # Recall of everything said (checkpoint.store.said): a contentless trigram index over the user's
        # and assistant's turns, filled on search (never on the scan's path), per session from the last
        # seq indexed. Keyed by said_rows.row (VACUUM may renumber the turns' rowids). A forgotten
        # session's turns leave the index with them.
        "said search",
        (
            "CREATE TABLE said_rows (row INTEGER PRIMARY KEY, turn_id TEXT NOT NULL UNIQUE)",
            "CREATE TABLE said_progress (session_id TEXT PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID",
            "CREATE VIRTUAL TABLE said_search USING fts5(text, content = '', tokenize = 'trigram')",
            """
            CREATE TRIGGER turns_said_delete AFTER DELETE ON turns BEGIN
                INSERT INTO said_search (said_search, rowid, text)
                SELECT 'delete', r.row, old.text FROM said_rows r WHERE r.turn_id = old.id;
                DELETE FROM said_rows WHERE turn_id = old.id;
                DELETE FROM said_progress WHERE session_id = old.session_id;
            END
            """,
        ),
    ),
    Migration(
        # The change feed covers the folders sessions worked in too (session_cwds): the daemon keeps
        # which sessions belong to the workspace and reads again only those a write named
        # (status_scope.py), where it matched every folder of the history on every status.
        "session changes of folders",
        _change_triggers("session_cwds", "session_id"),
    ),
)


class Identity(Enum):
    OURS = "ours"  # our application id
    EMPTY = "empty"  # no schema at all (a new or empty file): ours to make
    EARLIER = "earlier"  # made by a Checkpoint from before the application id: no id, our tables
    FOREIGN = "foreign"  # anything else: never migrated, never switched to WAL, never written


_CREATED_TABLE = re.compile(r"^\s*CREATE\s+(?:VIRTUAL\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.IGNORECASE)


def tables_made(version: int, migrations: Sequence[Migration] = MIGRATIONS) -> set[str]:
    """The tables the first `version` migrations create (none of them drops one)."""
    return {m.group(1) for migration in migrations[:version] for statement in migration.statements
            if (m := _CREATED_TABLE.match(statement))}


def identify(conn: sqlite3.Connection) -> Identity:
    """Whose database this is, read without writing a byte. A database from before the application
    id is recognised by the tables its user_version says it has: every one our migrations up to that
    version made (sessions, turns, chunks, items, drops, runs, ... at version 1 already)."""
    # The three reads in one read transaction: a database another connection is making right now
    # (its migrations commit at once) is seen before or after, never as tables without their id.
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        application_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        if own:
            conn.execute("COMMIT")
    if application_id == APPLICATION_ID:
        return Identity.OURS
    if application_id == 0 and version == 0 and not tables:
        return Identity.EMPTY
    if application_id == 0 and 0 < version <= len(MIGRATIONS) and tables_made(version) <= tables:
        return Identity.EARLIER
    return Identity.FOREIGN


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Apply the migrations the database has not had yet, in one transaction (BEGIN IMMEDIATE: two
    processes opening a new database do not both apply them). Returns the version reached. A database
    already current is only read: no write lock is waited for when there is nothing to write."""
    if (int(conn.execute("PRAGMA user_version").fetchone()[0]) >= len(migrations)
            and int(conn.execute("PRAGMA application_id").fetchone()[0]) == APPLICATION_ID):
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        for number, migration in enumerate(migrations[version:], start=version + 1):
            for statement in migration.statements:
                conn.execute(statement)
            if migration.derive is not None:
                migration.derive(conn)
            conn.execute(f"PRAGMA user_version={number}")
        if int(conn.execute("PRAGMA application_id").fetchone()[0]) != APPLICATION_ID:
            conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return max(version, len(migrations))
