"""The store on SQLite and on a real PostgreSQL server: migrations, saving, search, live transcripts, privacy."""

from __future__ import annotations

import copy
import json
import threading
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from helpers import fixture_dict, moderator_reply, orchestrator_reply, side_reply
from sqlalchemy import insert, inspect, select

from clearside.errors import InputError, NotFound, StoreError
from clearside.live.exchange import load_live
from clearside.live.transcript import Intervention, Transcript, Turn
from clearside.schema import Moderator, Proposition, Side
from clearside.static.recorder import load_run, start_static
from clearside.static.run import DebateRun
from clearside.store import LiveWriter, NewDebate, Store
from clearside.store.db import current, head
from clearside.store.debates import SEARCH_FTS, SEARCH_INDEX
from clearside.store.tables import Base, Debate, LiveTurn, Section

STAMP = "2026-11-22T08:00:00.000Z"


@pytest.fixture
def store(store_url):
    opened = Store(store_url)
    yield opened
    opened.close()


def test_a_new_database_is_migrated_to_head_and_matches_the_models(store):
    assert current(store.engine) == head()
    with store.engine.connect() as connection:
        postgres_only = {"ix_debates_search_trgm"} if store.dialect == "sqlite" else set()
        # the search's word forms (migration 0011): SQLite's FTS5 tables, PostgreSQL's expression index
        undeclared = (SEARCH_FTS, SEARCH_INDEX)
        context = MigrationContext.configure(connection, opts={
            "include_object": lambda obj, name, kind, reflected, other: name not in postgres_only
            and not (name or "").startswith(undeclared)})
        diff = compare_metadata(context, Base.metadata)
    assert diff == []  # the migrations create exactly what tables.py declares
    assert set(inspect(store.engine).get_table_names()) >= {"debates", "sections", "challenges", "live_turns",
                                                             "interventions", "runs", "alembic_version"}


def test_reopening_keeps_everything_and_migrates_nothing(store_url):
    first = Store(store_url)
    debate_id = first.create(NewDebate("static", "Keep me?", provider="scripted", model="m"))
    first.close()
    again = Store(store_url)
    assert again.get(debate_id).question == "Keep me?"
    assert current(again.engine) == head()
    again.close()


def test_no_column_can_hold_a_user_identifier(store):
    names = {c["name"] for table in inspect(store.engine).get_table_names()
             for c in inspect(store.engine).get_columns(table)}
    assert not {n for n in names if any(w in n for w in ("user", "email", "ip", "session", "client", "key"))}


def test_sqlite_connections_use_wal_busy_timeout_and_foreign_keys(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'x.db'}")
    with store.engine.connect() as connection:
        pragmas = {name: connection.exec_driver_sql(f"PRAGMA {name}").scalar()
                   for name in ("journal_mode", "busy_timeout", "foreign_keys")}
    assert pragmas == {"journal_mode": "wal", "busy_timeout": 10000, "foreign_keys": 1}


def _run() -> DebateRun:
    return DebateRun.from_input("Should we adopt microservices architecture?", geography="Global")


def test_a_static_debate_is_saved_section_by_section_and_resumable(store):
    run = _run()
    debate_id = start_static(store, run, provider="scripted", model="script", prompt_versions={"advocate": "1.0.0"})
    assert len(debate_id) == 32 and store.get(debate_id).status == "running"
    proposition = Proposition.model_validate({**orchestrator_reply(), "raw_input": run.raw_input})
    store.save_section(debate_id, "proposition", proposition.dump())
    store.save_section(debate_id, "pro", Side.model_validate(side_reply("pro")).dump())
    resumed = load_run(store, debate_id)
    assert resumed.missing == ["con", "moderator"]
    assert resumed.pro == Side.model_validate(side_reply("pro"))
    assert resumed.context.geography == "Global" and resumed.raw_input == run.raw_input
    store.save_section(debate_id, "pro", Side.model_validate(side_reply("pro2")).dump())  # a rerun replaces it
    assert load_run(store, debate_id).pro == Side.model_validate(side_reply("pro2"))
    store.save_section(debate_id, "moderator", Moderator.model_validate(moderator_reply()).dump())
    resumed = load_run(store, debate_id)
    assert resumed.missing == ["con"], "only what was never saved is left to generate"
    assert resumed.moderator == Moderator.model_validate(moderator_reply())


