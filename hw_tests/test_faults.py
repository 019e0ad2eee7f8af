"""Every fault of the virtual table: detected by the firmware with its code,
a cause and a fix text, every output off, and the table recoverable once
the fault is repaired and cleared (a full cycle with 36 tiles a side).
"""

import os

import pytest

from host_tools.link.client import LinkError
from hw_tests.harness import (assert_fault_described, assert_walls_are_the_set,
                              lifter_conflicts)


from hw_tests.harness import HEAP_BUDGET as HEAP   # the firmware's heap on the virtual table


class Case:
    def __init__(self, fault, code, name, found_in, resume, detail=None, at_boot=False,
                 when=None, seed=1, id=None):
        self.fault = fault          # the virtual table's fault string
        self.code = code
        self.name = name
        self.found_in = found_in    # the state the controller was in when it found it
        self.resume = resume        # where `clear` takes it back
        self.detail = detail or {}  # fields the fault's detail must have
        self.at_boot = at_boot      # found before any `start`
        self.when = when            # inject when when(table) holds (else at power-on)
        self.seed = seed
        self.id = id or fault

    @property
    def kind(self):
        return self.fault.split(":")[0]


CASES = [
    Case("lane_jam:2", 10, "lane_jam", "building", "building", {"lane": 2}),
    Case("plate_stall", 11, "plate_stall", "building", "building"),
    Case("lift_stuck:1", 12, "lift_stuck", "lifting", "lifting", {"side": 1}),
    Case("sensor_stuck:lift_top2:1", 13, "sensor_stuck", None, "idle", {"side": 2},
         at_boot=True),
    # A count sensor stuck high while its lane builds: after 8 tiles, and
    # after 20 (the stuck edge counts as a tile; tiles stacked while it is
    # stuck are not seen).
    Case("sensor_stuck:lane_count1:1", 13, "sensor_stuck", "building", "building",
         {"lane": 1, "sensor": "lane_count"}, when=lambda table: table.lanes[1].stacked >= 8,
         id="sensor_stuck:lane_count1:1-after-8"),
    Case("sensor_stuck:lane_count1:1", 13, "sensor_stuck", "building", "building",
         {"lane": 1, "sensor": "lane_count"}, when=lambda table: table.lanes[1].stacked >= 20,
         id="sensor_stuck:lane_count1:1-after-20"),
    Case("missing_tile:5m", 20, "missing_tile", "building", "building", {"tiles": ["5m"]}),
    Case("extra_tile:3p", 21, "extra_tile", "building", "building", {"tiles": ["3p"]}),
    Case("unknown_tag", 22, "unknown_tag", "building", "building", {"uid": "deadbeef"}),
    Case("rfid_timeout", 23, "rfid_timeout", "building", "building"),
    Case("rfid_crc", 24, "rfid_crc", "building", "building"),
    Case("display_unplugged", 30, "display_unplugged", "dealer", "dealer"),
    # Power off at 10 virtual seconds, while building: the launcher restarts
    # the firmware, which reads the lanes and waits for the clear to build on.
    Case("power_cut:10", 41, "power_lost", None, "building", {"reason": "mid_build"},
         at_boot=True),
]


def _last_state_before(target, t):
    states = [e for e in target.history if e["ev"] == "state" and e["t"] <= t
              and e["state"] != "fault"]
    return states[-1]["state"] if states else None


def _detected(target, table, case):
    """The fault's event, once the firmware has found it: at boot, or in
    the cycle, in the state it was found in, and newest in its log."""
    if case.at_boot:
        if case.kind != "power_cut":
            target.wait_status(lambda st: st["fault"], "a fault found at boot", 5000)
        else:
            target.start()              # the cut comes while building
            target.wait_status(lambda st: st["fault"], "power_lost after the restart",
                               60000)
        ev = target.request("faults", n=1)["faults"][0]
    else:
        if case.when:
            target.when_table(lambda: case.when(table), lambda: table.inject(case.fault))
        cycle = target.run_cycle()
        assert cycle.fault is not None, "%s was not detected: the cycle ended %r" % (
            case.fault, cycle)
        ev = cycle.fault
        assert _last_state_before(target, ev["t"]) == case.found_in, target.history
        newest = target.request("faults", n=1)["faults"][0]
        assert (newest["code"], newest["t"], newest["detail"]) == (
            ev["code"], ev["t"], ev["detail"]), (newest, ev)
    assert (ev["code"], ev["name"]) == (case.code, case.name), ev
    for k, v in case.detail.items():
        assert ev["detail"].get(k) == v, (k, ev)
    described = assert_fault_described(ev)
    assert described["code"] == case.code
    return ev


