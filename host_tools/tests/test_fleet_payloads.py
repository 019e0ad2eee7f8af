"""Any payload into the dashboard's model (host_tools/fleet/model.py,
payload.py): of every message kind, a field of the wrong kind is dropped
and counted and the others kept; arbitrary JSON in every field never
raises and never leaves a wrong kind in the view the page renders."""

import json

import pytest
from hypothesis import given, strategies as st

from host_tools.fleet.model import FleetModel

ROOT = "parlour/hall/table/"

# One good message of each kind the model takes, as the firmware sends it
# (docs/fleet.md, Topics and payloads).
GOOD = {
    "state": {"state": "building", "fault": 10, "t": 5000},
    "fault": {"code": 10, "name": "lane_jam", "cause": "c", "fix": "f", "detail": {"lane": 2},
              "t": 5000},
    "cleared": {"code": 10, "t": 6000},
    "hand": {"winner": 2, "draw": False, "dealer": 2, "wins_in_row": 1, "streak": 0, "hands": 41,
             "t": 7000},
    "counters": {"cycles": 42, "hands": 41, "lifts": 42, "tiles_fed": [34, 34, 34, 34],
                 "faults": [[10, 1]]},
    "health": {"uptime": 8000, "heap_free": 9000, "boots": 1,
               "link": {"errors": 0, "dropped": 0, "overruns": 0},
               "mqtt": {"dropped": 0, "errors": 0, "refused": 0, "connects": 1, "sent": 9,
                        "skipped": 0}},
    "build": {"fw": "0.1.0", "build": "image-1"},
}
# Values of the wrong kind for every field, but a text for a text and a
# bool for a bool (left out below).
WRONG = ["7", -1, 1.5, True, [1, "x"], {"a": []}]
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=8)


def model():
    return FleetModel(clock=lambda: 1000.0, wall=lambda: 1.8e9)


def feed(m, leaf, data, tid="t1"):
    payload = data if isinstance(data, bytes) else json.dumps(data).encode()
    return m.feed(ROOT + tid + "/" + leaf, payload)


def t1(m):
    return m.snapshot()["tables"][0]


# -- what the page may rely on, written out here rather than taken from payload.py --

def _int(v, none=False):
    return (v is None and none) or (type(v) is int and v >= 0)


def _str(v, none=False):
    return (v is None and none) or type(v) is str


def _fields(d, kinds):
    """d is None or a dict of only these keys, each of its kind."""
    if d is None:
        return True
    return type(d) is dict and set(d) <= set(kinds) and all(kinds[k](d[k]) for k in d)


def _scalar_dict(d):
    return d is None or (type(d) is dict and all(
        type(k) is str and (v is None or type(v) in (int, bool, str)) for k, v in d.items()))


def kinds_hold(tb):
    """Every field of a table's view is of the kind page.html and mjctl
    fleet render."""
    f = tb["fault"]
    counts = {k: _int for k in ("errors", "dropped", "overruns", "refused", "connects", "sent",
                                "skipped")}
    return all([
        _str(tb["state"], True), _int(tb["dealer"], True), _int(tb["hands"], True),
        f is None or (_int(f["code"]) and _str(f["name"], True) and _scalar_dict(f["detail"])
                      and _int(f["t"], True)),
        _fields(tb["last_hand"], {"winner": lambda v: _int(v, True), "draw": lambda v: type(v) is bool,
                                  "dealer": _int, "wins_in_row": _int, "streak": _int,
                                  "hands": _int, "t": lambda v: _int(v, True)}),
        _fields(tb["counters"], {"cycles": _int, "hands": _int, "lifts": _int,
                                 "tiles_fed": lambda v: type(v) is list and all(map(_int, v)),
                                 "faults": lambda v: type(v) is list and all(
                                     type(p) is list and len(p) == 2 and all(map(_int, p))
                                     for p in v)}),
        _fields(tb["health"], {"uptime": _int, "heap_free": _int, "boots": _int,
                               "link": lambda v: _fields(v, counts) and v is not None,
                               "mqtt": lambda v: _fields(v, counts) and v is not None}),
        _fields(tb["build"], {"fw": _str, "build": _str}),
    ])


# -- the tests ------------------------------------------------------------------------------

@pytest.mark.parametrize("leaf", sorted(GOOD))
def test_a_good_message_of_every_kind_is_taken_whole(leaf):
    m = model()
    assert feed(m, leaf, GOOD[leaf])
    snap = m.snapshot()
    assert snap["dropped"] == 0 and snap["bad"] == 0
    tb = t1(m)
    view = {"hand": tb["last_hand"], "counters": tb["counters"], "health": tb["health"],
            "build": tb["build"]}
    if leaf in view:
        assert view[leaf] == GOOD[leaf]
    assert kinds_hold(tb)


def _paths(d, prefix=()):
    """(path, good value) of every field, nested ones by their own."""
    for k, v in d.items():
        if isinstance(v, dict) and k != "detail":
            yield from _paths(v, prefix + (k,))
        elif k not in ("cause", "fix"):        # not kept by the model (texts come by code)
            yield prefix + (k,), v


CASES = [(leaf, path, wrong) for leaf in sorted(GOOD) for path, good in _paths(GOOD[leaf])
         for wrong in WRONG if not (type(wrong) in (str, bool) and type(good) is type(wrong))]


@pytest.mark.parametrize("leaf, path, wrong", CASES,
                         ids=["%s.%s=%r" % (c[0], ".".join(c[1]), c[2]) for c in CASES])
