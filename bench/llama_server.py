"""llama.cpp's own ``llama-server``, for the benches that need an endpoint which batches requests itself.

:func:`ensure_binary` builds it once from the llama.cpp sources vendored in the sdist of the installed
llama-cpp-python (the same llama.cpp the embedded provider runs), into ``bench/.cache/llama-server/`` (gitignored):

1. ``pip download --no-binary :all: --no-deps llama-cpp-python==<installed version>`` (from PyPI);
2. the sdist extracted there;
3. ``cmake -S <sdist>/vendor/llama.cpp -B build-<version>`` with :data:`CMAKE_OPTIONS`: a Release build of the
   server alone, portable (``GGML_NATIVE=OFF``), static, with no web UI, no OpenSSL and nothing fetched from the
   internet (the UI's prebuilt assets are not downloaded; ``LLAMA_CURL`` is gone from this llama.cpp, which
   downloads through cpp-httplib, unused here);
4. ``cmake --build build-<version> --target llama-server -j2``: about 10 minutes on 2 cores.

Nothing of llama.cpp is committed: only this script. :func:`llama_server` then runs it on the embedded GGUF
(``clearside.providers.embedded.default_model_path()``) on a free 127.0.0.1 port with ``--parallel 2`` slots of
4096 tokens each (continuous batching: requests in flight at once are decoded in one batch), ``--threads 2``
(with ``OMP_WAIT_POLICY=PASSIVE``: spinning threads stall each other on a busy 2-core machine), waits for
``GET /health`` and stops it on exit.

    with llama_server() as server:
        OpenAIProvider("", base_url=server.base_url)

Build ahead of a bench run:  python bench/llama_server.py [--jobs 2]   (prints the binary's path)
Serve it by hand:            python bench/llama_server.py --serve       (Ctrl-C stops)
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clearside.providers.embedded import default_model_path  # noqa: E402

CACHE = Path(__file__).resolve().parent / ".cache" / "llama-server"
PACKAGE = "llama-cpp-python"
PARALLEL = 2  # server slots: requests decoded together
SLOT_CONTEXT = 4096  # tokens per slot (the two python -m llama_cpp.server backends had --n_ctx 4096 each)
THREADS = 2
CMAKE_OPTIONS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=OFF",  # portable: no -march=native
    "-DBUILD_SHARED_LIBS=OFF",  # one self-contained binary
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_UI=OFF",  # no npm build of the web UI
    "-DLLAMA_USE_PREBUILT_UI=OFF",  # and no download of a prebuilt one: the server runs without a UI
    "-DLLAMA_OPENSSL=OFF",  # no HTTPS: it serves 127.0.0.1 and downloads nothing
]


def installed_version() -> str:
    return importlib.metadata.version(PACKAGE)


def binary_path(version: str | None = None) -> Path:
    return CACHE / f"build-{version or installed_version()}" / "bin" / "llama-server"


def available(version: str | None = None) -> Path | None:
    """The built binary, if it is there (nothing is built)."""
    path = binary_path(version)
    return path if path.is_file() and os.access(path, os.X_OK) else None


def _run(command: list[str], log: Path, what: str) -> None:
    with open(log, "wb") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False)
    if done.returncode:
        tail = log.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"{what} failed ({' '.join(command)}), exit {done.returncode}; log {log}:\n{tail}")


def ensure_binary(*, jobs: int = 2, say: Callable[[str], None] = print) -> Path:
    """The llama-server binary for the installed llama-cpp-python, built first if it is not there yet (see the
    module's docstring). Raises RuntimeError naming the failed step and its log."""
    version = installed_version()
    if found := available(version):
        return found
    if not (shutil.which("cmake") and (shutil.which("c++") or shutil.which("g++"))):
        raise RuntimeError("building llama-server needs cmake and a C++ compiler (apt-get install cmake g++)")
    CACHE.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    source = CACHE / f"llama_cpp_python-{version}"
    if not (source / "vendor" / "llama.cpp" / "CMakeLists.txt").is_file():
        sdist = CACHE / f"llama_cpp_python-{version}.tar.gz"
        if not sdist.is_file():
            say(f"downloading the {PACKAGE} {version} sdist from PyPI into {CACHE}")
            _run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
                  f"{PACKAGE}=={version}", "-d", str(CACHE)], CACHE / "download.log", "pip download")
        if not sdist.is_file():
            raise RuntimeError(f"pip download left no {sdist.name} in {CACHE}")
        say(f"extracting {sdist.name}")
        with tarfile.open(sdist) as archive:
            archive.extractall(CACHE, filter="data")
    build = CACHE / f"build-{version}"
    say(f"configuring llama.cpp ({source.name}/vendor/llama.cpp) into {build}")
    _run(["cmake", "-S", str(source / "vendor" / "llama.cpp"), "-B", str(build), *CMAKE_OPTIONS],
         CACHE / "configure.log", "cmake configure")
    say(f"building llama-server with -j{jobs} (about 10 minutes on 2 cores); log {CACHE / 'build.log'}")
    _run(["cmake", "--build", str(build), "--target", "llama-server", f"-j{jobs}"], CACHE / "build.log",
         "cmake build")
    if not (found := available(version)):
        raise RuntimeError(f"the build finished but left no {binary_path(version)}")
    say(f"built {found} in {time.monotonic() - started:.0f} s")
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    """A running llama-server: ``base_url`` for the OpenAI-compatible provider."""

    url: str
    process: subprocess.Popen
    log: Path
    parallel: int
    threads: int
    slot_context: int

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def describe(self) -> str:
        return (f"llama-server at {self.base_url}: {self.parallel} slots of {self.slot_context} tokens, "
                f"{self.threads} threads, continuous batching")


