"""Quality review: debates run and scored (``scored``), metrics and references, suites, regression batches and model
comparisons (their workflows and the jobs a page holds), paired statistics and shareable reports."""
