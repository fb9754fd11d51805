"""The jobs a server holds: :class:`JobRegistry` keeps them by id, so a rerun or a page switch re-attaches to the
same one. Nothing here imports Streamlit."""

from __future__ import annotations

import threading
from typing import Any


class JobRegistry:
    """Process-wide jobs by id, so a rerun or a page switch re-attaches to the same job."""

    def __init__(self) -> None:
        self._jobs: dict[str, Any] = {}
        self._lock = threading.Lock()

    def add(self, job: Any) -> Any:
        with self._lock:
            self._jobs[job.id] = job
        return job

    def get(self, job_id: str | None) -> Any:
        with self._lock:
            return self._jobs.get(job_id) if job_id else None
