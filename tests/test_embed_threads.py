"""The embedding model runs torch on one thread unless told otherwise (clearside/embed.py): a second OpenMP team
beside llama.cpp's slows the embedded model's decoding. Each case runs in a fresh interpreter, since torch's
thread count is set once, before its first parallel work."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.model

SCRIPT = """
import torch
from clearside import embed
from clearside.errors import ConfigError
try:
    vectors = embed.encode(["Cities should ban cars from their centres.", "Cars bring shoppers."])
except ConfigError as exc:
    print("ERROR", exc)
else:
    print("THREADS", torch.get_num_threads(), vectors.shape)
"""


def run(env_value: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "CLEARSIDE_EMBED_THREADS"}
    if env_value is not None:
        env["CLEARSIDE_EMBED_THREADS"] = env_value
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize(("value", "threads"), [(None, 1), ("2", 2)])
def test_torch_runs_on_the_threads_asked_for_one_by_default(value, threads):
    assert run(value) == f"THREADS {threads} (2, 384)"


@pytest.mark.parametrize("bad", ["two"])
def test_a_bad_thread_count_names_the_variable_and_the_fix(bad):
    line = run(bad)
    assert line.startswith("ERROR CLEARSIDE_EMBED_THREADS=") and "unset it" in line