def command(binary: Path, port: int, *, model: Path, parallel: int, threads: int, slot_context: int) -> list[str]:
    return [str(binary), "--host", "127.0.0.1", "--port", str(port), "--model", str(model), "--alias", model.stem,
            "--parallel", str(parallel), "--ctx-size", str(parallel * slot_context),  # split evenly across slots
            "--threads", str(threads), "--threads-batch", str(threads), "--cont-batching", "--no-webui"]


def wait_healthy(url: str, process: subprocess.Popen, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama-server exited with {process.returncode}:\n"
                               f"{log.read_text(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as reply:
                if reply.status == 200 and json.loads(reply.read() or b"{}").get("status") == "ok":
                    return
        except (OSError, ValueError):  # not listening yet, or 503 while the model loads
            pass
        time.sleep(0.3)
    raise RuntimeError(f"llama-server did not report healthy within {timeout:g} s:\n"
                       f"{log.read_text(errors='replace')[-3000:]}")


@contextlib.contextmanager
def llama_server(*, binary: Path | None = None, model: Path | None = None, parallel: int = PARALLEL,
                 threads: int = THREADS, slot_context: int = SLOT_CONTEXT, timeout: float = 120.0,
                 log: Path | None = None) -> Iterator[Server]:
    """llama-server on the embedded GGUF on a free 127.0.0.1 port, healthy; stopped on exit. ``binary``: the
    built one by default (built first if missing: :func:`ensure_binary`)."""
    binary = binary or ensure_binary()
    port = free_port()
    log = log or Path(os.environ.get("TMPDIR", "/tmp")) / f"clearside-llama-server-{port}.log"
    args = command(binary, port, model=model or default_model_path(), parallel=parallel, threads=threads,
                   slot_context=slot_context)
    # OpenMP threads that sleep at ggml's barriers instead of spinning: on a busy 2-core machine (load 6-7) 2 threads
    # spinning decoded 1.1 tokens/s for one request (1 thread: 69), 2 passive threads 101 (two requests: 41 each)
    env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    with open(log, "wb") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process, log, timeout)
        yield Server(url, process, log, parallel, threads, slot_context)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="parallel compile jobs (default 2)")
    parser.add_argument("--serve", action="store_true", help="then run it on the embedded GGUF until Ctrl-C")
    args = parser.parse_args(argv)
    try:
        binary = ensure_binary(jobs=args.jobs)
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(binary)
    if args.serve:
        with llama_server(binary=binary) as server:
            print(server.describe(), f"(log {server.log}); Ctrl-C stops", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                server.process.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
