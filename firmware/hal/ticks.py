"""Tick arithmetic that wraps like MicroPython's: times are ints modulo
TICKS_PERIOD, compared only through ticks_diff. Pure arithmetic (reading the
clock is the HAL's job), so drivers may import it anywhere."""

try:
    from time import ticks_add, ticks_diff  # MicroPython: native
except ImportError:  # CPython (host-side tests of drivers)
    TICKS_PERIOD = 1 << 30
    _HALF = TICKS_PERIOD // 2

    def ticks_add(t, delta):
        return (t + delta) % TICKS_PERIOD

    def ticks_diff(a, b):
        return ((a - b + _HALF) % TICKS_PERIOD) - _HALF
