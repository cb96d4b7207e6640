"""Team memory through git: a decision is shared by writing a decision record into the repository
(`records`: the file's format; `share`: writing, updating and removing one), and every clone,
worktree and teammate reads the records of the repository it works in (`sync`: records into the
store, as items of the workspace). Nothing leaves the machine except through git: no server, no
sync service; Checkpoint writes the file and never commits or pushes.
"""
