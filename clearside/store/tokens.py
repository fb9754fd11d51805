"""The HTTP API's tokens (migration 0010): made, listed, revoked, and a presented secret checked, in a store.

A token is ``cs_`` and 43 URL-safe characters (256 random bits, :func:`secrets.token_urlsafe`); the store keeps
only the SHA-256 of the whole string (``secret_sha256``) and a short public id (``id``, 12 hex characters, what
``token list`` shows and ``token revoke`` takes). The secret is handed out once, when the token is made. A revoked
token stays listed, so its debates still name an owner; it is refused from then on.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import select

from ..errors import InputError, NotFound
from ..inputs import clean, over_limit, shown
from .database import Database
from .records import iso, now
from .tables import ApiToken

PREFIX = "cs_"
MAX_NAME = 80
_ID = re.compile(r"[0-9a-f]{12}")
_SECRET = re.compile(r"cs_[A-Za-z0-9_-]{43}")


def owner_of_token(token_id: str) -> str:
    """The owner a debate made with the token ``token_id`` carries (``data["owner"]``, the ``owner`` column)."""
    return f"api-{token_id}"


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class TokenRow:
    """A token as the store hands it out: never its secret."""

    id: str
    name: str
    admin: bool
    created_at: str
    revoked_at: str | None

    @property
    def owner(self) -> str:
        return owner_of_token(self.id)

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def of(cls, row: ApiToken) -> TokenRow:
        return cls(id=row.id, name=row.name, admin=bool(row.admin), created_at=iso(row.created_at),
                   revoked_at=iso(row.revoked_at) if row.revoked_at is not None else None)


def create_token(store: Database, name: str = "", *, admin: bool = False) -> tuple[TokenRow, str]:
    """A new token and its secret (shown once: the store keeps only its hash)."""
    name = clean(name or "")
    if message := over_limit(name, MAX_NAME, "The token's name"):
        raise InputError(message)
    secret = PREFIX + secrets.token_urlsafe(32)
    row = ApiToken(id=secrets.token_hex(6), name=name, secret_sha256=digest(secret), admin=admin, created_at=now(),
                   revoked_at=None)
    with store.write() as session:
        session.add(row)
        session.flush()
        made = TokenRow.of(row)
    return made, secret


def tokens(store: Database) -> list[TokenRow]:
    """Every token, oldest first (revoked ones included)."""
    with store.read() as session:
        return [TokenRow.of(row) for row in session.scalars(select(ApiToken).order_by(ApiToken.created_at,
                                                                                       ApiToken.id))]


def revoke_token(store: Database, token_id: str) -> TokenRow:
    """Refuse the token from now on; revoking it again changes nothing."""
    token_id = (token_id or "").strip().lower()
    with store.write() as session:
        row = session.get(ApiToken, token_id) if _ID.fullmatch(token_id) else None
        if row is None:
            raise NotFound(f"No API token has the id {shown(token_id)}: `python -m clearside token list` shows "
                           "them.")
        if row.revoked_at is None:
            row.revoked_at = now()
        session.flush()
        return TokenRow.of(row)


def token_for(store: Database, secret: str) -> TokenRow | None:
    """The token whose secret is ``secret`` (revoked or not), or None."""
    if not _SECRET.fullmatch(secret or ""):
        return None
    with store.read() as session:
        row = session.scalars(select(ApiToken).where(ApiToken.secret_sha256 == digest(secret))).first()
        return TokenRow.of(row) if row is not None else None
