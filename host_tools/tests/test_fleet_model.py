"""The dashboard's view of the tables (host_tools/fleet/model.py): the
topics of docs/fleet.md folded in, offline by the last-will or by
silence, hands today and time in use, the fault history; bad messages
counted, never a crash."""

import json

from hypothesis import given, strategies as st

from host_tools.fleet.model import BOOT_STALE_S, STALE_S, FleetModel

ROOT = "parlour/hall/table/"


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def model(**kw):
    clock = Clock()
    return FleetModel(clock=clock, wall=lambda: 1.8e9 + clock.now, **kw), clock


def feed(m, tid, leaf, data):
    payload = data if isinstance(data, bytes) else json.dumps(data).encode()
    return m.feed(ROOT + tid + "/" + leaf, payload)


def table(m, tid):
    return [tb for tb in m.snapshot()["tables"] if tb["id"] == tid][0]


def test_an_expected_table_not_heard_from_is_offline():
    m, _ = model(expect=[("hall", "t1")])
    tb = table(m, "t1")
    assert tb["online"] is False and tb["offline"] == "never"


def test_a_fault_shows_with_its_code_until_cleared_and_stays_in_the_history():
    m, clock = model()
    feed(m, "t1", "online", b"true")
    feed(m, "t1", "state", {"state": "building", "fault": None, "t": 10})
    feed(m, "t1", "state", {"state": "fault", "fault": 10, "t": 20})
    feed(m, "t1", "fault", {"code": 10, "name": "lane_jam", "cause": "c", "fix": "f",
                            "detail": {"lane": 2}, "t": 20})
    tb = table(m, "t1")
    assert tb["online"] and tb["state"] == "fault"
    assert tb["fault"]["code"] == 10 and tb["fault"]["detail"] == {"lane": 2}
    hist = m.snapshot()["history"]
    assert len(hist) == 1 and hist[0]["cleared_at"] is None      # one entry: state, then fault
    clock.now += 5
    feed(m, "t1", "cleared", {"code": 10, "t": 30})
    feed(m, "t1", "state", {"state": "building", "fault": None, "t": 30})
    assert table(m, "t1")["fault"] is None
    hist = m.snapshot()["history"]
    assert len(hist) == 1 and hist[0]["cleared_at"] is not None
    assert table(m, "t1")["faults_seen"] == {"10": 1}


def test_the_last_will_makes_it_offline_at_once():
    m, _ = model()
    feed(m, "t1", "online", b"true")
    assert table(m, "t1")["online"]
    feed(m, "t1", "online", b"false")
    tb = table(m, "t1")
    assert tb["online"] is False and tb["offline"] == "will"


def test_a_parlour_whose_bridge_is_down_has_its_tables_out_of_sight():
    m, _ = model()
    feed(m, "t1", "online", b"true")
    m.feed("parlour/hall/bridge", b"1")
    assert table(m, "t1")["online"]
    m.feed("parlour/hall/bridge", b"0")
    tb = table(m, "t1")
    assert tb["online"] is False and tb["offline"] == "bridge"
    assert m.snapshot()["bad"] == 0


def test_a_silent_table_is_offline_after_the_timeout_and_back_when_it_speaks():
    """At twice real time (make fleet's pace) health comes every 5 s: the
    timeout is STALE_S."""
    m, clock = model()
    feed(m, "t1", "online", b"true")
    feed(m, "t1", "state", {"state": "building", "fault": None, "t": 0})
    clock.now += 3
    feed(m, "t1", "state", {"state": "lifting", "fault": None, "t": 6000})
    assert table(m, "t1")["pace"] == 2.0 and table(m, "t1")["stale_after_s"] == STALE_S
    clock.now += STALE_S - 0.1
    assert table(m, "t1")["online"]
    clock.now += 0.2
    tb = table(m, "t1")
    assert tb["online"] is False and tb["offline"] == "silent"
    feed(m, "t1", "health", {"uptime": 30000})
    assert table(m, "t1")["online"]


def test_health_slower_than_the_timeout_stretches_it():
    """A table whose health comes every 10 s of wall time (a real one) is
    not offline between two of them: 1.5 intervals."""
    m, clock = model()
    feed(m, "t1", "health", {"uptime": 0})
    assert table(m, "t1")["stale_after_s"] == BOOT_STALE_S       # its pace not known yet
    clock.now += 10
    feed(m, "t1", "health", {"uptime": 10000})
    clock.now += 14.9
    assert table(m, "t1")["online"] and table(m, "t1")["stale_after_s"] == 15.0
    clock.now += 0.2
    assert table(m, "t1")["offline"] == "silent"


def test_a_table_the_machine_slows_gets_its_timeout_from_its_pace():
    """A virtual table at a third of real time sends its health every
    15 s of wall time: its timeout is 22.5 s from its pace, before a
    second health has come; a table that starts again starts a new clock."""
    m, clock = model()
    feed(m, "t1", "health", {"uptime": 0})
    clock.now += 3
    feed(m, "t1", "state", {"state": "building", "fault": None, "t": 1000})
    tb = table(m, "t1")
    assert abs(tb["pace"] - 1 / 3.0) < 0.01 and abs(tb["stale_after_s"] - 22.5) < 0.5
    clock.now += 20
    assert table(m, "t1")["online"]
    feed(m, "t1", "health", {"uptime": 0})          # a new start
    assert table(m, "t1")["pace"] is None


def test_hands_today_count_from_the_first_counters_and_time_in_use_from_the_states():
    m, clock = model()
    feed(m, "t1", "counters", {"hands": 40, "cycles": 41, "lifts": 41,
                               "tiles_fed": [0, 0, 0, 0], "faults": []})
    feed(m, "t1", "state", {"state": "idle", "fault": None, "t": 0})
    clock.now += 3
    feed(m, "t1", "state", {"state": "in_hand", "fault": None, "t": 3000})
    clock.now += 4
    feed(m, "t1", "hand", {"winner": 1, "draw": False, "dealer": 1, "wins_in_row": 1,
                           "streak": 0, "hands": 41, "t": 7000})
    tb = table(m, "t1")
    assert tb["hands"] == 41 and tb["hands_today"] == 1 and tb["dealer"] == 1
    assert tb["in_use_s"] == 4            # in_hand only; idle is not use


@given(st.text(max_size=40), st.binary(max_size=60))
def test_any_message_is_taken_or_counted_bad_never_a_crash(topic, payload):
    m, _ = model()
    for t in (topic, ROOT + "t1/" + topic, ROOT + "t1/state", ROOT + "t1/fault"):
        m.feed(t, payload)
    snap = m.snapshot()
    json.dumps(snap)
    assert snap["messages"] + snap["bad"] >= 2


def test_the_pages_health_interval_is_the_firmwares():
    """The page's timeout rests on how often a table sends its health:
    8 s must be at least 1.5 of the firmware's intervals."""
    from firmware.link import telemetry
    from host_tools.fleet import model as fleet_model
    assert fleet_model.HEALTH_MS == telemetry._HEALTH_MS
    assert STALE_S * 1000 >= fleet_model.STALE_HEALTH * telemetry._HEALTH_MS
    assert STALE_S < 10
