"""Decisions that check themselves: a check on an item says what code breaks it (model.py), found by
ast-grep or re2 (engine.py), derived from what a sentence names (derive.py), gathered from the store and
the repository's decision records (active.py) and run over a repository (run.py, report.py)."""
