"""Hypothesis state machines over the engine's invariants, and the mutations they must catch."""