def _assert_every_output_off(target, table, case, ev, tick):
    """Every output off within one control tick of the fault, and none
    driven after it; a power cut's at the cut itself."""
    t_fault = ev["t"]
    st = target.wait_virtual(t_fault + 5 * tick)
    assert st["state"] == "fault" and st["fault"]["code"] == case.code, st
    on = {k: v for k, v in target.outputs_at(t_fault + tick).items() if v}
    assert not on, "outputs still on a tick after the fault at %d ms: %s" % (t_fault, on)
    driven = [c for c in target.output_changes(since=t_fault) if c[2]]
    assert not driven, "outputs driven after the fault: %s" % driven
    assert not [k for k, v in target.in_table(lambda: dict(table.outputs)).items() if v]
    if case.kind == "power_cut":
        cut = [e[0] for e in target.table_log() if e[1] == "table" and e[3] == "power_cut"]
        assert len(cut) == 1 and cut[0] <= t_fault, cut
        assert not [k for k, v in target.outputs_at(cut[0]).items() if v]
        assert target.sim is None or target.sim.restarts == 1


def _repaired_cleared_and_cycled(target, table, case):
    """The fault repaired on the table and cleared: the controller goes
    back where the case says, and the next cycle ends in a hand."""
    if case.kind != "power_cut":       # a build cut: the lanes keep their walls
        repaired = target.in_table(lambda: table.clear_fault(case.kind))
        assert repaired, table.active_faults
    target.drain()
    answer = target.request("clear")
    assert answer["cleared"] == case.code, answer
    cleared = target.wait_event(lambda e: e["ev"] == "cleared", "cleared")
    assert cleared["code"] == case.code and cleared.get("resume") == case.resume, cleared
    if case.resume == "idle":
        assert target.status()["state"] == "idle"
        after = target.run_cycle()
    else:
        after = target.follow_cycle()
    assert after.fault is None, "after clearing %s: %s" % (case.fault, after.fault)
    assert after.ok, after


@pytest.mark.needs_table
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_fault_is_detected_all_motors_stop_and_the_table_recovers(make_target, case):
    # In the heap budget: a fault's detail, its event and the recovery
    # must fit there too, not only a clean cycle.
    target = make_target(seed=case.seed, faults=[] if case.when else [case.fault],
                         heap=HEAP if make_target.sim else None)
    table = target.table
    tick = target.timing("tick_ms")
    ev = _detected(target, table, case)
    _assert_every_output_off(target, table, case, ev, tick)
    _repaired_cleared_and_cycled(target, table, case)
    # The walls in play: built after the clear, or before the fault when it
    # came later (lift_stuck, display_unplugged).
    walls = [e for e in target.history if e["ev"] == "walls"]
    assert walls and walls[-1]["tiles_per_side"] == [36] * 4, walls
    assert_walls_are_the_set(target, 36)
    st = target.status()
    assert st["fault"] is None and st["state"] == "in_hand", st
    # One set lifted, counted once (a lift cleared mid-move is not a second).
    counted = target.request("counters")
    assert counted["lifts"] == 1 and counted["tiles_fed"] == [36] * 4, counted
    assert lifter_conflicts(target) == []
    assert table.errors == [], table.errors
    with pytest.raises(LinkError) as e:   # a hand is on: no second cycle
        target.request("start")
    assert e.value.code == "busy"


@pytest.mark.needs_sim
def test_a_hung_loop_is_reset_by_the_watchdog_and_comes_back_with_motors_off(target):
    """The firmware's process frozen mid-build (SIGSTOP: a loop that never
    comes back). The board's watchdog is fed only by the loop, so it bites
    `_WATCHDOG_MS` after the last feed: the virtual table's time goes on
    without the firmware (host_tools/sim/bus.py, stall_s), every output
    goes off, the controller restarts, moves nothing, and says a cycle was
    cut short (power_lost)."""
    import os
    import signal
    target.start()
    t0 = target.wait_state("building")["t"]
    st = target.wait_virtual(t0 + 2000)            # plate and lanes running
    assert st["state"] == "building"
    running = [k for k, v in target.outputs_at(st["uptime"]).items() if v]
    assert running, "nothing ran before the hang"
    os.kill(target.sim.proc.pid, signal.SIGSTOP)
    target.wait_event(lambda e: e["ev"] == "fault" and e["name"] == "power_lost",
                      "the restarted controller's power_lost")
    assert target.sim.restarts == 1
    resets = [e[0] for e in target.table_log() if e[1] == "table" and e[3] == "watchdog"]
    assert len(resets) == 1, target.table_log()[-5:]
    # It bit the watchdog's time (2 s) after the loop's last feed, which
    # came after the status above (the loop fed it at every tick till then).
    assert resets[0] - 2000 >= st["uptime"] - 10, (st["uptime"], resets)
    assert not [k for k, v in target.outputs_at(resets[0]).items() if v]
    after = target.status()
    assert after["fault"]["name"] == "power_lost"
    target.wait_virtual(after["uptime"] + 1000)
    assert not [c for c in target.output_changes(since=resets[0]) if c[2]]   # nothing moved


