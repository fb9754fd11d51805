"""Static mode: one question, four agents (orchestrator, pro, con, moderator), one v1 document.

The engine (``clearside.engine``), its agents and its worker (``clearside.jobs``) sit at the top level;
this package holds what the static mode adds around them: saving a run to the store as it lands and
rebuilding it to resume (``recorder``; its worker and the resume and re-run the mode registry
uses are in ``clearside.jobs``), and reading and writing a debate as a v1 document file (``exchange``).
"""
