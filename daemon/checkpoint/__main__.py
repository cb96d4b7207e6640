"""`python -m checkpoint ...`: the same as the `checkpoint` console script."""

from checkpoint.cli import main

raise SystemExit(main())