def test_a_finished_document_keeps_its_challenges_as_rows(store):
    document = fixture_dict()
    response = {"action": "question_assumption", "target": "Teams are ready",
                "response": {"analysis": ["It depends."], "classification": "values_dependent"}}
    debate_id = start_static(store, _run(), provider="openai", model="gpt-4")
    store.finish_static(debate_id, {**document, "challenges": {**document["challenges"], "responses": [response]}},
                        usage={"pro": {"calls": 1}}, violations=2)
    second = {**response, "target": "Costs fall"}
    assert store.add_challenge(debate_id, second, provider="openai", model="gpt-4", prompt_version="1.1.0") == 2
    record = store.get(debate_id)
    assert record.status == "done" and record.data["usage"] == {"pro": {"calls": 1}} and record.data["violations"] == 2
    assert record.document["challenges"]["responses"] == [response, second]
    assert store.challenges(debate_id) == [response, second]


def test_list_searches_words_anywhere_and_filters(store):
    old = store.create(NewDebate("static", "Should cities ban cars downtown?", provider="ollama", model="llama3.2",
                                 created_at=datetime(2026, 1, 5, 12, tzinfo=UTC)))
    document = fixture_dict()
    new = start_static(store, _run(), provider="openai", model="gpt-4")
    store.finish_static(new, document)
    live = store.create(NewDebate("live", "Leave my job for a startup?", provider="embedded", model="smollm2",
                                  title="Career"))
    assert [s.id for s in store.list().items] == [live, new, old]  # newest first
    assert [s.id for s in store.list("CARS downtown").items] == [old]  # every word, any case
    claim = document["pro"]["arguments"][0]["claim"].split()[2]
    assert new in [s.id for s in store.list(claim).items]  # the document's claims are searchable
    assert [s.id for s in store.list("career").items] == [live]  # so is the title
    assert store.list("100%_").total == 0  # LIKE wildcards are taken literally
    assert [s.id for s in store.list(provider="ollama").items] == [old]
    assert [s.id for s in store.list(model="gpt-4").items] == [new]
    assert [s.id for s in store.list(kind="live").items] == [live]
    assert [s.id for s in store.list(until=date(2026, 1, 5)).items] == [old]  # inclusive of that day
    assert old not in [s.id for s in store.list(since=date(2026, 1, 6)).items]
    page = store.list(limit=2)
    assert page.total == 3 and len(page.items) == 2
    assert store.facets() == {"provider": ["embedded", "ollama", "openai"], "model": ["gpt-4", "llama3.2", "smollm2"]}


def test_search_finds_other_forms_of_a_word_and_follows_every_change(store):
    """"flags" finds a "feature-flag service" (SQLite: FTS5 with the porter stemmer; PostgreSQL: to_tsvector
    'english'), through renames and deletes; numbers and punctuation are still matched literally."""
    flags = store.create(NewDebate("static", "Should we build a feature-flag service?", provider="p", model="m"))
    other = store.create(NewDebate("static", "Should cities ban cars downtown?", provider="p", model="m"))
    assert [s.id for s in store.list("flags").items] == [flags]
    assert [s.id for s in store.list("Flags servicing").items] == [flags], "every word, in any of its forms"
    assert [s.id for s in store.list("feat").items] == [flags], "part of a word still matches"
    assert store.list("flagpole").total == 0 and store.list("should").total == 2  # a stop word: matched literally
    store.rename(other, "Deploying canaries")
    assert [s.id for s in store.list("canary").items] == [other], "a new title is searched at once"
    assert store.list("downtown").total == 1, "the question stays searchable"
    store.delete(flags)
    assert store.list("flags").total == 0
    again = store.create(NewDebate("static", "Are feature flags worth it?", provider="p", model="m"))
    assert [s.id for s in store.list("flag").items] == [again]


