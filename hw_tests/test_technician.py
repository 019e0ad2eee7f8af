"""The technician's tools that move, write or read tags: the
self-test, config set, and the RFID audit and learn. Each needs a service
session and is refused during a hand; what they write goes to the board's
flash (the virtual table's store), atomically."""

import json

import pytest

from host_tools.cli import selftest
from host_tools.link.client import LinkError, service_entry


def _refusal(target, op, **args):
    with pytest.raises(LinkError) as e:
        target.request(op, **args)
    return e.value.code, e.value.message


def _scan(target, session):
    target.request("rfid_scan", session=session)
    return target.wait_event(lambda e: e["ev"] == "scanned", "scanned")


# -- self-test ---------------------------------------------------------------

@pytest.mark.needs_sim
def test_the_selftest_passes_on_a_sound_table_with_measured_times(target):
    said = []                  # the progress line's calls, each before its item runs
    items = selftest.run(target.link, target.sim.key, timeout=target.wait_s,
                         starting=lambda name, ms: said.append((name, ms)),
                         progress=lambda r: said.append(r["item"]))
    assert [r["item"] for r in items] == ["plate"] + ["lane %d" % n for n in range(4)] + \
        ["lifter %d" % n for n in range(4)]
    assert said[:4] == [("plate", 2000), "plate", ("lane 0", 300), "lane 0"], said
    assert said[-2:] == [("lifter 3", 3000), "lifter 3"], said
    assert all(r["pass"] for r in items), items
    plate = items[0]
    rev_ms = target.timing("plate_rev_ms")          # the model turns once per this
    assert plate["ms"] == selftest.PLATE_MS and abs(plate["ms_per_rev"] - 1000) <= 250, plate
    for r in items[5:]:
        # Up 1 s, then down to the bottom switch: the model lowers faster
        # than it lifts, so the way back is shorter, and never instant.
        assert r["away_ms"] == selftest.AWAY_MS and 200 < r["back_ms"] < selftest.AWAY_MS, r
    assert rev_ms > 0
    log = [service_entry(e)["what"] for e in target.link.service_log()]
    assert log[-1] == "closed: by the host" and log.count("jog") >= 9


@pytest.mark.needs_sim
@pytest.mark.table(faults=["lift_stuck:2", "plate_stall"])
def test_the_selftest_fails_the_items_that_do_not_move_and_names_the_fault(target):
    items = {r["item"]: r for r in selftest.run(target.link, target.sim.key,
                                                   timeout=target.wait_s)}
    assert not items["plate"]["pass"] and "no rotation" in items["plate"]["why"]
    assert not items["lifter 2"]["pass"] and "lift_stuck" in items["lifter 2"]["why"]
    others = [r for name, r in items.items() if name not in ("plate", "lifter 2")]
    assert all(r["pass"] for r in others), others
    assert target.status()["fault"]["name"] == "lift_stuck"     # left for the technician


@pytest.mark.needs_sim
def test_the_selftest_is_refused_during_a_hand(target):
    target.run_cycle()
    with pytest.raises(LinkError) as e:
        selftest.run(target.link, target.sim.key, timeout=target.wait_s)
    assert e.value.code == "busy"


# -- config set --------------------------------------------------------------

def _flash_config(target):
    return json.loads(target.sim.stored("config.json"))


def _flash_tags(target):
    """The tag table's lines on the flash, its comments left out."""
    text = target.sim.stored("tags.txt").decode()
    return [line.split() for line in text.splitlines() if not line.startswith("#")]


@pytest.mark.needs_sim
def test_config_set_checks_the_whole_config_and_writes_it_atomically(target):
    before = _flash_config(target)
    session = target.link.open_service(target.sim.key)
    out = target.request("config_set", session=session, key="timings.lift_up_ms", value=4200)
    assert (out["key"], out["value"], out["restart"]) == ("timings.lift_up_ms", 4200, True)
    after = _flash_config(target)
    assert after["timings"]["lift_up_ms"] == 4200
    before["timings"]["lift_up_ms"] = 4200
    assert after == before                                  # nothing else changed
    assert target.sim.stored("config.json.new") is None
    assert target.request("config_get", key="timings")["value"] == \
        [[k, after["timings"][k]] for k in sorted(after["timings"])]
    # A value the validator refuses, and a key the config does not have:
    # refused with the reason, and the file is left as it was.
    code, msg = _refusal(target, "config_set", session=session, key="timings.lift_up_ms",
                         value="fast")
    assert code == "config_invalid" and "lift_up_ms" in msg
    code, msg = _refusal(target, "config_set", session=session, key="timings.warp_ms", value=1)
    assert code == "not_found" and "warp_ms" in msg
    assert _flash_config(target) == after
    # Without a session.
    code, _ = _refusal(target, "config_set", session="0" * 16, key="tile_sets", value=1)
    assert code == "no_session"
    assert _flash_config(target) == after


