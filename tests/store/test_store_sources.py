"""A debate's sources in the store (docs/design/requirements.md#us-010): stored in order, each distinct text once,
copied with a duplicate, deleted with the debate, exported under ``sources_files`` and imported back, malformed entries
refused by name and field, and migration 0004 on a database made at 0003. On SQLite and on a real PostgreSQL server.

Sources are plain dicts here (the store knows no ``clearside.sources``), made from small texts whose ``sha256``
stands for the file's bytes.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
import time
from datetime import UTC, datetime

import pytest
from helpers import fixture_dict
from helpers import run_cli as run
from sqlalchemy import func, insert, select

from clearside.contract import jsonschema_errors, stamped, validate_document
from clearside.errors import InputError, NotFound
from clearside.modes import export_data, import_data
from clearside.static.exchange import SOURCES_FILES, VERSIONS, document_of
from clearside.store import Store
from clearside.store.db import current, head, make_engine, migrate
from clearside.store.exchange import migrate_document
from clearside.store.sources import link_sources
from clearside.store.tables import Debate, DebateSource, SourceText

REPORT = "Cities that removed cars from their centres saw retail footfall rise by a tenth within two years.\n"
NOTES = "# Notes\n\nCongestion charges cut traffic by 15% in the first year.\n"
TABLE = "city: Oslo; year: 2019; change: -12%\ncity: Ghent; year: 2017; change: -8%\n"


def source(ref: str, name: str, text: str, kind: str = "text", pages: int | None = None,
           raw: bytes | None = None) -> dict:
    """One source as the store takes it; ``raw`` the file's bytes (default: the text's UTF-8)."""
    data = raw if raw is not None else text.encode("utf-8")
    return {"ref": ref, "name": name, "sha256": hashlib.sha256(data).hexdigest(), "kind": kind, "text": text,
            "pages": pages, "size": len(data)}


def three() -> list[dict]:
    return [source("S1", "report.pdf", REPORT, "pdf", pages=2, raw=b"%PDF-1.7 report"),
            source("S2", "notes.md", NOTES, "markdown"), source("S3", "table.csv", TABLE, "csv")]


def rows(store: Store, table) -> int:
    with store.read() as session:
        return session.scalar(select(func.count()).select_from(table))


@pytest.fixture
def store(store_url):
    opened = Store(store_url)
    yield opened
    opened.close()


def finished(store: Store) -> str:
    return store.import_static(fixture_dict(), imported={})


# -- adding and reading -------------------------------------------------------------------------------------------

def test_sources_are_read_back_in_order_as_given(store):
    debate_id = finished(store)
    other = finished(store)
    assert store.sources(debate_id) == [] and store.source_counts([debate_id]) == {debate_id: 0}
    given = three()
    assert store.add_sources(debate_id, [{**s, "id": s["sha256"]} for s in given]) == 3  # extra keys ignored
    assert store.sources(debate_id) == given
    assert store.sources(debate_id, texts=False) == [{k: v for k, v in s.items() if k != "text"} for s in given]
    gone = "0123456789abcdef0123456789abcdef"
    assert store.source_counts([debate_id, other, gone]) == {debate_id: 3, other: 0, gone: 0}
    assert store.source_counts([]) == {}
    with pytest.raises(InputError, match="already has its sources"):
        store.add_sources(debate_id, [source("S4", "more.txt", "More text here.")])
    assert store.sources(debate_id) == given
    with pytest.raises(NotFound):
        store.add_sources(gone, given)
    assert store.add_sources(other, []) == 0 and store.sources(other) == []


def test_the_same_text_in_two_debates_is_stored_once(store):
    first, second = finished(store), finished(store)
    store.add_sources(first, three())
    store.add_sources(second, [source("S1", "renamed-notes.md", NOTES, "markdown"),
                               source("S2", "fresh.txt", "Only the second debate has this one.")])
    assert rows(store, SourceText) == 4 and rows(store, DebateSource) == 5
    assert store.sources(second)[0]["name"] == "renamed-notes.md", "the name is the debate's own"
    # The same bytes read two ways (another extension, another reader) are two texts: each debate gets its own
    third = finished(store)
    html = b"<p>Congestion charges cut traffic</p>"
    store.add_sources(third, [source("S1", "page.html", "Congestion charges cut traffic", "html", raw=html)])
    fourth = finished(store)
    store.add_sources(fourth, [source("S1", "page.txt", html.decode(), "text", raw=html)])
    assert store.sources(third)[0]["sha256"] == store.sources(fourth)[0]["sha256"]
    assert store.sources(third)[0]["text"] == "Congestion charges cut traffic"
    assert store.sources(fourth)[0]["text"] == html.decode()
    assert rows(store, SourceText) == 6


def test_a_duplicate_has_the_sources_and_a_text_goes_with_the_last_debate_holding_it(store):
    debate_id = finished(store)
    store.add_sources(debate_id, three())
    other = finished(store)
    store.add_sources(other, [source("S1", "notes.md", NOTES, "markdown")])
    copied = store.duplicate(debate_id)
    assert store.sources(copied) == store.sources(debate_id) == three()
    assert rows(store, SourceText) == 3 and rows(store, DebateSource) == 7
    store.delete(debate_id)
    assert store.source_counts([debate_id, copied]) == {debate_id: 0, copied: 3}
    assert rows(store, SourceText) == 3, "the copy still holds them"
    store.delete(copied)
    assert rows(store, DebateSource) == 1 and rows(store, SourceText) == 1, "only the other debate's text is left"
    assert store.sources(other) == [source("S1", "notes.md", NOTES, "markdown")]
    store.delete(other)
    assert rows(store, DebateSource) == 0 and rows(store, SourceText) == 0


def test_deleting_the_last_holder_while_another_debate_links_the_text_keeps_it(store):
    if store.dialect != "postgresql":
        pytest.skip("SQLite runs one writer at a time")
    notes = source("S1", "notes.md", NOTES, "markdown")
    old, new = finished(store), finished(store)
    store.add_sources(old, [notes])
    failed: list[BaseException] = []

    def delete_old() -> None:
        try:
            store.delete(old)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            failed.append(exc)

    deleting = threading.Thread(target=delete_old)
    with store.write() as session:
        link_sources(session, new, [notes])  # the text's row is held until this commits
        deleting.start()
        time.sleep(0.5)
        assert deleting.is_alive(), "the delete waits for the debate linking the text"
    deleting.join(10)
    assert not deleting.is_alive() and failed == []
    assert not store.exists(old) and store.sources(new) == [notes] and rows(store, SourceText) == 1


def test_a_source_text_is_kept_verbatim_and_its_name_scrubbed(store, monkeypatch):
    key = "sk-test-0123456789abcdef"
    monkeypatch.setenv("EXAMPLE_API_KEY", key)
    text = f"Our config once held the key {key} in plain text.\n"
    debate_id = finished(store)
    store.add_sources(debate_id, [source("S1", f"leak-{key}.txt", text)])
    kept = store.sources(debate_id)[0]
    assert kept["text"] == text, "a quote must verify against exactly what the user gave"
    assert kept["name"] == "leak-[redacted].txt"
    assert export_data(store, debate_id)[SOURCES_FILES][0]["text"] == text


REFUSED = [
    (lambda s: s[1].pop("sha256"), "sources[1] (S2 notes.md): it has no sha256"),
    (lambda s: s[0].update(sha256="ABC"), "sources[0] (S1 report.pdf): sha256 is 'ABC', not 64 lowercase hex"),
    (lambda s: s[0].update(sha256=s[0]["sha256"].upper()), "sources[0] (S1 report.pdf): sha256 is"),
    (lambda s: s[2].update(ref="T3"), "sources[2]: ref is 'T3', not a label like S1"),
    (lambda s: s[2].update(ref="S1"), "sources[2] (S1 table.csv): ref S1 is also sources[0]'s"),
    (lambda s: s[2].update(sha256=s[1]["sha256"]), "sources[2] (S3 table.csv): sha256 is also sources[1]'s"),
    (lambda s: s[1].update(kind="docx"), "sources[1] (S2 notes.md): kind is 'docx'; use text, markdown, html, pdf"),
    (lambda s: s[1].update(text="  \n"), "sources[1] (S2 notes.md): text is empty"),
    (lambda s: s[1].update(text=None), "sources[1] (S2 notes.md): text is NoneType, not text"),
    (lambda s: s[1].update(text="a\x00b"), "sources[1] (S2 notes.md): text holds a NUL character"),
    (lambda s: s[0].update(name=""), "sources[0] (S1): name is empty"),
    (lambda s: s[0].update(pages=0), "sources[0] (S1 report.pdf): pages is 0, not a page count from 1"),
    (lambda s: s[0].update(size=True), "sources[0] (S1 report.pdf): size is True, not a size in bytes from 1"),
    (lambda s: s.append("S4"), "sources[3]: it is str, not an object"),
]


def test_an_entry_that_cannot_be_stored_is_refused_by_place_and_field_and_nothing_is_kept(store):
    debate_id = finished(store)
    for change, message in REFUSED:
        given = three()
        change(given)
        with pytest.raises(InputError) as refused:
            store.add_sources(debate_id, given)
        assert message in str(refused.value), (message, str(refused.value))
    assert store.sources(debate_id) == [] and rows(store, SourceText) == 0
    assert store.add_sources(debate_id, three()) == 3, "then the right list is taken"


# -- export and import --------------------------------------------------------------------------------------------

def with_sources(store: Store) -> str:
    """A finished debate with three sources, whose document lists them (1.1 ``sources``)."""
    document = fixture_dict()
    document["sources"] = [{"ref": s["ref"], "sha256": s["sha256"], "name": s["name"], "kind": s["kind"],
                            **({"pages": s["pages"]} if s["pages"] else {})} for s in three()]
    debate_id = store.import_static(validate_document(stamped(document)).dump(), imported={})
    store.add_sources(debate_id, three())
    return debate_id


def test_export_carries_the_sources_and_import_restores_them(db, tmp_path, capsys):
    debate_id = with_sources(db)
    path = tmp_path / "debate.json"
    code, _, err = run(capsys, "export", debate_id, "--out", str(path))
    assert code == 0, err
    exported = json.loads(path.read_text(encoding="utf-8"))
    assert exported[SOURCES_FILES] == three() and VERSIONS not in exported
    document = document_of(exported)
    assert SOURCES_FILES not in document and jsonschema_errors(document) == [], "beside it, a valid v1 document"
    assert document == db.get(debate_id).document and [s["ref"] for s in document["sources"]] == ["S1", "S2", "S3"]

    code, out, err = run(capsys, "import", str(path))
    assert code == 0 and "Restored 3 sources (S1, S2, S3)" in err and "Set aside" not in err, err
    copy_id = out.strip()
    assert copy_id != debate_id and db.sources(copy_id) == three()
    assert rows(db, SourceText) == 3 and rows(db, DebateSource) == 6, "the imported texts are stored once"
    assert db.get(copy_id).data["imported"]["dropped"] == {}
    assert export_data(db, copy_id) == exported, "exported again, the same file"

    for reader in (("render", str(path), "--format", "md"), ("cruxes", str(path))):
        code, out, err = run(capsys, *reader)  # a reader of the document sets the key aside
        assert code == 0 and out.strip(), (reader, err)
    assert SOURCES_FILES in migrate_document(exported)[2], "a ClearSide without the key sets it aside on import"


def test_a_file_without_sources_files_imports_as_before(db, tmp_path, capsys):
    debate_id = finished(db)
    exported = export_data(db, debate_id)
    assert exported == db.get(debate_id).document and SOURCES_FILES not in exported
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(exported), encoding="utf-8")
    code, out, err = run(capsys, "import", str(path))
    assert code == 0 and err.count("\n") == 1 and err.startswith("Imported "), err
    assert db.sources(out.strip()) == [] and db.get(out.strip()).document == exported
    result = import_data(db, {**exported, SOURCES_FILES: []})
    assert db.sources(result.id) == [] and result.notes == []


def _entry(index: int, **changes):
    def change(data: dict) -> None:
        for name, value in changes.items():
            if value is ...:
                del data[SOURCES_FILES][index][name]
            else:
                data[SOURCES_FILES][index][name] = value
    return change


def _whole(value):
    def change(data: dict) -> None:
        data[SOURCES_FILES] = value
    return change


def _drop_entry(index: int):
    def change(data: dict) -> None:
        del data[SOURCES_FILES][index]
    return change


MALFORMED = [
    (_whole({"S1": {}}), "sources_files is dict, not a list of sources"),
    (_whole(["report.pdf"]), "sources_files[0]: it is str, not an object"),
    (_entry(0, ref=...), "sources_files[0]: it has no ref"),
    (_entry(1, ref="s2"), "sources_files[1]: ref is 's2', not a label like S1"),
    (_entry(1, name=7), "sources_files[1] (S2): name is int, not text"),
    (_entry(2, sha256="0" * 63), "sources_files[2] (S3 table.csv): sha256 is '000"),
    (_entry(2, kind="xlsx"), "sources_files[2] (S3 table.csv): kind is 'xlsx'; use text"),
    (_entry(0, text=""), "sources_files[0] (S1 report.pdf): text is empty"),
    (_entry(0, size=-1), "sources_files[0] (S1 report.pdf): size is -1, not a size in bytes from 1"),
    (_entry(0, pages="2"), "sources_files[0] (S1 report.pdf): pages is '2', not a page count"),
    (_entry(2, ref="S2"), "sources_files[2] (S2 table.csv): ref S2 is also sources_files[1]'s"),
    (_entry(1, sha256=hashlib.sha256(b"another file").hexdigest()),
     "sources_files[1] (S2 notes.md): sha256 is not that of the document's S2"),
    (_entry(1, kind="text"), "sources_files[1] (S2 notes.md): kind is 'text', but the document's S2 is 'markdown'"),
    (_drop_entry(2), "sources_files: the document's sources name S3, which it does not hold"),
]


def test_a_malformed_source_is_refused_by_name_and_field_and_nothing_is_imported(store):
    good = export_data(store, with_sources(store))
    before = store.list(limit=100)
    texts = rows(store, SourceText)
    for change, message in MALFORMED:
        data = copy.deepcopy(good)
        change(data)
        with pytest.raises(InputError) as refused:
            import_data(store, data, "debate.json")
        assert message in str(refused.value) and str(refused.value).startswith("Not imported: "), (
            message, str(refused.value))
        assert str(refused.value).endswith("Nothing was changed."), message
    assert store.list(limit=100) == before, "nothing imported half-way"
    assert rows(store, SourceText) == texts and rows(store, DebateSource) == 3


def test_the_store_refuses_what_it_cannot_hold_in_the_import_transaction(store):
    data = export_data(store, with_sources(store))
    before = store.list(limit=100)
    files = copy.deepcopy(data[SOURCES_FILES])
    files[2]["ref"] = "S1"
    with pytest.raises(InputError, match=r"sources\[2\] \(S1 table.csv\): ref S1 is also sources\[0\]'s"):
        store.import_static(document_of(data), imported={}, sources=files)  # the debate row came first
    assert store.list(limit=100) == before and rows(store, DebateSource) == 3


def test_fields_this_version_does_not_know_are_set_aside(store):
    data = export_data(store, with_sources(store))
    data[SOURCES_FILES][1]["encoding"] = "utf-8"
    result = import_data(store, data, "newer.json")
    assert any("Set aside 1 field(s)" in note for note in result.notes), result.notes
    assert store.get(result.id).data["imported"]["dropped"] == {"sources_files/1/encoding": "utf-8"}
    assert store.sources(result.id) == three()


# -- migration ----------------------------------------------------------------------------------------------------

def test_migration_0004_adds_the_tables_to_a_database_made_at_0003(store_url):
    engine = make_engine(store_url)
    migrate(engine, "0003")
    assert current(engine) == "0003"
    stamp = datetime(2026, 11, 1, tzinfo=UTC)
    with engine.begin() as connection:
        connection.execute(insert(Debate.__table__).values(
            id="0123456789abcdef0123456789abcdef", kind="static", status="done", title="Old", question="Old?",
            provider="p", model="m", prompt_versions={}, schema_version="1.0.0", document=None, data={},
            search_text="old?", parent_id=None, created_at=stamp, updated_at=stamp))
    engine.dispose()
    store = Store(store_url)
    try:
        assert current(store.engine) == head()  # 0004 and every later migration
        old = "0123456789abcdef0123456789abcdef"
        assert store.get(old).title == "Old" and store.sources(old) == []
        store.add_sources(old, three())
        assert store.sources(old) == three()
    finally:
        store.close()