def test_migration_0011_makes_the_debates_of_an_older_store_findable_by_word_forms(store_url):
    """A store at the migration before 0011, with debates in it: upgraded, every one of them is found by its
    words' other forms, and a debate saved after the upgrade too."""
    from alembic.script import ScriptDirectory

    from clearside.store.db import alembic_config, make_engine, migrate

    before = ScriptDirectory.from_config(alembic_config()).get_revision("0011").down_revision
    engine = make_engine(store_url)
    migrate(engine, before)
    stamp = datetime(2026, 11, 1, tzinfo=UTC)
    with engine.begin() as connection:
        for debate_id, question in (("a" * 32, "Should we build a feature-flag service?"),
                                    ("b" * 32, "Should cities ban cars downtown?")):
            connection.execute(insert(Debate.__table__).values(
                id=debate_id, kind="static", status="done", title=question, question=question, provider="p",
                model="m", prompt_versions={}, schema_version="1.0.0", document=None, data={},
                search_text=question.lower(), parent_id=None, created_at=stamp, updated_at=stamp))
    engine.dispose()
    upgraded = Store(store_url)
    try:
        assert current(upgraded.engine) == head()
        assert [s.id for s in upgraded.list("flags").items] == ["a" * 32]
        assert [s.id for s in upgraded.list("city car").items] == ["b" * 32]
        later = upgraded.create(NewDebate("static", "Which flags should we retire?", provider="p", model="m"))
        assert [s.id for s in upgraded.list("flagging").items] == [later, "a" * 32]
    finally:
        upgraded.close()


def test_rename_delete_and_duplicate(store):
    debate_id = start_static(store, _run(), provider="openai", model="gpt-4")
    store.finish_static(debate_id, fixture_dict())
    store.add_challenge(debate_id, {"action": "question_assumption", "target": "x",
                                    "response": {"analysis": ["y"], "classification": "factual"}},
                        provider="openai", model="gpt-4", prompt_version="1")
    store.rename(debate_id, "  Microservices,   for the board ")
    assert store.get(debate_id).title == "Microservices, for the board"
    assert store.list("board").total == 1
    with pytest.raises(InputError, match="cannot be empty"):
        store.rename(debate_id, "   ")
    copy_id = store.duplicate(debate_id)
    original, duplicate = store.get(debate_id), store.get(copy_id)
    assert duplicate.parent_id == debate_id and duplicate.title == "Copy of Microservices, for the board"
    assert duplicate.document == original.document and store.sections(copy_id) == store.sections(debate_id)
    store.delete(debate_id)
    assert not store.exists(debate_id)
    assert store.get(copy_id).document == original.document  # the copy does not depend on the original
    with pytest.raises(NotFound, match="No saved debate has the id"):
        store.get(debate_id)
    with pytest.raises(NotFound, match="not a debate id"):
        store.get("../../etc/passwd")


def test_a_delete_while_a_writer_replaces_a_section_waits_for_it_and_neither_fails(store):
    """A writer replacing a section holds the debate row, then the section (as ``save_section`` does); the delete
    must queue behind it, not lock the sections first and deadlock (PostgreSQL then aborts one of the two)."""
    if store.dialect != "postgresql":
        pytest.skip("SQLite runs one writer at a time")
    debate_id = start_static(store, _run(), provider="scripted", model="m")
    store.save_section(debate_id, "pro", Side.model_validate(side_reply("first")).dump())
    failed: list[BaseException] = []

    def delete() -> None:
        try:
            store.delete(debate_id)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            failed.append(exc)

    deleting = threading.Thread(target=delete)
    with store.write() as session:
        session.get(Debate, debate_id).title = "Renamed while saving"
        session.flush()  # the debate row is held until this commits
        deleting.start()
        time.sleep(0.5)
        assert deleting.is_alive(), "the delete waits for the writer"
        session.get(Section, (debate_id, "pro")).body = Side.model_validate(side_reply("second")).dump()
        session.flush()  # a delete holding the sections would make this a deadlock
    deleting.join(10)
    assert not deleting.is_alive() and failed == []
    assert not store.exists(debate_id)


