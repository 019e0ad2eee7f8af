"""Learned timing (firmware/drivers/motion.py, docs/reliability.md) on the fake
HAL, on both interpreters: each lifter's whole rises and descents and the
plate's revolutions are learned; past the learned time + a small margin a
motion is reported once (`slow()`), past a larger margin it is a fault
(never later than the configured deadline); before 8 samples only the
configured deadlines count; a rise whose top switch never closes is ended
by its learned time with sensor_stuck; the controller saves the learned
times with the counters and a damaged file starts learning again."""

import os

from firmware.drivers import motion
from firmware.drivers.motion import Lifter, Plate
from firmware.fakes.hal import FakeHal, QuietBoard

UP, DOWN, TOP, BOTTOM = 10, 14, 33, 37
UP_MS, DOWN_MS = 4000, 3500
MOTOR, ROT, REV_MS = 4, 5, 1500
LIFT_STUCK, SENSOR_STUCK, PLATE_STALL = 12, 13, 11


def lifter_at_bottom():
    for i in range(len(motion.learned)):  # whatever other tests' drivers learned
        motion.learned[i] = 0
    hal = FakeHal()
    lifter = Lifter(hal, 1, UP, DOWN, TOP, BOTTOM, UP_MS, DOWN_MS)
    hal.set(BOTTOM, 1)
    lifter.poll(0)
    return hal, lifter


def rise(hal, lifter, t, ms, top=True, slow=None):
    """A whole rise from the bottom begun at t: it leaves the bottom switch
    after 50 ms and reaches the top after `ms` (if `top`); polls every
    10 ms up to t + ms, collecting what slow() posts. Returns t + ms."""
    lifter.lift(hal.at(t))
    end = t + ms
    while t < end:
        t += 10
        if t == end - ms + 50:
            hal.set(BOTTOM, 0)
        if t == end and top:
            hal.set(TOP, 1)
        lifter.poll(hal.at(t))
        w = motion.slow()
        if w is not None:
            assert slow is not None, "a warning for a normal rise at %d: %s" % (t, w)
            slow.append((t, w))
        if lifter.fault:
            return t
    return end


def descend(hal, lifter, t, ms):
    lifter.lower(hal.at(t))
    end = t + ms
    while t < end:
        t += 10
        if t == end - ms + 50:
            hal.set(TOP, 0)
        if t == end:
            hal.set(BOTTOM, 1)
        lifter.poll(hal.at(t))
        assert motion.slow() is None
    return end


def learn_lifter(hal, lifter, up_ms=(2490, 2500, 2510, 2500), down_ms=2000, n=8):
    t = 100
    for i in range(n):
        t = rise(hal, lifter, t, up_ms[i % len(up_ms)]) + 100
        assert lifter.state == motion.TOP and lifter.fault == 0
        t = descend(hal, lifter, t, down_ms) + 100
        assert lifter.state == motion.BOTTOM and lifter.fault == 0
    return t


