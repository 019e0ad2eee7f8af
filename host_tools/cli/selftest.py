"""mjctl selftest: each actuator moved briefly and checked against its
sensor, with the times the controller measured (docs/technician.md).

The host plans, the controller executes: every move is an ordinary `jog`
of a service session (bounded to 2 s, refused during a hand, logged on the
device), and the controller's `jogged` event says how the move ended and
what its sensor counted, timed by the controller's own clock. Items:

* plate: run 2 s; it must turn (rotation pulses): ms per revolution.
* lane 0..3: run 300 ms; the motor must stop at the jog's end and the
  count sensor must read clear afterwards (a tile counted needs tiles on
  the plate: the count is reported, not required).
* lifter 0..3: from the switch it rests on, move away for 1 s (it must
  leave the switch: otherwise the controller raises lift_stuck), then back
  for up to 2 s: it must reach the switch again, in the measured time.

A fault ends the item that caused it (failed, with the fault's name); the
others still run, and the fault stays on the table for the technician.
"""

from host_tools.texts import fault_texts, t, word

PLATE_MS = 2000
LANE_MS = 300
AWAY_MS = 1000
BACK_MS = 2000


def _jog(link, session, actuator, n, ms, timeout):
    """The jog's end: its `jogged` event, or the `fault` event that ended it."""
    link.request("jog", session=session, actuator=actuator, n=n, ms=ms)
    start = link.wait_event(lambda e: e["ev"] == "jog", timeout)
    return link.wait_event(lambda e: e["ev"] in ("jogged", "fault") and e["t"] >= start["t"],
                           timeout)


def _item(name, ok, why, **measured):
    return dict({"item": name, "pass": ok, "why": why}, **measured)


def _failed_by_fault(name, ev):
    from host_tools.cli.common import plain
    detail = plain(dict(sorted(ev["detail"].items())))
    return _item(name, False, t("selftest.why.fault", name=fault_texts(ev["code"])[0],
                                 detail=detail))


def plate(link, session, timeout):
    ev = _jog(link, session, "plate", 0, PLATE_MS, timeout)
    if ev["ev"] == "fault":
        return _failed_by_fault("plate", ev)
    turns = ev["count"]
    if turns < 1:
        return _item("plate", False, t("selftest.why.no_pulse", ms=ev["ms"]), ms=ev["ms"])
    return _item("plate", True, t("selftest.why.turned"), ms=ev["ms"], revolutions=turns,
                 ms_per_rev=round(ev["ms"] / turns))


def lane(link, session, n, timeout):
    name = "lane %d" % n
    ev = _jog(link, session, "lane", n, LANE_MS, timeout)
    if ev["ev"] == "fault":
        return _failed_by_fault(name, ev)
    s = link.request("sensors")
    if s["motors"][1 + n]:
        return _item(name, False, t("selftest.why.still_runs"), ms=ev["ms"])
    if s["lanes"][n][0]:
        return _item(name, False, t("selftest.why.blocked"), ms=ev["ms"])
    return _item(name, True, t("selftest.why.lane_ok"), ms=ev["ms"],
                 tiles=ev["count"])


def lifter(link, session, n, timeout, moved=None):
    """`moved`: a list that holds (n, back) while this lifter is away from
    where the self-test found it (run() brings it back on Ctrl-C)."""
    name = "lifter %d" % n
    top, bottom = link.request("sensors")["lifters"][n]
    if top:
        away, back = "lift_down", "lift_up"
    else:                  # at the bottom, or between: up first, then down to the switch
        away, back = "lift_up", "lift_down"
    if moved is not None:
        moved[:] = [(n, back)]
    ev = _jog(link, session, away, n, AWAY_MS, timeout)
    if ev["ev"] == "fault":
        return _failed_by_fault(name, ev)
    if ev["end"] == "switch":
        return _item(name, False, t("selftest.why.too_fast", move=word("actuator", away),
                                    ms=ev["ms"]), away_ms=ev["ms"])
    ev2 = _jog(link, session, back, n, BACK_MS, timeout)
    if ev2["ev"] == "fault":
        return _failed_by_fault(name, ev2)
    if ev2["end"] != "switch":
        return _item(name, False, t("selftest.why.not_back", move=word("actuator", back),
                                    ms=ev2["ms"]), away_ms=ev["ms"], back_ms=ev2["ms"])
    if moved is not None:
        moved[:] = []
    return _item(name, True, t("selftest.why.lifter_ok"), away_ms=ev["ms"],
                 back_ms=ev2["ms"])


def run(link, key, timeout=30.0, progress=None, restoring=None, starting=None):
    """Every item, in order: a list of results (dicts with `item`, `pass`,
    `why` and the measured figures). `starting(item, ms)` before each item
    (`ms`: the longest it moves), `progress(result)` after it.
    Interrupted (Ctrl-C), it stops the jog that runs and brings a lifter
    it moved back to the switch it found it on (`restoring(n, switch)`
    says so first), then closes the session and raises again."""
    session = link.open_service(key)
    out = []
    moved = []             # (lifter, the jog back) while a lifter is away
    try:
        steps = [("plate", PLATE_MS, lambda: plate(link, session, timeout))]
        steps += [("lane %d" % n, LANE_MS, lambda n=n: lane(link, session, n, timeout))
                  for n in range(4)]
        steps += [("lifter %d" % n, AWAY_MS + BACK_MS,
                   lambda n=n: lifter(link, session, n, timeout, moved)) for n in range(4)]
        for name, ms, step in steps:
            if starting is not None:
                starting(name, ms)
            out.append(step())
            if progress is not None:
                progress(out[-1])
    except KeyboardInterrupt:
        _put_back(link, session, moved, timeout, restoring)
        raise
    finally:
        link.close_service(session)
    return out


def _put_back(link, session, moved, timeout, restoring):
    """After an interrupt: the running jog ended, the lifter that was moved
    driven back to its switch (a jog ends there). A plate or lane jog is
    not waited for: closing the session stops it."""
    if not moved:
        return
    s = link.request("sensors")
    if any(s["motors"]) or any(m in ("rising", "lowering") for m in s["moving"]):
        link.wait_event(lambda e: e["ev"] in ("jogged", "fault"), timeout)
    # The link delivers events in order, before the answer that follows
    # them: what the stopped jog said is queued now; none of it may be
    # taken for the jog back's.
    while link.next_event(timeout=0) is not None:
        pass
    n, back = moved[0]
    top, bottom = link.request("sensors")["lifters"][n]
    if (top if back == "lift_up" else bottom):
        return                             # the interrupted jog was the way back
    if restoring is not None:
        restoring(n, "top" if back == "lift_up" else "bottom")
    _jog(link, session, back, n, BACK_MS, timeout)

