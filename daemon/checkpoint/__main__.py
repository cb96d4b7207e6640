"""`python -m checkpoint ...`: the same as the `checkpoint` console script."""

from checkpoint.startup import main

raise SystemExit(main())
