"""Imported maps (foreign AIF, clearside/store/maps.py) on SQLite and PostgreSQL: kept as imported, listed newest
first and by owner, deleted; unknown or malformed ids and owners refused with a message naming the fix."""

import pytest

from clearside.errors import InputError, NotFound
from clearside.store.maps import ANY_OWNER

MAP = {"nodes": [{"nodeID": 1, "text": "Cities should ban cars", "type": "I"}], "edges": []}
BROWSER = "ab" * 16


def test_an_imported_map_is_kept_listed_by_owner_and_deleted(db):
    first = db.save_map(MAP, title="Cities should ban cars", source="cars.json")
    second = db.save_map({**MAP, "locutions": []}, title="  ", source="other.json", owner=BROWSER)
    assert [row.id for row in db.maps()] == [second, first]
    assert [row.id for row in db.maps(owner=None)] == [first]
    assert [row.id for row in db.maps(owner=BROWSER)] == [second]
    assert db.maps(owner=ANY_OWNER)[0].title == "other.json", "an empty title falls back to the file's name"
    row = db.get_map(first.upper())
    assert (row.title, row.source, row.owner, row.data) == ("Cities should ban cars", "cars.json", None, MAP)
    row.data["nodes"].clear()
    assert db.get_map(first).data == MAP, "a row read is a copy"
    db.delete_map(first)
    assert [row.id for row in db.maps()] == [second]
    with pytest.raises(NotFound, match="No imported map has the id .*`python -m clearside maps` lists them"):
        db.get_map(first)


@pytest.mark.parametrize("bad", ["", "nope", "<script>" * 20, "0" * 31])
def test_a_malformed_map_id_is_not_found_and_named_safely(db, bad):
    with pytest.raises(NotFound) as caught:
        db.delete_map(bad)
    message = str(caught.value)
    assert "No imported map has the id" in message and len(message) < 200
    if len(bad) > 40:
        assert f"({len(bad)} characters)" in message, "a long value is cut, with its length said"


def test_a_map_that_is_not_an_object_or_an_owner_that_is_not_a_token_is_refused(db):
    with pytest.raises(InputError, match="must be an AIF object"):
        db.save_map([MAP], title="x", source="x.json")
    with pytest.raises(InputError, match="browser token"):
        db.save_map(MAP, title="x", source="x.json", owner="alice")
    assert db.maps() == []
