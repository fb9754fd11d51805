"""The grammar-first sampler on the real embedded model: output always obeys the schema."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from clearside.providers.embedded import default_model_path, load_llama

pytestmark = pytest.mark.model

ODD = {  # nothing a model would write unprompted, so the fallback path must run
    "type": "object",
    "properties": {
        "code": {"type": "string", "pattern": "^[QXZ]{3}-[0-9]{2}$"},
        "pick": {"type": "string", "enum": ["zebra-xylophone", "quartz-vortex"]},
        "n": {"type": "integer"},
    },
    "required": ["code", "pick", "n"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def llm():
    llm, lock = load_llama(default_model_path(), 2048, 2)
    with lock:
        yield llm


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_constrained_output_matches_the_schema_and_falls_back_when_needed(llm, seed):
    reply = llm.create_chat_completion(
        [{"role": "user", "content": "Write a short poem about the sea."}],
        response_format={"type": "json_object", "schema": ODD}, max_tokens=60, temperature=0.8, seed=seed)
    data = json.loads(reply["choices"][0]["message"]["content"])
    assert list(Draft202012Validator(ODD).iter_errors(data)) == []
    assert llm._sampler.resampled > 0, "the odd schema forces the grammar fallback"


def test_unconstrained_generation_uses_the_plain_sampler(llm):
    reply = llm.create_chat_completion([{"role": "user", "content": "Say hi."}], max_tokens=8, seed=1)
    assert reply["choices"][0]["message"]["content"] is not None
    assert not hasattr(llm._sampler, "resampled")
