"""The API's tokens from the command line (``token create|list|revoke``: the secret shown once, only its hash
kept), the serve command's options (127.0.0.1 by default; another address without TLS warned about; bad options
refused with the fix), the owner column the store keeps for every debate, and the rate limiter the dashboard and the
API share."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from clearside.api.server import DEFAULT_HOST, Options, check
from clearside.cli import main
from clearside.errors import ConfigError, NotFound
from clearside.limits import Limits, RateLimited
from clearside.static.recorder import StaticRecorder
from clearside.static.run import DebateRun
from clearside.store import ListQuery
from clearside.store.tables import ApiToken
from clearside.store.tokens import digest, token_for


def test_a_token_is_made_listed_and_revoked_and_its_secret_never_kept(db, capsys):
    assert main(["token", "create", "--name", "review pipeline", "--admin"]) == 0
    out, err = capsys.readouterr()
    secret = out.strip()
    assert secret.startswith("cs_") and len(secret) == 46 and "shown only now" in err
    made = token_for(db, secret)
    assert made is not None and made.admin and made.name == "review pipeline" and not made.revoked
    with db.read() as session:
        kept = session.scalars(select(ApiToken)).one()
    assert kept.secret_sha256 == digest(secret) and secret not in json.dumps([str(v) for v in vars(kept).values()])
    assert main(["token", "list", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(t["id"], t["admin"], t["revoked_at"]) for t in listed] == [(made.id, True, None)]
    assert secret not in json.dumps(listed)
    assert main(["token", "revoke", made.id]) == 0
    assert token_for(db, secret).revoked
    assert main(["token", "revoke", "ffffffffffff"]) == 2
    assert "No API token has the id ffffffffffff" in capsys.readouterr().err
    assert token_for(db, "cs_" + "A" * 43) is None and token_for(db, "not a token") is None


def test_serve_listens_on_this_machine_by_default_and_says_when_it_does_not(capsys):
    assert Options().host == DEFAULT_HOST == "127.0.0.1" and check(Options()) == []
    assert check(Options(host="::1")) == [] and check(Options(host="localhost")) == []
    [warning] = check(Options(host="0.0.0.0"))
    assert "without TLS" in warning and "--ssl-certfile" in warning
    assert check(Options(host="0.0.0.0", ssl_certfile="c.pem", ssl_keyfile="k.pem")) == []
    for bad, words in ((Options(port=0), "--port"), (Options(workers=-1), "--workers-here"),
                       (Options(ssl_certfile="c.pem"), "--ssl-keyfile")):
        with pytest.raises(ConfigError, match=words):
            check(bad)


def test_every_debate_keeps_its_owner_in_a_column_a_list_filters_on(db):
    from clearside.providers.scripted import ScriptedProvider

    run = DebateRun.from_input("Should we adopt microservices?")
    mine = StaticRecorder(db, run, ScriptedProvider(), owner="api-0123456789ab").id
    nobody = StaticRecorder(db, DebateRun.from_input("Should we adopt microservices?"), ScriptedProvider()).id
    assert [s.id for s in db.list(ListQuery(owner="api-0123456789ab")).items] == [mine]
    db.update(nobody, data={"owner": "api-0123456789ab"})  # resumed by that token: now its own
    assert {s.id for s in db.list(ListQuery(owner="api-0123456789ab")).items} == {mine, nobody}
    copy = db.duplicate(mine, owner="f" * 32)
    assert [s.id for s in db.list(ListQuery(owner="f" * 32)).items] == [copy]
    with pytest.raises(NotFound):
        db.get("0" * 32)


def test_the_limits_are_counted_per_user_in_the_users_own_words():
    limits = Limits.from_env({"CLEARSIDE_DEBATE_STARTS_PER_MINUTE": "1"}, per="API token")
    limits.starts.take()
    with pytest.raises(RateLimited) as refused:
        limits.starts.take()
    assert str(refused.value).startswith("Debate starts are limited to 1 a minute in each API token. Try again in ")
    assert str(refused.value).endswith("; nothing was started.")
    with pytest.raises(ConfigError, match="restart the dashboard or the API server"):
        Limits.from_env({"CLEARSIDE_CHALLENGES_PER_MINUTE": "-2"})
