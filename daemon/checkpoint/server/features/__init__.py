"""The daemon's features, one package each (esbonio's `server/features/`): built in dependency order
by `server/app.py`, hooked into the server through `server/feature.py`, telling each other news on the
event bus (`server/events.py`). A feature holds what only it uses (the diagnostics their file reads, the
extraction its extractor slot, the status its workspace-session deltas); no feature imports another at
run time (tests/unit/test_feature_wiring.py checks)."""
