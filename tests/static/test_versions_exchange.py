"""A debate's versions (its re-maps) travel with ``export`` and ``import``, and the store counts them per page.

The export file of a static debate is its v1 document; a debate with versions adds one top-level key,
``versions`` (clearside/static/exchange.py). Versions are hand-built re-mapped documents saved through
``remap.save_version`` (no model). On SQLite and on a real PostgreSQL server, as the store's other tests.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime

import pytest
from helpers import fixture_dict
from helpers import run_cli as run
from sqlalchemy import event, update

from clearside.contract import jsonschema_errors, stamped, validate_document
from clearside.errors import InputError
from clearside.modes import export_data, import_data
from clearside.static import remap
from clearside.static.exchange import VERSIONS, document_of
from clearside.store import NewDebate, Store
from clearside.store.exchange import migrate_document
from clearside.store.tables import DebateVersion

WHEN = (datetime(2025, 2, 3, 4, 5, 6, tzinfo=UTC), datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC))


def remapped(weights: dict[str, int] | None = None, reject: int | None = None) -> dict:
    """The fixture's debate re-mapped: the same cases, its synthesis reordered, and the ``remap`` record."""
    doc = fixture_dict()
    original = copy.deepcopy(doc["moderator"])
    doc["moderator"]["decision_hinges"] = list(reversed(doc["moderator"]["decision_hinges"]))
    stances = [] if reject is None else [{"side": "pro", "index": reject, "stance": "reject",
                                          "assumption": doc["pro"]["assumptions"][reject]}]
    doc["remap"] = {**({"weights": weights} if weights else {}), "stances": stances, "original": original,
                    "remapped_at": "2025-02-03T04:05:06Z"}
    return stamped(doc)


def with_versions(store: Store) -> str:
    """A finished static debate with two versions, saved at known past times."""
    debate_id = store.import_static(fixture_dict(), imported={})
    assert remap.save_version(store, debate_id, validate_document(remapped({"economic": 3})), name="ollama",
                              model="llama3.2") == 1
    assert remap.save_version(store, debate_id, validate_document(remapped(reject=1)), name="scripted",
                              model="script") == 2
    with store.write() as session:
        for number, moment in enumerate(WHEN, start=1):
            session.execute(update(DebateVersion).where(DebateVersion.debate_id == debate_id,
                                                        DebateVersion.number == number).values(created_at=moment))
    return debate_id


def kept(store: Store, debate_id: str) -> list[tuple]:
    return [(v.number, v.kind, v.label, v.provider, v.model, v.created_at, v.body)
            for v in store.versions(debate_id, bodies=True)]


@pytest.fixture
def store(store_url):
    opened = Store(store_url)
    yield opened
    opened.close()


# -- export and import --------------------------------------------------------------------------------------------

def test_export_carries_the_versions_and_import_restores_them(db, tmp_path, capsys):
    debate_id = with_versions(db)
    path = tmp_path / "debate.json"
    code, _, err = run(capsys, "export", debate_id, "--out", str(path))
    assert code == 0, err
    exported = json.loads(path.read_text(encoding="utf-8"))
    document = document_of(exported)
    assert VERSIONS not in document and jsonschema_errors(document) == [], "beside it, a valid v1 document"
    assert document == db.get(debate_id).document
    assert [{k: v for k, v in entry.items() if k != "body"} for entry in exported[VERSIONS]] == [
        {"number": 1, "kind": "remap", "label": "economic 3", "provider": "ollama", "model": "llama3.2",
         "created_at": "2025-02-03T04:05:06Z"},
        {"number": 2, "kind": "remap", "label": "reject P2", "provider": "scripted", "model": "script",
         "created_at": "2025-03-04T05:06:07Z"}]
    assert exported[VERSIONS][0]["body"]["weights"] == {"economic": 3}
    assert exported[VERSIONS][1]["body"]["stances"][0]["stance"] == "reject"

    code, out, err = run(capsys, "import", str(path))
    assert code == 0 and "Restored 2 versions (re-maps)" in err and "Set aside" not in err, err
    copy_id = out.strip()
    assert copy_id != debate_id and kept(db, copy_id) == kept(db, debate_id)
    assert db.get(copy_id).data["imported"]["dropped"] == {}
    again = export_data(db, copy_id)
    assert again == exported, "exported again, the same file"
    assert remap.save_version(db, copy_id, validate_document(remapped({"social": 2})), name="x") == 3

    code, out, err = run(capsys, "render", str(path), "--format", "md")  # a reader of the document ignores them
    assert code == 0 and "adopt a microservices architecture" in out, err
    assert VERSIONS in migrate_document(exported)[2], "a ClearSide without the key sets it aside on import"


def test_a_debate_without_versions_exports_and_imports_as_before(db, tmp_path, capsys):
    debate_id = db.import_static(fixture_dict(), imported={})
    exported = export_data(db, debate_id)
    assert exported == db.get(debate_id).document and VERSIONS not in exported
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(exported), encoding="utf-8")
    code, out, err = run(capsys, "import", str(path))
    assert code == 0 and err.count("\n") == 1 and err.startswith("Imported "), err
    assert db.versions(out.strip()) == [] and db.get(out.strip()).document == exported
    empty = {**exported, VERSIONS: []}
    result = import_data(db, empty)
    assert db.versions(result.id) == [] and result.notes == []


def good_file(store: Store) -> dict:
    return export_data(store, with_versions(store))


