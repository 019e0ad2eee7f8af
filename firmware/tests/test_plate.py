"""Shuffle plate driver (firmware/drivers/motion.py, Plate) on the fake HAL: a stall is
fault 11 after 2 x rev_ms without a rotation pulse, and only while running."""

from firmware.drivers.motion import Plate
from firmware.fakes.hal import FakeHal, shipped_pins

PINS = shipped_pins()
MOTOR = PINS["plate_motor"]
ROT = PINS["plate_rotation"]
REV_MS = 1500
DUTY = 800


def make():
    hal = FakeHal()
    return hal, Plate(hal, MOTOR, ROT, DUTY, REV_MS, 90000)


def test_start_and_stop_drive_the_motor():
    hal, plate = make()
    plate.start(0)
    assert hal.level(MOTOR) == DUTY and plate.running
    plate.start(10)                      # already running: nothing written again
    assert hal.writes(MOTOR) == [(0, DUTY)]
    plate.stop()
    assert hal.level(MOTOR) == 0 and not plate.running


def test_stall_after_two_revolutions_without_a_pulse():
    hal, plate = make()
    plate.start(0)
    t = 0
    while t <= 2 * REV_MS:
        plate.poll(t)
        assert plate.fault == 0, t
        t += 10
    plate.poll(2 * REV_MS + 1)
    assert plate.fault == 11
    assert plate.detail == {"ms": 2 * REV_MS}


def test_pulses_keep_it_alive_and_restart_the_deadline():
    hal, plate = make()
    plate.start(0)
    for k in range(1, 11):               # ten turns, one every rev_ms
        hal.pulse(ROT)
        plate.poll(k * REV_MS)
    assert plate.fault == 0
    assert plate.revolutions == 10
    last = 10 * REV_MS
    plate.poll(last + 2 * REV_MS)        # one pulse missed is tolerated
    assert plate.fault == 0
    plate.poll(last + 2 * REV_MS + 10)
    assert plate.fault == 11


def test_never_a_stall_while_stopped():
    hal, plate = make()
    plate.poll(0)
    plate.poll(100000)
    assert plate.fault == 0
    plate.start(200000)
    plate.poll(200000)
    plate.poll(200000 + REV_MS)
    plate.stop()
    for t in (210000, 500000, 900000):
        plate.poll(t)
    assert plate.fault == 0


def test_start_after_a_long_stop_gives_a_fresh_deadline():
    hal, plate = make()
    plate.start(0)
    hal.pulse(ROT)
    plate.poll(100)
    plate.stop()
    plate.start(60000)
    plate.poll(60000 + 2 * REV_MS)
    assert plate.fault == 0
    plate.poll(60000 + 2 * REV_MS + 1)
    assert plate.fault == 11
