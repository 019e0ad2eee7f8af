"""Wall lifter driver (firmware/drivers/motion.py, Lifter) on the fake HAL: TOP and
BOTTOM on their switches, never both drive outputs on, faults 12 and 13."""

from firmware.drivers import motion as lft
from firmware.drivers.motion import Lifter
from firmware.fakes.hal import FakeHal, shipped_pins

PINS = shipped_pins()
UP = PINS["lift_up"][1]              # the lifter of side 1
DOWN = PINS["lift_down"][1]
TOP = PINS["lift_top"][1]
BOTTOM = PINS["lift_bottom"][1]
UP_MS = 4000
DOWN_MS = 3500


def make(bottom=1, top=0):
    hal = FakeHal()
    lifter = Lifter(hal, 1, UP, DOWN, TOP, BOTTOM, UP_MS, DOWN_MS)
    hal.set(BOTTOM, bottom)
    hal.set(TOP, top)
    lifter.poll(0)
    return hal, lifter


def never_both(hal):
    """Replay every recorded output write: up and down are never on at once,
    not even between two writes of one command."""
    up = down = 0
    for t, pin, v in hal.log:
        if pin == UP:
            up = v
        elif pin == DOWN:
            down = v
        assert not (up and down), "up and down both on at %d" % t


def test_reads_its_position_at_rest():
    hal, lifter = make(bottom=1)
    assert lifter.state == lft.BOTTOM
    hal.set(BOTTOM, 0)
    lifter.poll(10)
    assert lifter.state == lft.UNKNOWN
    hal.set(TOP, 1)
    lifter.poll(20)
    assert lifter.state == lft.TOP
    assert hal.log == []                 # reading moves nothing


def test_lift_reaches_top_on_the_top_switch_and_turns_off():
    hal, lifter = make(bottom=1)
    lifter.lift(hal.at(0))
    never_both(hal)
    assert hal.level(UP) == 1 and hal.level(DOWN) == 0
    assert lifter.state == lft.NAMES.index("rising")
    t = 10
    while t < 2500:
        if t == 300:
            hal.set(BOTTOM, 0)           # left the bottom
        lifter.poll(hal.at(t))
        never_both(hal)
        assert lifter.state == lft.NAMES.index("rising") and hal.level(UP) == 1, t
        t += 10
    hal.set(TOP, 1)
    lifter.poll(hal.at(2500))
    never_both(hal)
    assert lifter.state == lft.TOP
    assert hal.level(UP) == 0 and hal.level(DOWN) == 0
    assert hal.writes(UP)[-1] == (2500, 0)
    assert lifter.fault == 0
    lifter.lift(2600)                    # already at the top: nothing moves
    assert hal.level(UP) == 0 and lifter.state == lft.TOP


def test_lower_reaches_bottom_and_up_down_never_together():
    hal, lifter = make(bottom=1)
    lifter.lift(0)
    lifter.poll(10)
    never_both(hal)
    hal.set(BOTTOM, 0)
    lifter.poll(100)
    never_both(hal)
    lifter.lower(200)                    # reversed while rising
    never_both(hal)
    assert hal.level(DOWN) == 1 and hal.level(UP) == 0
    assert lifter.state == lft.NAMES.index("lowering")
    lifter.lift(300)                     # and again
    never_both(hal)
    assert hal.level(UP) == 1 and hal.level(DOWN) == 0
    hal.set(TOP, 1)
    lifter.poll(2000)
    never_both(hal)
    assert lifter.state == lft.TOP
    lifter.lower(2100)
    never_both(hal)
    assert hal.level(DOWN) == 1
    hal.set(TOP, 0)
    lifter.poll(2300)
    never_both(hal)
    hal.set(BOTTOM, 1)
    lifter.poll(4000)
    never_both(hal)
    assert lifter.state == lft.BOTTOM
    assert hal.level(UP) == 0 and hal.level(DOWN) == 0
    assert lifter.fault == 0
    lifter.lower(4100)                   # already at the bottom: nothing moves
    assert hal.level(DOWN) == 0


def test_not_leaving_the_bottom_in_600_ms_is_fault_12():
    hal, lifter = make(bottom=1)
    lifter.lift(1000)
    t = 1000
    while t <= 1600:
        lifter.poll(t)
        assert lifter.fault == 0, t
        t += 10
    lifter.poll(1610)
    assert lifter.fault == 12
    assert lifter.detail == {"side": 1, "reason": "stayed_bottom"}
    assert hal.level(UP) == 0 and hal.level(DOWN) == 0
    never_both(hal)


def test_not_leaving_the_top_in_600_ms_is_fault_12():
    hal, lifter = make(bottom=0, top=1)
    lifter.lower(0)
    lifter.poll(600)
    assert lifter.fault == 0
    lifter.poll(610)
    assert lifter.fault == 12
    assert lifter.detail["reason"] == "stayed_top"
    assert hal.level(DOWN) == 0


def test_top_not_reached_by_the_deadline_is_fault_12():
    hal, lifter = make(bottom=1)
    lifter.lift(0)
    hal.set(BOTTOM, 0)
    t = 10
    while t <= UP_MS:
        lifter.poll(t)
        assert lifter.fault == 0, t
        t += 10
    assert hal.level(UP) == 1
    lifter.poll(UP_MS + 10)
    assert lifter.fault == 12
    assert lifter.detail == {"side": 1, "reason": "top_missed"}
    assert hal.level(UP) == 0 and hal.level(DOWN) == 0


def test_bottom_not_reached_by_the_deadline_is_fault_12():
    hal, lifter = make(bottom=0, top=1)
    lifter.lower(0)
    hal.set(TOP, 0)
    lifter.poll(DOWN_MS)
    assert lifter.fault == 0
    lifter.poll(DOWN_MS + 10)
    assert lifter.fault == 12
    assert lifter.detail["reason"] == "bottom_missed"
    assert hal.level(DOWN) == 0


def test_both_switches_closed_is_fault_13():
    hal, lifter = make(bottom=1)
    lifter.lift(0)
    hal.set(TOP, 1)                      # bottom still closed
    lifter.poll(10)
    assert lifter.fault == 13
    assert lifter.detail == {"side": 1, "reason": "both_closed"}
    assert hal.level(UP) == 0 and hal.level(DOWN) == 0
    never_both(hal)


def test_both_switches_closed_at_rest_is_fault_13():
    hal, lifter = make(bottom=1, top=1)
    assert lifter.fault == 13
