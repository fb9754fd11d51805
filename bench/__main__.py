"""``python -m bench [--full] [--only NAME ...]``: the benchmark report (bench/run_all.py)."""

from bench.run_all import main

raise SystemExit(main())
