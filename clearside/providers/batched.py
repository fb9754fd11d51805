"""Continuous batching for the embedded model: concurrent calls decoded together in one llama.cpp context.

llama.cpp can decode several sequences in one batch (each token carries its sequence id), and on a small
model a batch of two tokens costs little more than one. So the embedded provider does not run pro and con
(or persona cases, or several challenges) one after the other: each call becomes a :class:`Job` on a
sequence of one shared context, and every decoding step feeds one token of every running job to one
``llama_decode``. Each job keeps its own grammar and sampler, so its output obeys its own schema, and a job
that fails or is cancelled (its ``on_delta`` raised) ends alone: its neighbours go on.

A sequence keeps the tokens it evaluated after its job ends. A new job takes the free sequence that shares
the longest prefix with its prompt (the same agent's previous turn, most often) and evaluates only the rest;
when another sequence, busy or not, shares a longer prefix (pro's prompt when con starts: the preamble, the
proposition and the sources come first in both), its evaluated cells are copied into the job's sequence
(``llama_memory_seq_cp``) instead of being evaluated again. ``reused`` tells how many prompt tokens were not
evaluated.

Each sequence has a KV stream of its own (``kv_unified`` off), and attention is computed without flash
attention. On a CPU a token's attention runs over every cell of its stream, masked or not: with one unified
pool, a moderator call attended over pro's, con's and its own cells alike, and decoding slowed from 134 to
42 tokens/s once the other sequences held 2,000 tokens each. Separate streams keep a call's attention to its
own tokens (78 tokens/s in the same state), and plain attention beats flash attention on this model at any
length a debate reaches (1,500 cells: 79 against 61 tokens/s decoding, 344 against 403 tokens/s on prompts).
A cross-stream copy copies the donor's whole stream (about 24 MB a 1,000 cells, done at the next decode),
then the job's sequence drops what lies past the shared prefix.

Everything here runs on the one llama thread (:func:`clearside.providers.embedded.on_llama_thread`): the
thread admits jobs (evaluating their prompts) between steps and steps while any job runs.
"""

from __future__ import annotations

import codecs
import ctypes
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import llama_cpp

from .grammar_first import GrammarFirstSampler
from .llama_private import internals, sampler_chain

# How many calls decode together at most; more wait for a free place (CLEARSIDE_BATCH). On 2 CPU cores a batch
# of two tokens costs as much as two single tokens (bench/batching.py: 1.0x raw, 1.0-1.17x in the pipeline), so
# the default is 1: calls decode one at a time, in order of arrival, and still share their evaluated prefixes
# and prefills. On more cores or a GPU, where a batch costs little more than one token, raise it.
DEFAULT_WIDTH = 1
DEFAULT_SEQUENCES = 4  # sequences kept (each up to n_ctx tokens): the width plus room for warm prefixes
FLASH_ATTENTION = 0  # llama.cpp's LLAMA_FLASH_ATTN_TYPE_DISABLED: faster decoding on CPU (see above)
# Prompt tokens a prefill evaluates a step, beside the running calls (they slow down, never stop) or alone. A call
# that arrives waits for the step in flight (llama.cpp's decode cannot be cut short), so this is also its longest
# wait. Prompt evaluation runs at the same rate in any chunk here (about 440 tokens/s on 2 cores from 32 to 512
# tokens a step), so a small chunk costs nothing: a whole batch (512 tokens, 1.2 s) made the turn that came right
# after the prefills were handed over wait for it (bench/live_embedded.py: time to first token with prefill slower
# than without, median 1.04 against 0.88 s).
PREFILL_CHUNK = 32


@dataclass
class Sequence:
    """One sequence of the shared context: the tokens its KV cells hold, in order from position 0."""

    id: int
    tokens: list[int] = field(default_factory=list)
    agent: str = ""
    busy: bool = False
    used: float = 0.0


@dataclass
class Job:
    """One call: its prompt tokens, its own sampler, and where its text goes."""

    prompt: list[int]
    sampler: Any  # GrammarFirstSampler or llama-cpp-python's LlamaSampler: sample(ctx, idx) accepts the token
    max_tokens: int
    agent: str = ""
    stop: tuple[str, ...] = ()
    on_delta: Callable[[str], None] | None = None
    future: Future = field(default_factory=Future)
    seq: Sequence | None = None
    reused: int = 0
    generated: int = 0
    text: list[str] = field(default_factory=list)
    next_token: int = -1  # sampled, not yet evaluated
    started: float = 0.0
    first: float = 0.0
    decoder: Any = field(default_factory=lambda: codecs.getincrementaldecoder("utf-8")(errors="replace"))
    prefill: bool = False  # only evaluate the prompt, a few tokens a step, for a call expected soon


