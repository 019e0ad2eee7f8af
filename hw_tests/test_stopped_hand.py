"""A hand stopped by a fault is still a hand. From the walls coming up to
the hand's end, whatever stopped the table (each fault of the virtual
table, and a power cut), every request that could read a tile or move the
table is refused with `busy`, even with the technician's open session:
service_auth, jog, config_set, rfid_scan, rfid_audit, rfid_learn and
dice_test (docs/protocol.md, Who may send what). Nothing moves for them
and none of them reaches the service log."""

import hashlib
import hmac

import pytest

from host_tools.link.client import LinkError


class Case:
    def __init__(self, fault, name, where, start_with=False, id=None):
        self.fault = fault           # the virtual table's fault string
        self.name = name             # the fault the controller reports
        self.where = where           # the state it stops: lifting, dealer or in_hand
        self.start_with = start_with  # injected at power-on
        self.id = id or fault


CASES = [
    # In a hand, while the next set is built in the lanes below it.
    Case("lane_jam:2", "lane_jam", "in_hand"),
    Case("plate_stall", "plate_stall", "in_hand"),
    Case("sensor_stuck:lane_count1:1", "sensor_stuck", "in_hand"),
    Case("missing_tile:5m", "missing_tile", "in_hand"),
    Case("extra_tile:3p", "extra_tile", "in_hand"),
    Case("unknown_tag", "unknown_tag", "in_hand"),
    # In a hand, the walls in play.
    Case("rfid_timeout", "rfid_timeout", "in_hand"),
    Case("rfid_crc", "rfid_crc", "in_hand"),
    # The walls coming up, and the dealer's turn to roll.
    Case("lift_stuck:1", "lift_stuck", "lifting", start_with=True),
    # Unplugged from power-on: found when the walls are up and the display
    # first shows the dealer.
    Case("display_unplugged", "display_unplugged", "dealer", start_with=True),
]


def _mac(key, nonce):
    return hmac.new(key, bytes.fromhex(nonce) + b"service", hashlib.sha256).hexdigest()


def _assert_all_refused(target, session):
    """Every request that could read a tile or move the table: `busy`,
    saying why."""
    nonce = target.request("service_open")["nonce"]
    asked = [("service_auth", {"nonce": nonce, "mac": _mac(target.sim.key, nonce)}),
             ("jog", {"session": session, "actuator": "plate", "ms": 100}),
             ("jog", {"session": session, "actuator": "lane", "n": 2, "ms": 100}),
             ("config_set", {"session": session, "key": "timings.tick_ms", "value": 10}),
             ("rfid_scan", {"session": session}),
             ("rfid_audit", {"session": session}),
             ("rfid_learn", {"session": session}),
             ("dice_test", {"session": session, "n": 1})]
    for op, args in asked:
        with pytest.raises(LinkError) as e:
            target.request(op, **args)
        assert (e.value.code, "hand" in e.value.message) == ("busy", True), (op, e.value)


def _log(target):
    return [e[1] for e in target.link.service_log()]


def _stop_in(target, case):
    """Run to the state the case stops, inject its fault there; the fault
    event."""
    table = target.table
    target.start()
    if not case.start_with:
        target.wait_state(case.where)
        target.in_table(lambda: table.inject(case.fault))
    return target.wait_event(lambda e: e["ev"] == "fault", case.name)


@pytest.mark.needs_sim
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_every_service_request_is_refused_in_a_hand_stopped_by_a_fault(make_target, case):
    target = make_target(seed=2, faults=[case.fault] if case.start_with else [])
    session = target.link.open_service(target.sim.key)         # opened while idle
    fault = _stop_in(target, case)
    assert fault["name"] == case.name, fault
    target.drain()                     # the events queued before the fault, into history
    states = sorted((e["t"], e["state"]) for e in target.history
                    if e["ev"] == "state" and e["t"] <= fault["t"] and e["state"] != "fault")
    assert states[-1][1] == case.where, states
    t0 = target.status()["uptime"]
    _assert_all_refused(target, session)
    # Refused, not done: no motor ran for them, and the log has only the
    # session's opening (refusals are counted).
    target.wait_virtual(t0 + 500)
    assert not [c for c in target.output_changes(since=t0) if c[2]], target.output_changes(t0)
    assert _log(target) == ["opened"]
    # Repaired and cleared, the table is back in the hand: still refused.
    assert target.in_table(lambda: target.table.clear_fault(case.fault.split(":")[0]))
    assert target.request("clear")["cleared"] == fault["code"]
    target.wait_event(lambda e: e["ev"] == "cleared", "cleared")
    _assert_all_refused(target, session)


@pytest.mark.needs_sim
def test_a_hand_cut_by_the_power_stays_a_hand_until_a_new_cycle(target):
    """After a power cut in a hand the controller cannot follow that hand,
    but its walls still stand with their hidden tiles, and the players
    finish it by hand: until a `start` begins a new cycle, nothing that
    reads a tile or moves the table is done, a `clear` of the power_lost
    fault included."""
    table = target.table
    key = target.sim.key
    target.start()
    target.wait_state("in_hand")
    target.drain()

    def cut_and_take():
        # A tile taken from the middle of a wall while the power is off:
        # the controller cannot know it (docs/reliability.md, Resuming a hand).
        table.power_cut()
        table.players_take(40)
    target.in_table(cut_and_take)
    lost = target.wait_event(lambda e: e["ev"] == "fault", "power_lost after the restart")
    assert lost["name"] == "power_lost" and lost["detail"]["reason"] == "unexplained", lost
    session = "00" * 8                         # the session before the cut is gone
    with pytest.raises(LinkError) as e:        # and no other can be opened now
        target.link.open_service(key)
    assert e.value.code == "busy"
    _assert_all_refused(target, session)
    assert target.request("clear")["cleared"] == lost["code"]
    target.wait_state("idle")
    _assert_all_refused(target, session)       # idle, the cut hand's walls still up
    assert target.request("start")["state"] == "building"   # the cut hand is over
    session = target.link.open_service(key)
    with pytest.raises(LinkError) as e:
        target.request("jog", session=session, actuator="plate", ms=100)
    assert e.value.code == "refused" and "building" in e.value.message, e.value


@pytest.mark.needs_sim
def test_a_cycle_cut_while_building_leaves_service_open_after_the_clear(target):
    """A cut before the walls came up cut no hand: once cleared, the
    technician may work on the idle table."""
    target.start()
    target.wait_state("building")
    target.drain()
    target.in_table(target.table.power_cut)
    lost = target.wait_event(lambda e: e["ev"] == "fault", "power_lost after the restart")
    assert lost["name"] == "power_lost" and "cycle" in lost["detail"]["reason"], lost
    session = target.link.open_service(target.sim.key)           # a stopped table: allowed
    target.in_table(target.table.technician_empties_lanes)
    target.request("clear")
    target.wait_state("idle")
    assert target.request("dice_test", session=session, n=3)["counts"]
