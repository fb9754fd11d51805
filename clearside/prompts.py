"""Versioned prompt files in ``clearside/data/prompts/``: TOML with ``version`` and templates.

Templates use ``string.Template`` placeholders (``${name}``); a missing
variable is a typed error, never a silently empty hole. User text is inserted
only through :func:`quote`, as a JSON string literal, so it reads as quoted
material and cannot close the block it sits in.
"""

from __future__ import annotations

import json
import tomllib
from functools import cache
from pathlib import Path
from string import Template

from pydantic import BaseModel, ConfigDict, ValidationError

from .errors import ConfigError

PROMPTS_DIR = Path(__file__).resolve().parent / "data" / "prompts"


class PromptFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    version: str
    system: str = ""
    user: str = ""
    text: str = ""
    tasks: dict[str, str] = {}


@cache
def load(name: str) -> PromptFile:
    path = PROMPTS_DIR / f"{name}.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return PromptFile(name=name, **data)
    except (OSError, tomllib.TOMLDecodeError, ValidationError) as exc:
        raise ConfigError(f"Prompt file {path} is missing or malformed: {exc}") from exc


def render(template: str, **variables: str) -> str:
    try:
        return Template(template).substitute(variables)
    except KeyError as exc:
        raise ConfigError(f"Prompt template needs the variable {exc.args[0]!r}") from exc


def quote(text: str) -> str:
    """User or model text as a quoted literal inside a prompt."""
    return json.dumps(text, ensure_ascii=False)


def preamble() -> str:
    return load("global").text


def versions(*names: str) -> dict[str, str]:
    return {name: load(name).version for name in ("global", *names)}
