"""Where a shared item comes from, in words a person reads: "shared by Alice in docs/decisions/….md",
instead of the team session's id (`team:/path`) and a transcript line it never had."""

from __future__ import annotations

import os
import re

from checkpoint.model import TEAM_SESSION_PREFIX, ItemRecord
from checkpoint.repository import repository_of
from checkpoint.team.records import decision_makers_in

_EMAIL = re.compile(r"\s*<[^>]*>")


def is_team_item(item: ItemRecord) -> bool:
    """Known only from a decision record of the repository (no session of this machine said it)."""
    return item.session_id.startswith(TEAM_SESSION_PREFIX)


def record_file(item: ItemRecord) -> str | None:
    """The item's decision record, absolute, when this machine has the repository it is in."""
    if not item.record or not item.cwd:
        return None
    root = item.cwd if is_team_item(item) else getattr(repository_of(item.cwd), "root", None)
    return os.path.join(root, item.record) if root else None


def stored_shared_by(item: ItemRecord) -> str | None:
    """Who shared it as the sync stored it (`record_by`), without e-mail addresses; no record is read."""
    if not item.record_by:
        return None
    return _EMAIL.sub("", item.record_by).strip() or item.record_by


def shared_by(item: ItemRecord) -> str | None:
    """The names in the record's decision-makers, without their e-mail addresses ("Alice"), or None:
    as the sync stored them (`record_by`, redacted); read from the record only for an item stored
    before they were kept."""
    if item.record_by:
        return stored_shared_by(item)
    path = record_file(item)
    try:
        with open(path or "", encoding="utf-8") as f:
            makers = decision_makers_in(f.read(64 << 10))
    except (OSError, UnicodeDecodeError):
        return None
    if not makers:
        return None
    return _EMAIL.sub("", makers).strip() or makers


def shared_phrase(item: ItemRecord) -> str:
    """"shared by Alice in docs/decisions/2026-03-12-use-sqlite-1a2b3c4d.md" (or "shared in …")."""
    who = shared_by(item)
    return f"shared by {who} in {item.record}" if who else f"shared in {item.record}"
