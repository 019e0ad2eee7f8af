"""Electronic dice (firmware/drivers/panel.py, Dice): faces from the RNG, the roll
ending once after roll_ms."""

from firmware.drivers.panel import Dice
from firmware.hal import ticks_add
from firmware.fakes.hal import FakeHal


def script(values):
    """A rand that hands out the given bytes in order."""
    data = list(values)

    def rand(n):
        out = bytes(data[:n])
        del data[:n]
        assert len(out) == n, "the script ran out"
        return out
    return rand


def test_faces_come_from_the_rand():
    d = Dice(script([0, 5]), 1500)
    d.start(0)
    assert (d.a, d.b) == (1, 6)
    d = Dice(script([6, 251]), 1500)     # 251 = 41 x 6 + 5
    d.start(0)
    assert (d.a, d.b) == (1, 6)
    # 252..255 would favour faces 1..4: rejected, the next byte is used
    d = Dice(script([252, 255, 9, 254, 14]), 1500)
    d.start(0)
    assert (d.a, d.b) == (4, 3)


def test_every_face_from_a_seeded_rand_and_only_1_to_6():
    hal = FakeHal(seed=7)
    d = Dice(hal.rand, 0)
    seen = [0] * 7
    for _ in range(600):
        d.start(0)
        assert 1 <= d.a <= 6 and 1 <= d.b <= 6
        seen[d.a] += 1
        seen[d.b] += 1
    assert seen[0] == 0
    for face in range(1, 7):
        assert 120 < seen[face] < 280, seen   # 1200 faces: ~200 each


def test_the_roll_ends_after_roll_ms_exactly_once():
    d = Dice(script([1, 2]), 1500)
    assert not d.done(0)                 # no roll yet
    d.start(1000)
    assert d.rolling
    assert not d.done(1000)
    assert not d.done(2499)
    assert d.done(2500)
    assert not d.rolling
    assert not d.done(2500)
    assert not d.done(9000)


def test_a_zero_roll_ends_at_once():
    d = Dice(script([1, 2]), 0)
    d.start(500)
    assert d.done(500)
    assert not d.done(500)


def test_the_roll_ends_across_the_ticks_wrap():
    start = ticks_add(0, -100)           # 100 ms before the clock wraps
    d = Dice(script([1, 2]), 1500)
    d.start(start)
    assert not d.done(ticks_add(0, 1399))
    assert d.done(ticks_add(0, 1400))