@pytest.mark.long
@pytest.mark.needs_sim
def test_counters_and_the_fault_log_survive_power_cuts_at_random_instants(target):
    """Power cut at random instants of cycles (the firmware killed wherever
    it is, a save of its counters included): after every restart the
    counters file is whole (no `lost`, no failed save), the counters never
    go back, and the fault log keeps its faults (power_lost among them)."""
    import random
    rng = random.Random(7)
    table = target.table
    assert target.run_cycle().ok                # something to keep: a cycle, a lift
    prev = target.request("counters")
    assert (prev["cycles"], prev["lifts"]) == (1, 1), prev
    outcomes = []
    for cut in range(10):
        st = target.status()
        if st["state"] == "idle":
            target.start()
        target.wait_virtual(st["uptime"] + rng.randrange(200, 30000))
        target.drain()
        target.in_table(table.power_cut)
        ev = target.wait_event(lambda e: (e["ev"] == "fault" and e["name"] == "power_lost")
                               or (e["ev"] == "state" and e["state"] in ("idle", "resuming")),
                               "the restart")
        if ev["ev"] == "state" and ev["state"] == "resuming":     # a hand comes back, or not
            ev = target.wait_event(lambda e: e["ev"] == "fault" or (
                e["ev"] == "state" and e["state"] in ("in_hand", "dealer")), "the resume")
        assert target.sim.restarts == cut + 1
        c = target.request("counters")
        assert "lost" not in c and c["unsaved"] == 0, c
        for k in ("cycles", "hands", "lifts"):
            assert c[k] >= prev[k], (k, prev, c)
        assert c["tiles_fed"] == [max(a, b) for a, b in zip(c["tiles_fed"], prev["tiles_fed"])]
        saved = target.sim.saved("counters.json")
        assert saved["cycles"] == c["cycles"] and saved["lifts"] == c["lifts"]
        prev = c
        if ev["ev"] == "fault" and ev["detail"].get("reason") in ("mid_build", "mid_lift"):
            target.request("clear")            # a build or a lift the clear resumes
            target.wait_event(lambda e: e["ev"] == "state" and e["state"] in (
                "building", "dealer"), "the cycle resumed")
        elif ev["ev"] == "fault":
            target.in_table(table.technician_empties_lanes)
            target.request("clear")
            target.wait_state("idle")
        outcomes.append("lost" if ev["ev"] == "fault" else "back" if ev["state"] != "idle"
                        else "idle")
    assert prev["cycles"] >= 1
    # Each cut: power_lost (kept in the fault log), a hand brought back, or idle.
    lost = [f for f in target.request("faults", n=16)["faults"] if f["name"] == "power_lost"]
    assert len(lost) == min(outcomes.count("lost"), 16), (lost, outcomes)
    assert dict(map(tuple, c["faults"])).get(41, 0) == outcomes.count("lost"), c


@pytest.mark.needs_sim
def test_a_reader_that_stops_in_a_hand_is_one_fault(make_target):
    """The reader goes silent while the hand follower reads the walls in
    play: one rfid_timeout, and once it is repaired and cleared, no second
    one. (A follower that asked again on the very tick the timeout was
    found, before the table stopped, would send that request to the silent
    reader, and it would time out after the clear: two faults for one.)"""
    target = make_target(seed=2, heap=HEAP)
    table = target.table
    cycle = target.run_cycle()
    assert cycle.ok, cycle
    assert target.status()["state"] == "in_hand"
    target.in_table(lambda: table.inject("rfid_timeout"))
    first = target.wait_event(lambda e: e["ev"] == "fault", "the reader's fault")
    assert first["name"] == "rfid_timeout", first
    assert target.in_table(lambda: table.clear_fault("rfid_timeout"))
    target.drain()
    assert target.request("clear")["cleared"] == 23
    st = target.wait_virtual(first["t"] + 5000)    # many reads of every side
    assert st["state"] == "in_hand" and st["fault"] is None, st
    faults = [e for e in target.history if e["ev"] == "fault"]
    assert faults == [first], faults