def _set(entry: int, path: str, value):
    """A change to ``versions[entry]`` at the dotted ``path`` (``...`` deletes it)."""
    def change(data: dict) -> None:
        node = data[VERSIONS][entry]
        *parents, last = path.split(".")
        for part in parents:
            node = node[part]
        if value is ...:
            del node[last]
        else:
            node[last] = value
    return change


def _whole(value):
    def change(data: dict) -> None:
        data[VERSIONS] = value
    return change


def _document(entry: int, edit):
    def change(data: dict) -> None:
        edit(data[VERSIONS][entry]["body"]["document"])
    return change


def _major(document: dict) -> None:
    document["meta"]["schema_version"] = "2.0.0"


def _no_moderator(document: dict) -> None:
    del document["moderator"]


def _copy_number(data: dict) -> None:
    data[VERSIONS][1]["number"] = 1


MALFORMED = [
    (_whole({"1": {}}), "versions is dict, not a list of versions"),
    (_whole(["remap"]), "versions[0]: it is str, not an object"),
    (_set(0, "number", ...), "versions[0]: number is None, not a whole number from 1"),
    (_set(1, "number", True), "versions[1]: number is True, not a whole number from 1"),
    (_set(1, "number", 0), "versions[1]: number is 0"),
    (_copy_number, "versions[1] (version 1): number 1 is also versions[0]'s"),
    (_set(1, "kind", "draft"), "versions[1] (version 2): kind is 'draft'; this ClearSide knows remap"),
    (_set(0, "created_at", "yesterday"), "versions[0] (version 1): created_at is 'yesterday', not a date and time"),
    (_set(1, "created_at", ...), "versions[1] (version 2): it has no created_at"),
    (_set(1, "label", 7), "versions[1] (version 2): label is int, not text"),
    (_set(0, "provider", "p" * 65), "versions[0] (version 1): provider is 65 characters long"),
    (_set(1, "body", "a document"), "versions[1] (version 2): body is str, not an object"),
    (_set(1, "body.document", ...), "versions[1] (version 2): body has no document"),
    (_set(0, "body.weights", {"economic": 7}), "versions[0] (version 1): body.weights is not a set of weights"),
    (_set(1, "body.stances", [{"side": "middle"}]), "versions[1] (version 2): body.stances[0] is not a stance"),
    (_document(1, _no_moderator), "versions[1] (version 2): body.document: Not a valid ClearSide v1 document"),
    (_document(1, _major), "versions[1] (version 2): body.document: meta.schema_version is 2.0.0, major version 2"),
]


def test_a_malformed_version_is_refused_by_name_and_nothing_is_imported(store):
    good = good_file(store)
    before = store.list(limit=100)
    for change, message in MALFORMED:
        data = copy.deepcopy(good)
        change(data)
        with pytest.raises(InputError) as refused:
            import_data(store, data, "debate.json")
        assert message in str(refused.value) and str(refused.value).startswith("Not imported: "), message
        assert str(refused.value).endswith("Nothing was changed."), message
    assert store.list(limit=100) == before, "nothing imported half-way"
    assert [v.number for v in store.versions(before.items[0].id)] == [1, 2]


def test_the_store_refuses_a_version_it_cannot_hold_and_keeps_nothing(store):
    data = good_file(store)
    before = store.list(limit=100)
    entry = {"number": 1, "kind": "remap", "label": "", "provider": "", "model": "", "created_at": WHEN[0],
             "body": data[VERSIONS][0]["body"]}
    with pytest.raises(InputError, match="Version number 1 is not a new whole number"):
        store.import_static(document_of(data), imported={}, versions=[entry, entry])  # the debate row came first
    assert store.list(limit=100) == before


def test_fields_this_version_does_not_know_are_set_aside_in_the_import_record(store):
    data = good_file(store)
    data[VERSIONS][0]["debate_id"] = "0123456789abcdef0123456789abcdef"
    data[VERSIONS][1]["body"]["note"] = "from a newer ClearSide"
    data[VERSIONS][1]["body"]["document"]["meta"]["stakeholders"] = ["residents"]
    result = import_data(store, data, "newer.json")
    assert any("Set aside 3 field(s)" in note for note in result.notes), result.notes
    assert store.get(result.id).data["imported"]["dropped"] == {
        "versions/0/debate_id": "0123456789abcdef0123456789abcdef", "versions/1/body/note": "from a newer ClearSide",
        "versions/1/body/document/meta/stakeholders": ["residents"]}
    assert [v.number for v in store.versions(result.id)] == [1, 2]
    assert "stakeholders" not in store.version(result.id, 2).body["document"]["meta"]


# -- counts for the Library ---------------------------------------------------------------------------------------

def test_version_counts_gives_a_whole_page_its_counts_in_one_query(store):
    two = with_versions(store)
    one = store.import_static(fixture_dict(), imported={})
    remap.save_version(store, one, validate_document(remapped({"ethical": 0})), name="x")
    none = store.create(NewDebate("live", "Q?", provider="p", model="m"))
    gone = "0123456789abcdef0123456789abcdef"
    statements: list[str] = []

    def seen(conn, cursor, statement, *args) -> None:
        statements.append(statement)

    event.listen(store.engine, "before_cursor_execute", seen)
    try:
        counts = store.version_counts([two, one, none, gone])
    finally:
        event.remove(store.engine, "before_cursor_execute", seen)
    assert counts == {two: 2, one: 1, none: 0, gone: 0}
    assert len([s for s in statements if s.lstrip().upper().startswith("SELECT")]) == 1
    assert store.version_counts([]) == {}
    copied = store.duplicate(two)
    store.delete(two)
    assert store.version_counts([two, copied]) == {two: 0, copied: 2}