def past(ms):
    """The first 10 ms tick strictly after `ms`: when a limit is seen."""
    return (ms // 10 + 1) * 10


def stats(k):
    """(mean, deviation, samples) of motion kind k."""
    s = motion.learned
    return s[4 * k], s[4 * k + 1], s[4 * k + 2]


def test_the_mean_and_deviation_of_whole_rises_and_descents_are_learned():
    hal, lifter = lifter_at_bottom()
    learn_lifter(hal, lifter)
    mean, dev, n = stats(1)                # lifter 1 rising
    assert n == 8 and mean == 2500 and 3 <= dev <= 6, (mean, dev, n)
    assert stats(5) == (2000, 0, 8)        # lifter 1 lowering
    assert stats(0) == (0, 0, 0) and stats(8) == (0, 0, 0)   # nothing else
    # The rolling mean moves 1/8 of the way to a new time.
    t = rise(hal, lifter, 50000, 2580, slow=[])
    assert stats(1)[0] == 2510


def test_before_eight_samples_only_the_configured_deadline_counts():
    hal, lifter = lifter_at_bottom()
    t = learn_lifter(hal, lifter, n=7)
    assert stats(1)[2] == 7
    t = rise(hal, lifter, t, UP_MS - 10)   # 60 % over the mean: no warning, no fault
    assert lifter.fault == 0 and lifter.state == motion.TOP


def test_a_slow_rise_is_reported_once_and_the_table_goes_on():
    hal, lifter = lifter_at_bottom()
    t = learn_lifter(hal, lifter)
    mean, dev, _ = stats(1)
    warn_at = mean + mean // 8 + 4 * dev
    slow = []
    rise(hal, lifter, t, 3000, slow=slow)  # 20 % slow: past the warning, not the fault
    assert lifter.fault == 0 and lifter.state == motion.TOP
    assert len(slow) == 1, slow
    at, w = slow[0]
    assert w == {"name": "rising", "side": 1, "ms": at - t, "learned": mean}
    assert at - t == past(warn_at)


def test_a_descent_past_its_learned_margin_is_lift_stuck_before_the_deadline():
    hal, lifter = lifter_at_bottom()
    t = learn_lifter(hal, lifter)
    t = rise(hal, lifter, t, 2500) + 100
    mean, dev, _ = stats(5)
    limit = mean + mean // 4 + 8 * dev     # 2500, the deadline is 3500
    lifter.lower(hal.at(t))
    hal.set(TOP, 0)
    warned = []
    ms = 0
    while lifter.fault == 0 and ms < DOWN_MS + 100:
        ms += 10
        lifter.poll(hal.at(t + ms))
        w = motion.slow()
        if w is not None:
            warned.append(w)
    assert lifter.fault == LIFT_STUCK and ms == past(limit)
    assert lifter.detail == {"side": 1, "reason": "bottom_missed"}
    assert hal.level(DOWN) == 0 and hal.level(UP) == 0
    assert [w["name"] for w in warned] == ["lowering"]     # the warning came first
    assert warned[0]["ms"] == past(mean + mean // 8 + 4 * dev)


def test_a_learned_rise_whose_top_switch_never_closes_ends_by_its_learned_time():
    hal, lifter = lifter_at_bottom()
    t = learn_lifter(hal, lifter)
    mean, dev, _ = stats(1)
    slow = []
    end = rise(hal, lifter, t, UP_MS, top=False, slow=slow)
    ms = end - t
    assert lifter.fault == SENSOR_STUCK and ms == past(mean + mean // 4 + 8 * dev) < UP_MS
    assert lifter.detail["side"] == 1
    assert lifter.detail == {"side": 1, "reason": "top_open", "ms": ms, "expected": mean}
    assert hal.level(UP) == 0 and hal.level(DOWN) == 0
    assert len(slow) == 1                  # warned, then ended
    # The rise is finished: the lifter stays at the top with its switch
    # open, through the controller's stop and later polls, until it moves.
    lifter.stop()
    for k in range(1, 20):
        lifter.poll(hal.at(end + 10 * k))
    assert lifter.state == motion.TOP
    lifter.lift(end + 300)                 # already up: nothing moves
    assert hal.level(UP) == 0
    end = descend(hal, lifter, end + 400, 2000)
    assert lifter.state == motion.BOTTOM and lifter.fault == SENSOR_STUCK   # kept until cleared


def test_a_rise_not_from_the_bottom_is_not_learned_nor_ended_by_time():
    hal, lifter = lifter_at_bottom()
    t = learn_lifter(hal, lifter)
    before = stats(1)
    hal.set(BOTTOM, 0)                     # somewhere between the switches
    lifter.poll(hal.at(t))
    assert lifter.state == motion.UNKNOWN
    lifter.lift(hal.at(t + 10))
    hal.set(TOP, 1)
    lifter.poll(hal.at(t + 1200))          # a part of the travel
    assert lifter.state == motion.TOP and stats(1) == before
    lifter.lower(hal.at(t + 1300))
    hal.set(TOP, 0)
    lifter.poll(hal.at(t + 1400))
    lifter.halt()                          # a jog ends half way
    lifter.poll(hal.at(t + 1410))
    assert lifter.state == motion.UNKNOWN
    lifter.lift(hal.at(t + 1500))          # and up from there: no top switch
    ms = 0
    while lifter.fault == 0:
        ms += 10
        lifter.poll(hal.at(t + 1500 + ms))
    assert lifter.fault == LIFT_STUCK      # not presumed at the top: it did not start at the bottom
    assert lifter.detail["reason"] == "top_missed"
    assert ms == past(before[0] + before[0] // 4 + 8 * before[1])


def test_a_motion_stopped_by_a_fault_is_neither_reported_nor_learned():
    hal, lifter = lifter_at_bottom()
    t = learn_lifter(hal, lifter)
    before = stats(1)
    lifter.lift(hal.at(t))
    hal.set(BOTTOM, 0)
    lifter.poll(hal.at(t + 100))
    lifter.stop()                          # another device's fault stops everything
    for ms in range(110, 3500, 10):
        lifter.poll(hal.at(t + ms))
        assert motion.slow() is None, ms
    hal.set(TOP, 1)
    lifter.poll(hal.at(t + 3500))
    assert stats(1) == before


def test_a_new_driver_starts_unlearned():
    hal, lifter = lifter_at_bottom()
    learn_lifter(hal, lifter)
    assert stats(1)[2] == 8
    lifter_at_bottom()
    assert stats(1) == (0, 0, 0) and stats(5) == (0, 0, 0)


# -- the plate ----------------------------------------------------------------

def turning_plate(n=10, rev=1000):
    """A plate started at 0 whose first pulse comes at 300 ms (it starts
    anywhere in a turn), then one every `rev` ms, n turns."""
    hal = FakeHal()
    plate = Plate(hal, MOTOR, ROT, 800, REV_MS, 90000)
    plate.start(hal.at(0))
    t = 300
    for k in range(n + 1):
        hal.pulse(ROT)
        plate.poll(hal.at(t))
        assert plate.fault == 0 and motion.slow() is None
        t += rev
    return hal, plate, t - rev


def test_the_plate_learns_whole_revolutions_not_the_first():
    hal, plate, t = turning_plate(n=10, rev=1000)
    assert stats(8) == (1000, 0, 8)
    plate.stop()
    plate.start(hal.at(t + 5000))
    hal.pulse(ROT)
    plate.poll(hal.at(t + 5100))           # the first after a start: not a turn
    assert stats(8) == (1000, 0, 8)


def test_a_slow_revolution_warns_once_a_run_and_a_stall_comes_at_the_learned_limit():
    hal, plate, t = turning_plate(n=8, rev=1000)
    warned = []
    for rev in (1200, 1200):               # two slow turns: one warning
        for ms in range(10, rev + 10, 10):
            if ms == rev:
                hal.pulse(ROT)
            plate.poll(hal.at(t + ms))
            w = motion.slow()
            if w is not None:
                warned.append((ms, w))
        t += rev
    assert warned == [(1130, {"name": "plate", "ms": 1130, "learned": 1000})]
    assert plate.fault == 0


def test_a_learned_plate_stalls_at_twice_its_learned_limit_before_the_deadline():
    hal, plate, t = turning_plate(n=8, rev=1000)
    mean, dev, _ = stats(8)
    limit = 2 * (mean + mean // 4 + 8 * dev)   # a missed pulse is still tolerated
    assert limit == 2500 < 2 * REV_MS
    ms = 0
    while plate.fault == 0:
        ms += 10
        plate.poll(hal.at(t + ms))
    assert plate.fault == PLATE_STALL and ms == past(limit)
    assert plate.detail == {"ms": limit}


# -- the controller: the event, and the learned times across a restart ----------

class Board(QuietBoard, FakeHal):
    store = "lt-"                          # lt-counters.json in the current directory


def controller(events):
    from firmware import config, tags
    from firmware.controller.table import TableController
    from firmware.devices import Devices
    from firmware.fakes.hal import FIRMWARE_DIR
    cfg = config.load(FIRMWARE_DIR + "/config.json")
    hal = Board()
    for pin in cfg.pins["lift_bottom"]:
        hal.set(pin, 1)
    ctl = TableController(hal, cfg, Devices(hal, cfg, tags.load(FIRMWARE_DIR + "/tags.txt")),
                          lambda name, fields: events.append((name, fields)))
    ctl.boot(0)
    return hal, ctl


def _clean():
    for p in ("lt-counters.json", "lt-counters.json.new"):
        try:
            os.remove(p)
        except OSError:
            pass


def test_the_controller_reports_slow_motions_and_keeps_the_learned_times_across_a_restart():
    _clean()
    try:
        events = []
        hal, ctl = controller(events)
        lifter = ctl.devices.lifters[2]
        top, bottom = ctl.cfg.pins["lift_top"][2], ctl.cfg.pins["lift_bottom"][2]
        t = 0
        for ms in (2500,) * 8 + (3000,):   # 8 to learn, then a slow one
            lifter.lift(hal.at(t))
            for k in range(1, ms // 10 + 1):
                if k == 5:
                    hal.set(bottom, 0)
                if k == ms // 10:
                    hal.set(top, 1)
                ctl.step(hal.at(t + 10 * k))
            lifter.lower(hal.at(t + ms + 10))
            hal.set(top, 0)
            hal.set(bottom, 1)
            ctl.step(hal.at(t + ms + 20))
            t += ms + 100
        assert ctl.fault == 0
        slow = [f for name, f in events if name == "slow"]
        assert slow == [{"name": "rising", "side": 2, "ms": 2820, "learned": 2500}], slow
        learned = list(motion.learned)
        assert stats(2)[2] == 8 and stats(6) == (10, 0, 8)   # the descents: 10 ms here
        ctl._save()
        assert ctl.unsaved == 0
        # A restart: new drivers start unlearned, the boot restores.
        hal, ctl = controller([])
        assert list(motion.learned) == learned and ctl.lost is None
        # A file from before learned timing: the counters come back, learning starts.
        from firmware import persist
        saved = persist.load("lt-counters.json")
        del saved["learned"]
        saved["cycles"] = 5
        persist.save("lt-counters.json", saved)
        hal, ctl = controller([])
        assert ctl.cycles == 5 and ctl.lost is None and stats(2) == (0, 0, 0)
        # Learned times of another shape: nothing of the file is taken.
        for bad in (learned[:-1], ["x"] * len(learned), [-1] * len(learned)):
            saved["learned"] = bad
            persist.save("lt-counters.json", saved)
            hal, ctl = controller([])
            assert ctl.cycles == 0 and ctl.lost and stats(2) == (0, 0, 0), bad
        # A damaged file: counting and learning start again.
        saved["learned"] = learned
        persist.save("lt-counters.json", saved)
        with open("lt-counters.json") as f:
            text = f.read()
        with open("lt-counters.json", "w") as f:
            f.write(text.replace("2500", "2400"))
        hal, ctl = controller([])
        assert ctl.lost and "damaged" in ctl.lost and stats(2) == (0, 0, 0)
    finally:
        _clean()
