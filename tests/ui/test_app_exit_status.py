"""A program that runs the dashboard's pages itself (AppTest under pytest, a notebook) keeps its own exit status:
only the process ``streamlit run`` serves the dashboard from ends at once when stopped, without waiting for its
running workflows (tests/ui/test_browser_recovery.py stops a real one with SIGTERM)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from app_kit import APP

PROGRAM = textwrap.dedent(f"""
    import sys
    from streamlit.testing.v1 import AppTest
    from clearside import runtime

    at = AppTest.from_file({APP!r}, default_timeout=60).run()
    assert not at.exception, at.exception
    assert runtime.current_host() is not None, "the page made this process a runtime host"
    sys.exit(3)
""")


def test_a_program_running_the_pages_keeps_its_exit_status(tmp_path):
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=180,
                          env={**{k: v for k, v in os.environ.items() if k != "DATABASE_URL"},
                               "CLEARSIDE_DATA": str(tmp_path)})
    assert done.returncode == 3, done.stderr[-3000:]
