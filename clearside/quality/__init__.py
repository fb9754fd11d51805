"""Quality review: debates run and scored (``scored``), metrics and references, suites, regression batches and model
comparisons (their workflows and the jobs a page holds), paired statistics and shareable reports.

A regression batch: ``batch`` is the model (the suites, the gates, the batches saved in the store), which
``versions`` (the versions a run is made with), ``compare_runs`` (two batches run by run), ``baseline`` (blessing
and its history) and ``regress`` (a batch's report) build on; ``workflow`` runs a batch on the runtime and ``job``
holds it for a page.
"""