def test_one_field_of_the_wrong_kind_is_dropped_and_counted_the_others_kept(leaf, path, wrong):
    data = json.loads(json.dumps(GOOD[leaf]))
    at = data
    for k in path[:-1]:
        at = at[k]
    at[path[-1]] = wrong
    m = model()
    feed(m, leaf, data)
    snap = m.snapshot()
    assert snap["dropped"] == 1 and t1(m)["dropped"] == 1, (leaf, path, wrong)
    assert snap["bad"] == 0
    tb = t1(m)
    assert kinds_hold(tb)
    stored = {"hand": tb["last_hand"], "counters": tb["counters"], "health": tb["health"],
              "build": tb["build"]}.get(leaf)
    if stored is not None:     # the message kept, less that one field
        expect = json.loads(json.dumps(GOOD[leaf]))
        at = expect
        for k in path[:-1]:
            at = at[k]
        del at[path[-1]]
        assert stored == expect


@given(st.sampled_from(sorted(GOOD)), st.data())
def test_arbitrary_json_in_every_field_never_raises_nor_stores_a_wrong_kind(leaf, data):
    """Each of the kind's fields (nested ones too) given any JSON value,
    after a good message of every kind: the view keeps its kinds and stays
    JSON a browser parses (no NaN, no Infinity)."""
    m = model()
    for k in sorted(GOOD):
        feed(m, k, GOOD[k])

    def fuzz(good):
        out = {}
        for k, v in good.items():
            if isinstance(v, dict) and k != "detail" and data.draw(st.booleans()):
                out[k] = fuzz(v)
            else:
                out[k] = data.draw(JSON)
        return out
    msg = fuzz(GOOD[leaf])
    feed(m, leaf, msg)
    snap = m.snapshot()
    json.dumps(snap, allow_nan=False)
    assert kinds_hold(t1(m)), (leaf, msg, t1(m))
    for e in snap["history"]:
        assert type(e["code"]) is int and _scalar_dict(e["detail"]) and _str(e["name"], True)


@pytest.mark.parametrize("payload", [
    b"", b"not json", b"\xff\xfe", b"[1, 2]", b'"text"', b"null", b"42",
    b"[" * 100000 + b"]" * 100000, b'{"a": ' * 50000 + b"1" + b"}" * 50000,
])
def test_a_payload_not_a_json_object_is_refused_and_counted(payload):
    m = model()
    for leaf in sorted(GOOD):
        assert feed(m, leaf, payload) is False
    assert m.snapshot()["bad"] == len(GOOD) and t1(m)["bad"] == len(GOOD)
    assert t1(m)["counters"] is None and t1(m)["state"] is None


def test_nan_and_huge_numbers_never_reach_the_view():
    m = model()
    feed(m, "state", b'{"state": "idle", "fault": NaN, "t": Infinity}')
    feed(m, "counters", b'{"cycles": 1e400, "hands": -Infinity, "lifts": 1}')
    tb = t1(m)
    assert tb["state"] == "idle" and tb["fault"] is None and tb["counters"] == {"lifts": 1}
    assert m.snapshot()["dropped"] == 4
    json.dumps(m.snapshot(), allow_nan=False)


def test_an_online_neither_true_nor_false_is_refused():
    m = model()
    feed(m, "online", b"true")
    feed(m, "online", b"<b>off</b>")
    assert t1(m)["online"] is True and t1(m)["bad"] == 1


@pytest.mark.parametrize("topic", [
    "parlour/<img src=x>/table/t1/state", "parlour/hall/table/t 1/state",
    "parlour/hall/table/" + "t" * 33 + "/state", "parlour/hall/table//state",
    "parlour/<b>/bridge",
])
def test_a_site_or_table_name_the_firmware_would_refuse_is_refused(topic):
    m = model()
    payload = b"0" if topic.endswith("bridge") else json.dumps(GOOD["state"]).encode()
    assert m.feed(topic, payload) is False
    snap = m.snapshot()
    assert snap["bad"] == 1 and snap["tables"] == [] and snap["bridges"] == {}


@pytest.mark.parametrize("leaf", ["roll", "table", "hands", "clock", "new_entry", "fault_of",
                                  "refused", "online_", "__init__", "snapshot"])
def test_a_leaf_that_names_one_of_the_models_own_methods_is_only_a_message(leaf):
    m = model()
    assert feed(m, leaf, GOOD["health"])
    tb = t1(m)
    assert tb["health"] is None and tb["messages"] == 1 and tb["online"]


def test_hostile_texts_are_kept_as_texts_for_the_page_to_escape():
    m = model()
    evil = '<img src=x onerror="window.pwned=1">'
    feed(m, "state", {"state": evil, "fault": 10, "t": 1})
    feed(m, "fault", {"code": 10, "name": evil, "detail": {evil: evil}, "t": 1})
    feed(m, "build", {"fw": evil, "build": "x" * 201})
    tb = t1(m)
    assert tb["state"] == evil and tb["fault"]["name"] == evil
    assert tb["fault"]["detail"] == {evil: evil}
    assert tb["build"] == {"fw": evil} and tb["dropped"] == 1       # a text past 200 characters
    assert kinds_hold(tb)


def test_a_fault_message_without_its_code_changes_nothing_but_is_counted():
    m = model()
    feed(m, "fault", {"code": "10", "name": "lane_jam", "t": 1})
    tb = t1(m)
    assert tb["fault"] is None and tb["faults_seen"] == {} and tb["dropped"] == 1
    assert m.snapshot()["history"] == []


def test_a_state_whose_fault_is_dropped_keeps_the_fault_it_had():
    m = model()
    feed(m, "state", {"state": "fault", "fault": 10, "t": 1})
    feed(m, "state", {"state": "fault", "fault": "none", "t": 2})
    tb = t1(m)
    assert tb["fault"]["code"] == 10 and tb["dropped"] == 1
    assert len(m.snapshot()["history"]) == 1