@dataclass
class Result:
    text: str
    prompt_tokens: int
    reused: int
    completion_tokens: int
    seconds: float
    first_token_seconds: float


def common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class Batcher:
    """A context of ``sequences`` sequences of up to ``n_ctx`` tokens each, decoding ``width`` jobs at once."""

    def __init__(self, model: internals.LlamaModel, *, n_ctx: int, n_threads: int, width: int = DEFAULT_WIDTH,
                 sequences: int = DEFAULT_SEQUENCES, n_batch: int = 512,
                 flash_attention: int = FLASH_ATTENTION) -> None:
        self.model = model
        self.vocab = model.vocab
        self.n_ctx = n_ctx
        self.width = max(1, width)
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = n_ctx * sequences
        params.n_batch = params.n_ubatch = n_batch
        params.n_seq_max = sequences
        params.kv_unified = False  # a stream per sequence: a call attends over its own cells only (see above)
        params.flash_attn_type = flash_attention  # -1 auto, 0 off, 1 on
        params.n_threads = params.n_threads_batch = n_threads
        self.ctx = internals.LlamaContext(model=model, params=params, verbose=True)
        self.memory = llama_cpp.llama_get_memory(self.ctx.ctx)
        self.n_batch = n_batch
        self.batch = llama_cpp.llama_batch_init(n_batch, 0, 1)
        self.sequences = [Sequence(i) for i in range(sequences)]
        self.running: list[Job] = []
        self.waiting: list[Job] = []
        self.filling: list[Job] = []  # prefills under way
        self.piece = ctypes.create_string_buffer(256)
        self.steps = 0
        self.widest = 0  # the most calls decoded in one step
        self.reused = 0  # prompt tokens not evaluated because a sequence held them
        self.prefilled = 0  # prompt tokens evaluated ahead of their call
        self.peak_tokens = 0  # the most tokens one sequence has held

    # ---- admission (on the llama thread) ----

    def submit(self, job: Job) -> None:
        """Queue ``job``; it starts as soon as a place is free. Its future carries a :class:`Result`."""
        if len(job.prompt) >= self.n_ctx:
            raise ValueError(f"Requested tokens ({len(job.prompt)}) exceed context window of {self.n_ctx}")
        job.max_tokens = max(1, min(job.max_tokens, self.n_ctx - len(job.prompt)))
        job.started = time.perf_counter()
        self.waiting.append(job)
        self._admit()

    def prefill(self, prompt: list[int], agent: str) -> Job | None:
        """Evaluate ``prompt`` ahead of a call expected soon, in a free sequence, a few tokens a step alongside the
        running calls (so its tokens are not evaluated while the user waits for that call's first token). A
        prefill gives way: the call it warms, or a call that finds no free sequence, stops it where it got to.
        None when no sequence is free or the tokens are already held."""
        free = [s for s in self.sequences if not s.busy]
        if not free or len(prompt) >= self.n_ctx or not prompt:
            return None
        if max(common_prefix(s.tokens, prompt) for s in self.sequences) >= len(prompt):
            return None
        job = Job(prompt=prompt, sampler=None, max_tokens=0, agent=agent, prefill=True)
        job.started = time.perf_counter()
        job.seq = self._place(job, free, keep_all=True)
        job.seq.busy, job.seq.agent, job.seq.used = True, agent, time.monotonic()
        self.filling.append(job)
        return job

    def _admit(self) -> None:
        while self.waiting and len(self.running) < self.width:
            coming = self.waiting[0]
            for job in [f for f in self.filling if f.agent == coming.agent]:
                self._finish(job)  # it was warming this very call: the call takes over its sequence
            free = [s for s in self.sequences if not s.busy]
            if not free and self.filling:
                self._finish(self.filling[0])  # a call needs a place: a prefill stops where it got to
                free = [s for s in self.sequences if not s.busy]
            if not free:
                return
            job = self.waiting.pop(0)
            if job.future.cancelled():
                continue
            try:
                self._start(job, free)
            except BaseException as exc:  # this job alone fails; its sequence is left consistent
                self._finish(job, exc)

    def _place(self, job: Job, free: list[Sequence], keep_all: bool = False) -> Sequence:
        """The free sequence to run ``job`` on, holding the longest evaluated prefix of its prompt it can get.
        ``keep_all``: every prompt token may be reused (a prefill samples nothing, so needs no logits)."""
        def extends(seq: Sequence) -> bool:  # the prompt goes on from all the sequence holds: nothing is lost
            return bool(seq.tokens) and common_prefix(seq.tokens, job.prompt) == len(seq.tokens)

        growing = [seq for seq in free if extends(seq)]
        if growing:
            seq = max(growing, key=lambda s: len(s.tokens))
        else:  # the agent's own sequence (its conversation restarted), else an empty one, else the least recent:
            # never another agent's conversation while an older or empty sequence is there to take
            seq = min(free, key=lambda s: (s.agent != job.agent, bool(s.tokens), s.used))
        own = common_prefix(seq.tokens, job.prompt)
        donor = max(self.sequences, key=lambda s: common_prefix(s.tokens, job.prompt))
        shared = common_prefix(donor.tokens, job.prompt)
        most = len(job.prompt) - (0 if keep_all else 1)  # else one prompt token is evaluated, for its logits
        keep = min(own, most)
        if shared - 1 > keep and donor is not seq:
            keep = min(shared, most)
            # across streams llama.cpp copies whole streams only (it asserts p0 = 0, p1 = -1): copy, then cut
            llama_cpp.llama_memory_seq_rm(self.memory, seq.id, 0, -1)
            llama_cpp.llama_memory_seq_cp(self.memory, donor.id, seq.id, 0, -1)
            llama_cpp.llama_memory_seq_rm(self.memory, seq.id, keep, -1)
        else:
            llama_cpp.llama_memory_seq_rm(self.memory, seq.id, keep, -1)
        seq.tokens = job.prompt[:keep]
        job.reused = keep
        self.reused += keep
        return seq

    def _start(self, job: Job, free: list[Sequence]) -> None:
        seq = self._place(job, free)
        seq.busy, seq.agent, seq.used = True, job.agent, time.monotonic()
        job.seq = seq
        rest = job.prompt[len(seq.tokens):]
        for start in range(0, len(rest), self.n_batch):
            chunk = rest[start:start + self.n_batch]
            last = start + len(chunk) == len(rest)
            self._decode([(token, len(seq.tokens) + i, seq.id, last and i == len(chunk) - 1)
                          for i, token in enumerate(chunk)])
            seq.tokens.extend(chunk)
        self.running.append(job)
        self._sample(job, self.batch.n_tokens - 1)

    # ---- decoding ----

    def _decode(self, entries: list[tuple[int, int, int, bool]]) -> None:
        batch = self.batch
        batch.n_tokens = len(entries)
        for i, (token, pos, seq_id, logits) in enumerate(entries):
            batch.token[i] = token
            batch.pos[i] = pos
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = seq_id
            batch.logits[i] = logits
        status = llama_cpp.llama_decode(self.ctx.ctx, batch)
        if status != 0:
            raise ValueError(f"llama_decode failed ({status}): the context window is full; raise CLEARSIDE_N_CTX")

    @property
    def busy(self) -> bool:
        return bool(self.running or self.filling)

    def step(self) -> None:
        """Evaluate the last sampled token of every running job, and a chunk of one prefill, in one batch; then
        sample each running job's next token."""
        jobs = list(self.running)
        filling = self.filling[0] if self.filling else None
        if not jobs and filling is None:
            return
        entries = [(job.next_token, len(job.seq.tokens), job.seq.id, True) for job in jobs]
        chunk: list[int] = []
        if filling is not None:
            seq = filling.seq
            chunk = filling.prompt[len(seq.tokens):len(seq.tokens) + PREFILL_CHUNK]
            entries += [(token, len(seq.tokens) + i, seq.id, False) for i, token in enumerate(chunk)]
        self.steps += 1
        self.widest = max(self.widest, len(jobs))
        try:
            if entries:
                self._decode(entries)
        except BaseException as exc:
            for job in [*jobs, *([filling] if filling else [])]:
                self._finish(job, exc)
            return
        if filling is not None:
            filling.seq.tokens.extend(chunk)
            if len(filling.seq.tokens) >= len(filling.prompt):
                self._finish(filling)
        for index, job in enumerate(jobs):
            job.seq.tokens.append(job.next_token)
            self._sample(job, index)
        self._admit()

    def _sample(self, job: Job, index: int) -> None:
        """Sample ``job``'s next token from the logits at batch ``index``, emit its text, or end the job."""
        try:
            token = job.sampler.sample(self.ctx, index)
            if llama_cpp.llama_vocab_is_eog(self.vocab, token):
                self._finish(job)
                return
            job.generated += 1
            text = job.decoder.decode(self._piece(token))
            if text:
                job.first = job.first or time.perf_counter() - job.started
                job.text.append(text)
                if job.on_delta:
                    job.on_delta(text)
            whole = "".join(job.text)
            stop = next((s for s in job.stop if s and s in whole), None)
            if stop is not None:
                job.text = [whole[:whole.index(stop)]]
                self._finish(job)
            elif job.generated >= job.max_tokens:
                self._finish(job)
            else:
                job.next_token = token
        except BaseException as exc:  # a grammar fault, or the caller cancelled from on_delta
            self._finish(job, exc)

    def _piece(self, token: int) -> bytes:
        n = llama_cpp.llama_token_to_piece(self.vocab, token, self.piece, len(self.piece), 0, False)
        if n < 0:  # longer than the buffer
            self.piece = ctypes.create_string_buffer(-n)
            n = llama_cpp.llama_token_to_piece(self.vocab, token, self.piece, len(self.piece), 0, False)
        return self.piece.raw[:n]

    def _finish(self, job: Job, error: BaseException | None = None) -> None:
        if job in self.running:
            self.running.remove(job)
        if job in self.filling:
            self.filling.remove(job)
            if error is None:
                self.prefilled += len(job.seq.tokens) - job.reused
        if job.seq is not None:
            self.peak_tokens = max(self.peak_tokens, len(job.seq.tokens))
            job.seq.busy = False
            job.seq.used = time.monotonic()
        close = getattr(job.sampler, "close", None)
        if close:
            close()
        if job.future.done():
            return
        if error is not None:
            job.future.set_exception(error)
            return
        job.text.append(job.decoder.decode(b"", final=True))
        job.future.set_result(Result(text="".join(job.text), prompt_tokens=len(job.prompt), reused=job.reused,
                                     completion_tokens=job.generated, seconds=time.perf_counter() - job.started,
                                     first_token_seconds=job.first))

    def resident(self) -> dict[str, int]:
        """The tokens each sequence holds (bounded: at most ``n_ctx`` each, ``len(sequences)`` sequences)."""
        return {f"{s.id}:{s.agent or '-'}": len(s.tokens) for s in self.sequences}

    def kv_memory(self) -> dict[str, Any]:
        """What the KV cache holds now, per sequence (its agent, tokens, bytes as llama.cpp counts the sequence's
        state), the most any sequence has held, and the bound: every sequence full."""
        held = [{"sequence": s.id, "agent": s.agent, "tokens": len(s.tokens),
                 "bytes": int(llama_cpp.llama_state_seq_get_size(self.ctx.ctx, s.id)) if s.tokens else 0}
                for s in self.sequences]
        per_token = max((h["bytes"] / h["tokens"] for h in held if h["tokens"]), default=0.0)
        return {"sequences": held, "bytes": sum(h["bytes"] for h in held), "peak_tokens": self.peak_tokens,
                "bound_tokens": self.n_ctx * len(self.sequences),
                "bound_bytes": round(per_token * self.n_ctx * len(self.sequences))}

    def close(self) -> None:
        for job in self.running + self.waiting + self.filling:
            if not job.future.done():
                job.future.set_exception(RuntimeError("The embedded model was closed while this call ran."))
        self.running.clear()
        self.waiting.clear()
        self.filling.clear()
        if self.batch is not None:
            llama_cpp.llama_batch_free(self.batch)
            self.batch = None
        self.ctx.close()


def job_sampler(llm: Any, grammar: Any, *, temperature: float, repeat_penalty: float) -> Any:
    """The sampler llama-cpp-python's ``create_chat_completion`` would build for this call (its defaults for
    top-k, top-p and min-p), with the grammar checked first (:class:`GrammarFirstSampler`)."""
    chain = sampler_chain(llm, temperature=temperature, repeat_penalty=repeat_penalty)
    return chain if grammar is None else GrammarFirstSampler(llm, chain, grammar)