def test_stage_seconds_are_the_agents_times_of_the_model_s_last_finished_debates_newest_first(store):
    def finished(model: str, seconds: dict[str, float] | None) -> str:
        debate_id = start_static(store, _run(), provider="ollama", model=model)
        usage = {agent: {"calls": 1, "seconds": s, "completion_tokens": 9} for agent, s in (seconds or {}).items()}
        store.finish_static(debate_id, fixture_dict(), usage=usage or None)
        return debate_id

    finished("qwen3", {"orchestrator": 2.0, "pro": 20.0})
    finished("qwen3", {"orchestrator": 3.0, "pro": 30.0, "con": 25.0, "moderator": 12.0})
    finished("qwen3", None)  # finished without usage (an import, an older version): no history
    finished("llama3", {"pro": 99.0})  # another model
    start_static(store, _run(), provider="ollama", model="qwen3")  # not finished
    assert store.stage_seconds("ollama", "qwen3") == [{"orchestrator": 3.0, "pro": 30.0, "con": 25.0,
                                                      "moderator": 12.0}, {"orchestrator": 2.0, "pro": 20.0}]
    # the last two finished: one saved no usage
    assert store.stage_seconds("ollama", "qwen3", limit=2) == [{"orchestrator": 3.0, "pro": 30.0, "con": 25.0,
                                                               "moderator": 12.0}]
    assert store.stage_seconds("openai", "qwen3") == []


def test_an_owner_token_is_kept_with_the_debate_and_a_copy_belongs_to_its_copier(store):
    debate_id = start_static(store, _run(), provider="openai", model="gpt-4", data={"owner": "a" * 32})
    assert store.get(debate_id).data["owner"] == "a" * 32
    assert store.get(debate_id).data["context"] == _run().context.dump(), "the run's own data is kept too"
    assert "owner" not in store.get(store.duplicate(debate_id)).data, "a copy never inherits the owner"
    assert store.get(store.duplicate(debate_id, owner="b" * 32)).data["owner"] == "b" * 32
    assert "owner" not in str(store.list().items[0].as_dict()), "the Library's rows do not carry it"


def test_list_keeps_the_debates_runs_made_apart_when_asked(store):
    mine = store.create(NewDebate("static", "Mine?", provider="openai", model="gpt-4"))
    compared = store.create(NewDebate("static", "Compared?", provider="openai", model="gpt-4"))
    store.add_run("compare", provider="openai", model="gpt-4", debate_id=compared)
    store.add_run("flagship", provider="openai", model="gpt-4")  # a run without a debate hides nothing
    assert [s.id for s in store.list(origin="own").items] == [mine]
    assert [s.id for s in store.list(origin="runs").items] == [compared]
    assert {s.id for s in store.list().items} == {mine, compared}
    with pytest.raises(InputError, match="Unknown origin"):
        store.list(origin="robots")


def test_several_threads_saving_at_once_lose_nothing(store):
    shared = start_static(store, _run(), provider="scripted", model="m")
    store.finish_static(shared, fixture_dict())
    errors: list[BaseException] = []
    created: list[str] = []
    response = {"action": "question_assumption", "target": "t",
                "response": {"analysis": ["a"], "classification": "factual"}}

    def worker(n: int) -> None:
        try:
            for i in range(5):
                debate_id = start_static(store, _run(), provider="scripted", model=f"m{n}")
                for name in ("pro", "con"):
                    store.save_section(debate_id, name, Side.model_validate(side_reply(f"{name}{n}{i}")).dump())
                created.append(debate_id)
                store.add_challenge(shared, {**response, "target": f"t{n}-{i}"}, provider="s", model="m",
                                    prompt_version="1")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(created) == 40 and store.list(limit=100).total == 41
    assert all(set(store.sections(d)) == {"pro", "con"} for d in created)
    targets = [c["target"] for c in store.challenges(shared)]
    assert sorted(targets) == sorted(f"t{n}-{i}" for n in range(8) for i in range(5))


