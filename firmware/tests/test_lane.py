"""Lane driver (firmware/drivers/motion.py, Lane) on the fake HAL: counting, the stop
at the target, resume, and the stuck count sensor. Runs on CPython and
MicroPython (plain asserts)."""

from firmware.drivers.motion import Lane
from firmware.fakes.hal import FakeHal, shipped_pins

PINS = shipped_pins()
FEED = PINS["lane_feed"][2]            # lane 2's
COUNT = PINS["lane_count"][2]
TARGET = 36                 # 2 x 18 stacks


def make(target=TARGET):
    hal = FakeHal()
    return hal, Lane(hal, 2, FEED, COUNT, target, 90000)


def test_counts_one_per_pulse_from_the_start():
    hal, lane = make()
    hal.pulse(COUNT, 3)                  # edges before the wall began are not counted
    lane.start(0)
    assert hal.level(FEED) == 1 and lane.running
    lane.poll(0)
    assert lane.count == 0
    for n in range(1, 6):
        hal.pulse(COUNT)
        lane.poll(n * 100)
        assert lane.count == n
        assert lane.last_tile == n * 100
    lane.poll(900)                       # no tile: the last tile time stays
    assert lane.count == 5 and lane.last_tile == 500
    assert lane.idle_ms(900) == 400
    assert not lane.full


def test_two_edges_between_polls_both_count():
    hal, lane = make()
    lane.start(0)
    hal.pulse(COUNT, 2)
    lane.poll(10)
    assert lane.count == 2


def test_motor_stops_exactly_at_the_target():
    hal, lane = make(target=4)
    lane.start(hal.at(0))
    for n in range(1, 4):
        hal.pulse(COUNT)
        lane.poll(hal.at(n * 10))
        assert hal.level(FEED) == 1, n
        assert not lane.full
    hal.pulse(COUNT)
    lane.poll(hal.at(40))
    assert lane.count == 4 and lane.full
    assert hal.level(FEED) == 0 and not lane.running
    assert hal.writes(FEED) == [(0, 1), (40, 0)]
    hal.pulse(COUNT)                     # a tile that coasted in: counted, motor stays off
    lane.poll(hal.at(50))
    assert lane.count == 5
    assert hal.writes(FEED) == [(0, 1), (40, 0)]


def test_resume_keeps_the_count():
    hal, lane = make(target=4)
    lane.start(0)
    hal.pulse(COUNT, 2)
    lane.poll(10)
    lane.stop()
    assert hal.level(FEED) == 0 and not lane.running
    lane.resume(5000)
    assert hal.level(FEED) == 1 and lane.running
    assert lane.count == 2
    assert lane.idle_ms(5000) == 0       # the idle clock restarts with the motor
    hal.pulse(COUNT)
    lane.poll(5010)
    assert lane.count == 3
    hal.pulse(COUNT)
    lane.poll(5020)
    assert lane.full and hal.level(FEED) == 0


def test_resume_of_a_full_lane_does_not_feed():
    hal, lane = make(target=2)
    lane.start(0)
    hal.pulse(COUNT, 2)
    lane.poll(10)
    assert lane.full and hal.level(FEED) == 0
    lane.resume(20)
    assert hal.level(FEED) == 0 and not lane.running


def test_start_counts_from_zero_again():
    hal, lane = make(target=4)
    lane.start(0)
    hal.pulse(COUNT, 3)
    lane.poll(10)
    lane.start(100)
    lane.poll(110)
    assert lane.count == 0 and hal.level(FEED) == 1


def test_count_sensor_high_over_500_ms_is_fault_13():
    hal, lane = make()
    lane.start(0)
    hal.set(COUNT, 1)
    t = 100
    while t <= 600:                      # high from 100: 500 ms is still allowed
        lane.poll(t)
        assert lane.fault == 0, t
        t += 10
    lane.poll(610)
    assert lane.fault == 13
    assert lane.detail == {"lane": 2, "count": 1, "sensor": "lane_count"}


def test_a_20_ms_pulse_is_no_fault():
    hal, lane = make()
    lane.start(0)
    for k in range(60):                  # 60 tiles: every one high 20 ms, low 80 ms
        t = 100 * k
        hal.set(COUNT, 1)
        lane.poll(t)
        lane.poll(t + 10)
        lane.poll(t + 20)
        hal.set(COUNT, 0)
        lane.poll(t + 30)
    assert lane.fault == 0
    assert lane.count == 60


def test_high_time_is_measured_per_pulse():
    hal, lane = make()
    lane.start(0)
    hal.set(COUNT, 1)
    lane.poll(0)
    lane.poll(400)
    hal.set(COUNT, 0)
    lane.poll(410)
    hal.set(COUNT, 1)                    # a new pulse: its own 500 ms
    lane.poll(420)
    lane.poll(900)
    assert lane.fault == 0
    lane.poll(930)
    assert lane.fault == 13
