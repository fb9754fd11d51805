"""Faster grammar-constrained sampling for the embedded model.

llama-cpp-python applies the JSON-Schema grammar to the whole vocabulary before
sampling every token, which halves decoding speed on a small model. This
sampler does what llama.cpp's own ``common_sampler`` does instead: sample from
the unconstrained distribution and keep the token when the grammar accepts it.
Otherwise it resamples with the grammar applied to the most likely candidates
(cheap), and to the whole vocabulary only when none of those is allowed. The
output obeys the grammar either way; only the cost of checking it changes.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
from typing import Any

import llama_cpp
import numpy as np
from llama_cpp import Llama

from .grammar_errors import GRAMMAR_FAILED
from .llama_private import grammar_rules, vocab_of

SHORTLIST = 64
_TOKEN = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)


def escape_literal_backslashes() -> None:
    """llama-cpp-python (0.3) writes a JSON-Schema ``enum`` or ``const`` string into the grammar as the JSON text of
    the value, escaping ``"`` for the grammar but not ``\\``: a value holding a double quote (``said "no"``)
    becomes ``"said \\"no\\""`` there, which the grammar parser rejects, failing the call. Such values are user
    text: sentences of the user's sources offered as quotes. Escaping the backslash too makes the literal exactly
    the value's JSON text. Idempotent; the converter reads these module globals on every call."""
    import re

    from llama_cpp import llama_grammar

    llama_grammar.GRAMMAR_LITERAL_ESCAPES = {**llama_grammar.GRAMMAR_LITERAL_ESCAPES, "\\": "\\\\"}
    llama_grammar.GRAMMAR_LITERAL_ESCAPE_RE = re.compile(r'[\r\n"\\]')


escape_literal_backslashes()


class GrammarFirstSampler:
    """Drop-in for llama-cpp-python's ``LlamaSampler`` (``sample``, ``accept``, ``reset``, ``close``)."""

    def __init__(self, llama: Llama, chain: Any, grammar: Any) -> None:
        self.chain = chain  # the ordinary sampler chain, built without the grammar
        rules, root = grammar_rules(grammar)
        self.grammar = llama_cpp.llama_sampler_init_grammar(vocab_of(llama), rules.encode("utf-8"),
                                                            root.encode("utf-8"))
        if not self.grammar:
            raise ValueError(f"llama.cpp {GRAMMAR_FAILED} for this schema")
        self.n_vocab = llama.n_vocab()
        self.data = (llama_cpp.llama_token_data * self.n_vocab)()
        self.view = np.frombuffer(self.data, dtype=_TOKEN)
        self.one = (llama_cpp.llama_token_data * 1)()
        self.shortlist = llama_cpp.llama_sampler_init_top_k(SHORTLIST)
        self.resampled = 0
        self.sampled = 0

    def _candidates(self, ctx: Any, idx: int) -> llama_cpp.llama_token_data_array:
        logits = llama_cpp.llama_get_logits_ith(ctx.ctx, idx)
        self.view["id"] = np.arange(self.n_vocab, dtype=np.intc)
        self.view["logit"] = np.ctypeslib.as_array(logits, shape=(self.n_vocab,))
        self.view["p"] = 0.0
        return llama_cpp.llama_token_data_array(data=self.data, size=self.n_vocab, selected=-1, sorted=False)

    def _allowed(self, token: int) -> bool:
        self.one[0].id, self.one[0].logit, self.one[0].p = token, 1.0, 0.0
        single = llama_cpp.llama_token_data_array(data=self.one, size=1, selected=-1, sorted=False)
        llama_cpp.llama_sampler_apply(self.grammar, ctypes.byref(single))
        return math.isfinite(self.one[0].logit)

    def sample(self, ctx: Any, idx: int = -1) -> int:
        self.sampled += 1
        cur = self._candidates(ctx, idx)
        llama_cpp.llama_sampler_apply(self.chain.sampler, ctypes.byref(cur))
        token = cur.data[cur.selected].id
        if not self._allowed(token):
            self.resampled += 1
            token = self._resample(ctx, idx)
        llama_cpp.llama_sampler_accept(self.grammar, token)
        self.chain.accept(token)
        return token

    def _resample(self, ctx: Any, idx: int) -> int:
        cur = self._candidates(ctx, idx)
        llama_cpp.llama_sampler_apply(self.shortlist, ctypes.byref(cur))
        llama_cpp.llama_sampler_apply(self.grammar, ctypes.byref(cur))
        cur.sorted = False  # the grammar set some logits to -inf: the shortlist's order no longer holds
        if any(math.isfinite(cur.data[i].logit) for i in range(cur.size)):
            llama_cpp.llama_sampler_apply(self.chain.sampler, ctypes.byref(cur))
            token = cur.data[cur.selected].id
            if self._allowed(token):
                return token
        # none of the likely tokens fits: the grammar over the whole vocabulary, as llama.cpp does by default
        cur = self._candidates(ctx, idx)
        llama_cpp.llama_sampler_apply(self.grammar, ctypes.byref(cur))
        llama_cpp.llama_sampler_apply(self.chain.sampler, ctypes.byref(cur))
        return cur.data[cur.selected].id

    def accept(self, token: int) -> None:
        llama_cpp.llama_sampler_accept(self.grammar, token)
        self.chain.accept(token)

    def reset(self) -> None:
        llama_cpp.llama_sampler_reset(self.grammar)
        self.chain.reset()

    def close(self) -> None:
        if self.grammar:
            llama_cpp.llama_sampler_free(self.grammar)
            llama_cpp.llama_sampler_free(self.shortlist)
            self.grammar = None
        self.chain.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter teardown: llama_cpp may already be gone
            self.close()


class GrammarFirstLlama(Llama):
    """``Llama`` whose grammar-constrained generations use :class:`GrammarFirstSampler`."""

    def _init_sampler(self, *args: Any, grammar: Any = None, **kwargs: Any) -> Any:
        chain = super()._init_sampler(*args, grammar=None, **kwargs)
        return chain if grammar is None else GrammarFirstSampler(self, chain, grammar)