def _transcript(debate_id: str, turns: int) -> Transcript:
    return Transcript(
        id=debate_id, created_at=STAMP, updated_at=STAMP, question="Leave my job for a startup?", provider="scripted",
        model="script", turns=[Turn(turn=n, step=n - 1, phase="opening", kind="opening", speaker="pro",
                                    label=f"Turn {n}", text=f"Speech {n}") for n in range(1, turns + 1)],
        interventions=[Intervention(id=1, type="direct_question", text="Why?", at=STAMP, after_turn=1)])


def test_a_live_transcript_is_saved_turn_by_turn(store):
    from clearside.store import new_id

    debate_id = new_id()
    writer = LiveWriter(store, debate_id)
    transcript = _transcript(debate_id, 2)
    writer.save(transcript)
    assert load_live(store, debate_id) == transcript
    with store.read() as session:
        first = {t.turn: t.updated_at for t in session.scalars(select(LiveTurn))}
    transcript.turns.append(_transcript(debate_id, 3).turns[-1])
    transcript.turns[1].flags = [{"kind": "neutrality", "text": "the pro side wins"}]
    transcript.interventions[0].status, transcript.interventions[0].response = "answered", "Because."
    transcript.state, transcript.cursor = "paused", 3
    writer.save(transcript)
    assert load_live(store, debate_id) == transcript
    with store.read() as session:
        rows = {t.turn: t for t in session.scalars(select(LiveTurn))}
    assert rows[1].updated_at == first[1]  # an unchanged turn is not rewritten
    assert rows[2].flagged and not rows[1].flagged
    assert store.get(debate_id).status == "paused"
    assert [s.id for s in store.list("speech 3").items] == [debate_id], "an unfinished debate's turns are searchable"
    with pytest.raises(InputError, match="not a live one"):
        load_live(store, store.create(NewDebate("static", "q?", provider="p", model="m")))


def test_runs_are_recorded_and_only_an_explicit_bless_moves_the_baseline(store):
    first = store.add_run("flagship", provider="embedded", model="smollm2", metrics={"neutrality": 1.0})
    second = store.add_run("flagship", provider="embedded", model="smollm2")
    store.update_run(second, status="done", metrics={"neutrality": 0.5})
    store.bless(first)
    store.bless(second)
    runs = store.runs("flagship")
    assert [r["id"] for r in runs] == [first, second]
    assert [r["baseline"] for r in runs] == [False, True] and runs[1]["metrics"] == {"neutrality": 0.5}


def test_a_batch_is_read_through_its_own_column(store):
    """runs.batch (migration 0006, indexed): a batch's runs by its id, a run outside any batch as its own batch;
    the query uses the index on PostgreSQL and SQLite alike."""
    ids = [store.add_run("flagship", provider="embedded", model="m", data={"batch": "b1", "index": i})
           for i in range(2)]
    other = store.add_run("flagship", provider="embedded", model="m", data={"batch": "b2"})
    alone = store.add_run("compare", provider="embedded", model="m")
    assert [r["id"] for r in store.runs(batch="b1")] == ids and [r["batch"] for r in store.runs(batch="b1")] == \
        ["b1", "b1"]
    assert [r["id"] for r in store.runs(batch="b2")] == [other] and store.runs(batch=alone)[0]["id"] == alone
    store.update_run(other, data={"batch": "b1"})  # rewritten data moves the run with it
    assert len(store.runs(batch="b1")) == 3 and store.runs(batch="b2") == []
    explain = "EXPLAIN QUERY PLAN " if store.dialect == "sqlite" else "EXPLAIN "
    with store.engine.connect() as connection:
        if store.dialect != "sqlite":
            connection.exec_driver_sql("SET enable_seqscan = off")  # a tiny table: ask whether the index serves
        plan = " ".join(str(row) for row in connection.exec_driver_sql(
            f"{explain}SELECT id FROM runs WHERE batch = 'b1'"))
    assert "ix_runs_batch" in plan, plan


