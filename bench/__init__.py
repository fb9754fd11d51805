"""ClearSide's benchmarks: each module is a script with its own docstring (``python bench/NAME.py``), and
``python -m bench`` runs those the benchmark report lists, one after the other (bench/run_all.py)."""
