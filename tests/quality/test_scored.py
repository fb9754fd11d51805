"""run_scored: one batch item debated, saved and scored on the scripted provider; a failure saves a failed run
with schema_valid 0; a re-run for the same debate id rewrites that item instead of adding a second."""

from __future__ import annotations

import copy
import uuid

from helpers import flagship_replies

from clearside.errors import Cancelled
from clearside.providers.scripted import ScriptedProvider
from clearside.quality.references import flagship
from clearside.quality.scored import RunOptions, run_scored

QUESTION = flagship().proposition


def provider(moderator=None) -> ScriptedProvider:
    replies = flagship_replies()
    return ScriptedProvider(script={"orchestrator": [replies["orchestrator"]], "pro": [replies["pro"]],
                                    "con": [replies["con"]],
                                    "moderator": [moderator or replies["moderator"]]})


def broken_moderator(request):
    return {"not": "a moderator section"}


def test_success_saves_the_debate_and_a_done_run_with_its_metrics(db):
    started = []
    scored = run_scored(QUESTION, provider(), db, RunOptions(suite="flagship", data={"batch": "b1", "item": "x"},
                                                             reference=flagship()),
                        on_start=lambda d, r: started.append((d, r)))
    assert scored.status == "done" and scored.error == "" and scored.document["moderator"]
    assert started == [(scored.debate_id, scored.run_id)]
    [row] = db.runs("flagship")
    assert row["id"] == scored.run_id and row["debate_id"] == scored.debate_id and row["status"] == "done"
    assert row["metrics"] == scored.metrics and row["metrics"]["schema_valid"] == 1.0 and "coverage" in row["metrics"]
    assert row["data"]["batch"] == "b1" and row["data"]["detail"] == scored.detail and row["prompt_versions"]
    assert db.get(scored.debate_id).status == "done"


def test_a_failed_debate_saves_a_failed_run_with_schema_valid_0(db):
    scored = run_scored(QUESTION, provider(broken_moderator), db, RunOptions(suite="flagship", data={"batch": "b2"},
                                                                             retries=0))
    assert scored.status == "failed" and scored.error and scored.metrics == {"schema_valid": 0.0}
    [row] = db.runs("flagship")
    assert row["status"] == "failed" and row["metrics"] == {"schema_valid": 0.0}
    assert row["data"]["error"] == scored.error and row["data"]["batch"] == "b2"
    record = db.get(scored.debate_id)
    assert record.status == "failed" and record.data["error"] == scored.error
    assert set(db.sections(scored.debate_id)) >= {"proposition", "pro", "con"}  # what finished stays


def test_a_cancel_pauses_the_debate_and_cancels_the_run(db):
    def cancel(event):
        if event.agent == "moderator":
            raise Cancelled("Cancelled by the user.")

    scored = run_scored(QUESTION, provider(), db, RunOptions(suite="compare", data={}), on_event=cancel)
    assert scored.status == "cancelled"
    assert db.runs("compare")[0]["status"] == "cancelled" and db.get(scored.debate_id).status == "paused"


def test_a_rerun_with_the_same_debate_id_finishes_that_debate_and_adds_no_run(db):
    debate_id = uuid.uuid4().hex
    first = run_scored(QUESTION, provider(broken_moderator), db, RunOptions(suite="flagship", data={"batch": "b3"},
                                                                            retries=0, debate_id=debate_id))
    assert first.status == "failed" and first.debate_id == debate_id and first.run_id == debate_id
    again = provider()
    again.script = {"moderator": [copy.deepcopy(flagship_replies()["moderator"])]}  # only the missing agent runs
    second = run_scored(QUESTION, again, db, RunOptions(suite="flagship", data={"batch": "b3"}, debate_id=debate_id))
    assert second.status == "done" and (second.debate_id, second.run_id) == (debate_id, debate_id)
    rows = db.runs("flagship")
    assert [(r["id"], r["debate_id"], r["status"]) for r in rows] == [(debate_id, debate_id, "done")]
    assert rows[0]["metrics"]["schema_valid"] == 1.0 and "error" not in rows[0]["data"]
    assert db.get(debate_id).status == "done" and len(db.list("", limit=50).items) == 1


def test_a_new_debate_id_is_used_for_both_rows(db):
    debate_id = uuid.uuid4().hex
    scored = run_scored(QUESTION, provider(), db, RunOptions(suite="flagship", data={}, debate_id=debate_id))
    assert (scored.debate_id, scored.run_id, scored.status) == (debate_id, debate_id, "done")
    assert db.get(debate_id).status == "done"