def test_migration_0006_files_the_runs_of_a_database_made_at_0005_under_their_batch(store_url):
    """A run of a batch gets its batch's id, a run outside any batch its own id; the index then serves both."""
    from clearside.store.db import make_engine, migrate
    from clearside.store.tables import Run

    engine = make_engine(store_url)
    migrate(engine, "0005")
    stamp = datetime(2026, 11, 1, tzinfo=UTC)
    with engine.begin() as connection:
        for run_id, data in (("a" * 32, {"batch": "b" * 32, "index": 0}), ("c" * 32, {})):
            connection.execute(insert(Run.__table__).values(
                id=run_id, suite="flagship", debate_id=None, provider="p", model="m", prompt_versions={},
                status="done", baseline=False, metrics={}, data=data, created_at=stamp, updated_at=stamp))
    engine.dispose()
    upgraded = Store(store_url)
    try:
        assert current(upgraded.engine) == head()
        assert [r["id"] for r in upgraded.runs(batch="b" * 32)] == ["a" * 32]
        assert [r["id"] for r in upgraded.runs(batch="c" * 32)] == ["c" * 32]
    finally:
        upgraded.close()


def echoed(store, said: str) -> tuple[str, str]:
    """A finished debate whose question and FOR explanation (a model echoing it) hold ``said``; its id and every
    row of every table, as text."""
    document = copy.deepcopy(fixture_dict())
    document["pro"]["arguments"][0]["explanation"] += f" (key {said})"
    debate_id = start_static(store, DebateRun.from_input(f"Is {said} safe to share?"), provider="openai",
                             model="gpt-4")
    store.finish_static(debate_id, document)
    with store.engine.connect() as connection:
        return debate_id, " ".join(str(row) for table in Base.metadata.sorted_tables
                                   for row in connection.execute(select(table)))


def test_api_keys_never_reach_the_store(store, monkeypatch):
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    _, dumped = echoed(store, secret)
    assert secret not in dumped and "[redacted]" in dumped


# every name SECRET_NAME marks (clearside/store/privacy.py: *_API_KEY, *_TOKEN, *_SECRET, *_PASSWORD), in
# either case; and names that only contain such a word, which are not secrets
SECRET_NAMES = ("OPENAI_API_KEY", "SERVICE_APIKEY", "GITHUB_TOKEN", "APP_SECRET", "DB_PASSWORD", "DB_PASSWD",
                "CLOUD_CREDENTIAL", "CLOUD_CREDENTIALS", "hf_token")
NOT_SECRET_NAMES = ("TOKENIZER_PATH", "SECRETARY_NAME", "PASSWORD_MIN_LENGTH")


def test_every_secret_suffix_is_redacted_from_what_is_saved_and_exported(store, monkeypatch):
    from clearside.modes import export_data

    values = {name: f"value-of-{name.lower()}-{n:04d}x" for n, name in enumerate(SECRET_NAMES + NOT_SECRET_NAMES)}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    debate_id, dumped = echoed(store, " ".join(values.values()))
    exported = json.dumps(export_data(store, debate_id))
    for name in SECRET_NAMES:
        assert values[name] not in dumped and values[name] not in exported, f"{name} was written"
    for name in NOT_SECRET_NAMES:
        assert values[name] in dumped and values[name] in exported, f"{name} is not a secret, yet was redacted"
    assert exported.count("[redacted]") >= len(SECRET_NAMES)


def test_a_bad_database_url_is_a_clear_store_error(tmp_path):
    with pytest.raises(StoreError, match="not a database URL"):
        Store("not a url")
    with pytest.raises(StoreError, match="SQLite and PostgreSQL"):
        Store("mysql://u@localhost/db")
    with pytest.raises(StoreError, match=r"\*\*\*.*Check DATABASE_URL") as caught:
        Store("postgresql+psycopg://me:hunter22@127.0.0.1:1/nothing")
    assert "hunter22" not in str(caught.value)


