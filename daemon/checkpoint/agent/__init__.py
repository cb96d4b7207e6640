"""The agent front ends: what Checkpoint captured, handed back to the coding agent.

- `mcp_server`: `checkpoint mcp`, a stdio MCP server (the official SDK) with read-only tools over the
  store, for Claude Code, Codex or any MCP client;
- `hooks`: `checkpoint hook EVENT` for Claude Code's hooks: the workspace's current decisions as
  session-start context, and a capture of the session asked for when it stops, compacts or ends;
- `capture`: the detached worker a hook starts to capture one session (at most one per session);
- `answers`, `context`: the shapes both hand out (JSON with provenance; plain sentences), bounded;
- `problems`: where a hook's own errors are recorded (it must print nothing) for `checkpoint status`.

Like the CLI and the daemon they are thin shells over the run layer and the store. Nothing below the
front ends imports them, and the CLI loads them only for their own commands: `checkpoint scan` and
`status` never load the MCP SDK (tests/unit/test_import_rules.py).
"""
