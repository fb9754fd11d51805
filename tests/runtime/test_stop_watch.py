"""A server that began to stop ends within seconds even when its shutdown hangs (runtime.exit_after_stop): the
dashboard's web server waits without a limit for every open connection to close, and once kept a stopped dashboard
running for over a minute."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

HANGING = textwrap.dedent("""
    import sys, threading
    from pathlib import Path
    from clearside import runtime
    flag = Path(sys.argv[1])
    threading.Thread(target=threading.Event().wait, name="a step that never ends").start()  # not a daemon
    runtime.exit_after_stop(flag.exists, grace=float(sys.argv[2]), poll=0.05)
    print("serving", flush=True)
    threading.Event().wait()  # the main thread's shutdown hangs: it never ends
""")


def test_a_process_that_began_to_stop_ends_after_its_grace_though_its_main_thread_hangs(tmp_path):
    flag = tmp_path / "stopping"
    proc = subprocess.Popen([sys.executable, "-c", HANGING, str(flag), "1.0"], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout.readline().strip() == "serving"
        time.sleep(1.5)
        assert proc.poll() is None, "nothing ends it before it begins to stop"
        flag.touch()  # the server begins to stop
        began = time.monotonic()
        status = proc.wait(20)
        took = time.monotonic() - began
    finally:
        if proc.poll() is None:
            proc.kill()
    assert status == 0, "a server stopped on request ends with status 0"
    assert 1.0 <= took < 15, f"ended {took:.1f} s after it began to stop, its grace being 1 s"