def test_plain_postgres_urls_use_psycopg(monkeypatch):
    from clearside.store import database_url

    monkeypatch.setenv("DATABASE_URL", "postgres://u:p@db/x")
    assert database_url() == "postgresql+psycopg://u:p@db/x"
    monkeypatch.delenv("DATABASE_URL")
    monkeypatch.setenv("CLEARSIDE_DATA", "/data/cs")
    assert database_url() == "sqlite:////data/cs/clearside.db"


def test_timestamps_come_back_as_utc(store):
    debate_id = store.create(NewDebate("static", "When?", provider="p", model="m"))
    created = datetime.fromisoformat(store.get(debate_id).created_at.replace("Z", "+00:00"))
    assert abs(created - datetime.now(UTC)) < timedelta(minutes=1)
    with store.read() as session:
        assert session.get(Debate, debate_id).kind == "static"


def test_live_transcripts_kept_as_files_by_an_earlier_version_are_adopted(tmp_path, monkeypatch):
    from clearside import store as store_module
    from clearside.live.exchange import adopt_live_files
    from clearside.store import new_id, open_store

    monkeypatch.setenv("CLEARSIDE_DATA", str(tmp_path))
    folder = tmp_path / "live"
    folder.mkdir()
    debate_id = new_id()
    (folder / f"{debate_id}.json").write_text(_transcript(debate_id, 2).model_dump_json(), encoding="utf-8")
    (folder / "broken.json").write_text("{", encoding="utf-8")
    store = open_store()
    try:
        assert not store.exists(debate_id), "opening a store adopts nothing: the entry points do"
        assert adopt_live_files(store) == [debate_id]
        assert load_live(store, debate_id) == _transcript(debate_id, 2)
        assert (folder / f"{debate_id}.json").exists() and (folder / "broken.json").exists(), "files are kept"
        assert adopt_live_files(store) == [], "adopted once"
    finally:
        store_module._stores.pop(store.url).close()


def test_the_command_line_adopts_live_files_before_its_command(tmp_path, monkeypatch, capsys):
    from clearside import store as store_module
    from clearside.cli import main
    from clearside.store import new_id, open_store

    monkeypatch.setenv("CLEARSIDE_DATA", str(tmp_path))
    (tmp_path / "live").mkdir()
    debate_id = new_id()
    (tmp_path / "live" / f"{debate_id}.json").write_text(_transcript(debate_id, 2).model_dump_json(),
                                                         encoding="utf-8")
    try:
        assert main(["list"]) == 0
        assert debate_id in capsys.readouterr().out, "the adopted debate is listed by the same command"
        assert load_live(open_store(), debate_id) == _transcript(debate_id, 2)
    finally:
        store_module._stores.pop(open_store().url).close()


def test_a_registered_secret_is_scrubbed_wherever_it_appears():
    from clearside.store.privacy import register_secret, scrub

    register_secret("streamlit-secrets-key-42")
    register_secret("short")  # too short to redact safely: ordinary words would vanish
    data = {"q": "my key is streamlit-secrets-key-42", "list": ["streamlit-secrets-key-42x"], "short": "short"}
    assert scrub(data) == {"q": "my key is [redacted]", "list": ["[redacted]x"], "short": "short"}


def test_processes_opening_a_new_sqlite_store_at_once_all_get_it(tmp_path):
    """Workers started together race for a new SQLite file's first locks; each must open the store."""
    import os
    import subprocess
    import sys

    code = "from clearside.store import open_store; open_store(); print('opened')"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'new.db'}"}
    started = [subprocess.Popen([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for _ in range(4)]
    outputs = [process.communicate(timeout=120)[0] for process in started]
    assert all(output.strip().endswith("opened") for output in outputs), outputs
