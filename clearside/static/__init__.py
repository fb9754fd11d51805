"""Static mode: one question, four agents (orchestrator, pro, con, moderator), one v1 document.

The agents (``clearside.agents``) and the shared base sit at the top level; this package holds the mode:
the debate as data (``run``) and the pipeline that fills it (``engine``), its workflow on the runtime
(``workflow``) and the job a page or command holds (``job``), saving a run as it lands and rebuilding it
to resume (``recorder``), the focused re-runs (``focused``, ``remap``, ``swap``, ``personas``) and reading
and writing a debate as a v1 document file (``exchange``). ARCHITECTURE.md maps every module.
"""