@pytest.mark.needs_sim
def test_config_set_and_the_rfid_scan_are_refused_while_the_table_builds(target):
    session = target.link.open_service(target.sim.key)
    target.start()
    target.wait_state("building")
    for op, args in (("config_set", {"key": "tile_sets", "value": 1}), ("rfid_scan", {})):
        code, msg = _refusal(target, op, session=session, **args)
        assert code == "refused" and "building" in msg, (op, msg)


# -- RFID audit and learn ----------------------------------------------------

@pytest.mark.needs_sim
@pytest.mark.table(faults=["missing_tile:5m"])
def test_an_audit_after_a_missing_tile_fault_names_the_tile(target):
    target.start()
    ev = target.wait_event(lambda e: e["ev"] == "fault", "fault")
    assert ev["name"] == "missing_tile"
    session = target.link.open_service(target.sim.key)
    code, msg = _refusal(target, "rfid_audit", session=session)       # no scan yet
    assert code == "refused" and "rfid_scan" in msg
    done = _scan(target, session)
    assert done["sides"] == 4 and done["tags"] == 143
    out = target.request("rfid_audit", session=session)
    assert (out["tags"], out["unknown"], out["kinds"]) == (143, 0, 1)
    assert out["tiles"] == [["5m", 3, 4]]
    code, _ = _refusal(target, "rfid_audit")                          # no session
    assert code == "no_session"


@pytest.mark.needs_sim
def test_learn_writes_a_reference_set_into_the_tag_table_and_the_audit_then_knows_it(target):
    table = target.table
    ref = target.in_table(lambda: table.technician_lays_reference_set(5))
    session = target.link.open_service(target.sim.key)
    assert _scan(target, session)["sides"] == 4
    audit = target.request("rfid_audit", session=session)
    assert (audit["tags"], audit["unknown"]) == (144, 144)            # tags it does not know
    out = target.request("rfid_learn", session=session)
    assert (out["tags"], out["new"], out["changed"], out["restart"]) == (432, 144, 0, True)
    lines = _flash_tags(target)
    learned = {int(uid, 16): code for uid, code in lines}
    assert len(learned) == len(lines) == 432
    assert all(learned[t.uid] == t.code for t in ref)                 # slot i: the i-th tile
    # The next start reads the new table: the same walls now audit clean.
    target.in_table(table.power_cut)
    target.wait_status(lambda st: target.sim.restarts == 1 and st["link"]["requests"] < 10,
                       "the restart")
    session = target.link.open_service(target.sim.key)
    assert _scan(target, session)["sides"] == 4
    audit = target.request("rfid_audit", session=session)
    assert (audit["tags"], audit["unknown"], audit["kinds"]) == (144, 0, 0)


@pytest.mark.needs_sim
def test_learn_refuses_a_reference_set_with_a_slot_empty(target):
    table = target.table
    target.in_table(lambda: table.technician_lays_reference_set(5, leave_out=(17,)))
    session = target.link.open_service(target.sim.key)
    assert _scan(target, session)["tags"] == 143
    code, msg = _refusal(target, "rfid_learn", session=session)
    assert code == "refused" and "slot 17" in msg
    assert len(_flash_tags(target)) == 288                               # unchanged


@pytest.mark.needs_sim
def test_a_technicians_visit_then_a_cycle_fit_the_heap_budget(make_target):
    """Every technician command, twice (each loads link/service.py and
    forgets it; config_set the validator too), then a whole cycle, in the
    service heap budget: an answer that left code on the heap would run
    out on the second round, or in the cycle."""
    from hw_tests.harness import SERVICE_HEAP_BUDGET
    target = make_target(seed=3, heap=SERVICE_HEAP_BUDGET)
    assert all(r["pass"] for r in selftest.run(target.link, target.sim.key,
                                               timeout=target.wait_s))
    session = target.link.open_service(target.sim.key)
    for _ in range(2):
        target.request("config_set", session=session, key="timings.lift_up_ms", value=4000)
        for op in ("sensors", "counters", "config_get"):
            target.request(op)
        target.request("dice_test", session=session, n=100)
        assert _scan(target, session)["sides"] == 4
        target.request("rfid_audit", session=session)
    target.link.close_service(session)
    cycle = target.run_cycle()
    assert cycle.ok, cycle.events
    assert "MemoryError" not in target.sim.firmware_log()
