"""Seat keys and buzzer (firmware/drivers/panel.py, Keys and Buzzer) on the fake HAL: debounce,
one press taken once, the buzzer turning itself off."""

from firmware.drivers.panel import DOUBLE, HOLD, SINGLE, Buzzer, Keys

NONE = 0                 # take_gesture's "no gesture" (a private constant there)
from firmware.fakes.hal import FakeHal, shipped_pins

SHIPPED = shipped_pins()
PINS = tuple(SHIPPED["keys"])
DEBOUNCE = 30
DOUBLE_MS = 400
HOLD_MS = 1500
BUZZER = SHIPPED["buzzer"]


def make():
    hal = FakeHal()
    return hal, Keys(hal, PINS, DEBOUNCE, DOUBLE_MS, HOLD_MS)


def tap(hal, keys, seat, t, ms=120):
    """Press for `ms`, polling every 10 ms; returns the time after release."""
    hal.set(PINS[seat], 1)
    run(keys, t, t + ms)
    hal.set(PINS[seat], 0)
    run(keys, t + ms + 10, t + ms + 60)
    return t + ms + 60


def run(keys, t0, t1, step=10):
    t = t0
    while t <= t1:
        keys.poll(t)
        t += step


def test_a_bounce_shorter_than_debounce_is_not_a_press():
    hal, keys = make()
    run(keys, 0, 50)
    hal.set(PINS[2], 1)                  # closed for 20 ms (< 30)
    run(keys, 60, 80)
    hal.set(PINS[2], 0)
    run(keys, 90, 300)
    assert not keys.take_press(2)
    assert keys.stable[2] == 0


def test_bounces_restart_the_debounce_clock():
    hal, keys = make()
    level = 1
    for t in range(0, 200, 10):          # toggling every 10 ms for 200 ms
        hal.set(PINS[0], level)
        keys.poll(t)
        level = 1 - level
    hal.set(PINS[0], 0)
    run(keys, 200, 400)
    assert not keys.take_press(0)


def test_a_press_is_taken_once():
    hal, keys = make()
    hal.set(PINS[1], 1)
    keys.poll(100)
    keys.poll(110)
    keys.poll(120)
    assert not keys.take_press(1)        # 20 ms held: not yet
    keys.poll(130)                       # 30 ms held: a press
    assert keys.take_press(1)
    assert not keys.take_press(1)
    run(keys, 140, 2000)                 # held down: still the same press
    assert not keys.take_press(1)
    for seat in (0, 2, 3):
        assert not keys.take_press(seat)
    hal.set(PINS[1], 0)
    run(keys, 2010, 2100)
    assert not keys.take_press(1)        # releasing is not a press
    hal.set(PINS[1], 1)
    run(keys, 2110, 2200)
    assert keys.take_press(1)            # a second press
    assert not keys.take_press(1)


def test_a_short_release_inside_a_hold_is_not_a_new_press():
    hal, keys = make()
    hal.set(PINS[3], 1)
    run(keys, 0, 100)
    assert keys.take_press(3)
    hal.set(PINS[3], 0)                  # open for 10 ms
    keys.poll(110)
    hal.set(PINS[3], 1)
    run(keys, 120, 400)
    assert not keys.take_press(3)


def test_clear_forgets_presses_not_taken():
    hal, keys = make()
    hal.set(PINS[0], 1)
    hal.set(PINS[3], 1)
    run(keys, 0, 100)
    keys.clear()
    assert not keys.take_press(0) and not keys.take_press(3)


def test_one_short_press_is_a_single_once_the_double_window_has_passed():
    hal, keys = make()
    t = tap(hal, keys, 2, 0)
    assert keys.take_gesture(2) == NONE          # a second press may follow
    run(keys, t, 200 + DOUBLE_MS)
    assert keys.take_gesture(2) == SINGLE
    assert keys.take_gesture(2) == NONE          # taken once
    assert keys.take_press(2)                    # the plain press is there too


def test_two_quick_presses_are_one_double_and_two_slow_ones_two_singles():
    hal, keys = make()
    t = tap(hal, keys, 1, 0)
    t = tap(hal, keys, 1, t + 100)
    run(keys, t, t + DOUBLE_MS + 20)
    assert keys.take_gesture(1) == DOUBLE
    assert keys.take_gesture(1) == NONE
    t = tap(hal, keys, 1, 5000)
    run(keys, t, t + DOUBLE_MS + 100)
    assert keys.take_gesture(1) == SINGLE
    t = tap(hal, keys, 1, t + DOUBLE_MS + 200)
    run(keys, t, t + DOUBLE_MS + 20)
    assert keys.take_gesture(1) == SINGLE


def test_a_hold_fires_while_held_and_its_release_adds_nothing():
    hal, keys = make()
    hal.set(PINS[0], 1)
    run(keys, 0, HOLD_MS - 20)
    assert keys.take_gesture(0) == NONE
    run(keys, HOLD_MS, HOLD_MS + 200)
    assert keys.take_gesture(0) == HOLD
    run(keys, HOLD_MS + 210, 4000)               # still held
    assert keys.take_gesture(0) == NONE
    hal.set(PINS[0], 0)
    run(keys, 4010, 6000)
    assert keys.take_gesture(0) == NONE
    for seat in (1, 2, 3):
        assert keys.take_gesture(seat) == NONE


def test_clear_forgets_gestures_and_one_in_progress():
    hal, keys = make()
    tap(hal, keys, 3, 0)
    keys.clear()
    run(keys, 200, 1000)
    assert keys.take_gesture(3) == NONE


def test_buzzer_turns_itself_off():
    hal = FakeHal()
    buz = Buzzer(hal, BUZZER)
    buz.poll(hal.at(0))
    assert hal.log == []
    buz.beep(hal.at(1000), 80)
    assert hal.level(BUZZER) == 1 and buz.on
    buz.poll(hal.at(1000))
    buz.poll(hal.at(1079))
    assert hal.level(BUZZER) == 1
    buz.poll(hal.at(1080))
    assert hal.level(BUZZER) == 0 and not buz.on
    assert hal.writes(BUZZER) == [(1000, 1), (1080, 0)]
    buz.poll(hal.at(5000))
    assert hal.writes(BUZZER) == [(1000, 1), (1080, 0)]


def test_a_new_beep_extends_the_sound():
    hal = FakeHal()
    buz = Buzzer(hal, BUZZER)
    buz.beep(0, 100)
    buz.poll(50)
    buz.beep(50, 150)
    buz.poll(100)
    assert hal.level(BUZZER) == 1
    buz.poll(200)
    assert hal.level(BUZZER) == 0


def test_clear_during_a_hold_then_its_release_adds_nothing():
    hal, keys = make()
    hal.set(PINS[1], 1)
    run(keys, 0, HOLD_MS + 100)
    assert keys.take_gesture(1) == HOLD
    keys.clear()                                  # e.g. the hand ended by that hold
    hal.set(PINS[1], 0)
    run(keys, HOLD_MS + 110, HOLD_MS + 2000)
    assert keys.take_gesture(1) == NONE
