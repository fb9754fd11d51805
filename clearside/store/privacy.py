"""Keep secrets out of the store and out of exports (NFR-404,
docs/design/requirements.md#nfr-400: no user identifiers, no keys).

Nothing in the store records who asked. API keys can still leak by accident: a
model echoing a key from its prompt, a user pasting one into a question, a base
URL with credentials. ``scrub`` replaces every known secret value wherever it
appears in a string before anything is written: the values of environment
variables whose names mark them as secrets, plus any value a caller registered
(the dashboard registers the keys it reads from ``st.secrets``).
"""

from __future__ import annotations

import os
import re
import threading
from typing import Any

SECRET_NAME = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.IGNORECASE)
REDACTED = "[redacted]"
MIN_LENGTH = 8  # shorter values ("1", "true") would redact ordinary words

_registered: set[str] = set()
_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    if value and len(value) >= MIN_LENGTH:
        with _lock:
            _registered.add(value)


def secret_values() -> list[str]:
    found = {value for name, value in os.environ.items() if SECRET_NAME.search(name) and len(value) >= MIN_LENGTH}
    with _lock:
        found |= _registered
    return sorted(found, key=len, reverse=True)  # longest first, so a key containing another goes whole


def scrub(value: Any, secrets: list[str] | None = None) -> Any:
    """``value`` with every secret replaced by ``[redacted]``, in strings at any depth (keys included)."""
    secrets = secret_values() if secrets is None else secrets
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {scrub(k, secrets): scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(item, secrets) for item in value]
    return value
