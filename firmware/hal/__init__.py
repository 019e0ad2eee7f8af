"""The hardware abstraction layer: the only door to pins, UARTs, time,
random bytes and the watchdog. Two backends with one interface:

* `esp32.Esp32Hal` - machine.Pin / PWM / UART / WDT, os.urandom, time.
* `sim.SimHal`     - the same calls carried over the sim bus to the
                     virtual table (docs/hardware.md), in virtual time.

Interface (what drivers and the controller may use):

    hal.ticks_ms()              now, in ms (virtual under sim)
    hal.sleep_until(t, wake)    end of a control tick: wait until t; True.
                                wake: return False early, as soon as the
                                host's bytes wait on the link (then call
                                again to sleep the rest of the tick)
    hal.output(pin, max_ms)     claim a digital output (starts at 0); it may
                                stay on at most max_ms (HalCommon below: the guard)
    hal.pwm(pin, max_ms)        claim a PWM output (starts at duty 0), same
    hal.input(pin)              claim an input; its rising edges are counted
                                (by a pin IRQ, or by the bus) from now on
    hal.write(pin, v)           set a digital output
    hal.duty(pin, d)            set a PWM duty 0..1023
    hal.read(pin)               an input's level, 0 or 1
    hal.edges(pin)              rising edges of an input since it was claimed
    hal.uart(n, tx, rx, rxbuf)  -> obj with .write(buf, n), .readinto(buf) -> k;
                                   rxbuf: bytes it holds until read
    hal.link                    -> the host link: .readinto(buf) -> k (never
                                   blocks), .write(buf, n) -> bool (False: dropped)
    hal.rand(n)                 n random bytes (n <= 32), from the DRBG
                                (HalCommon below), never the raw generator's
    hal.flag(name)              a flag kept in flash across power cuts: set?
    hal.set_flag(name, on)      set or clear it (a file in the store)
    hal.secret(name)            the secret `name` (the service key, the tag
                                table) open for reading, bytes; OSError when
                                the table holds none
    hal.set_secret(name, parts) write it whole from `parts` (str or bytes)
    hal.wdt_start(ms), hal.wdt_feed()
    hal.all_off()               every output off (the safe state)
    hal.tripped                 -1, or an output the guard turned off

A backend gives `entropy(n)`, n bytes of the raw generator (the ESP32's
RNG; a virtual table's seeded one), which only the DRBG reads, and may
keep `pool`, 32 bytes into which it XORs the jitter of physical events
(the ESP32's `stir`).

Pins are numbers, not objects: a driver keeps the HAL and its pin numbers,
and the HAL keeps one small table per kind, so forty pins cost a few hundred
bytes of heap instead of forty objects. The HAL knows every output it gave
out, so `all_off()` can stop every motor after a fault without the caller
listing them.
"""

# Tick arithmetic that wraps like MicroPython's: times are ints modulo the
# ticks period, compared only through ticks_diff. Pure arithmetic (reading
# the clock is the HAL's job), so drivers use it freely.
import os
from array import array

from firmware import drbg

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

_PERIOD = const(1 << 30)
_HALF = const(1 << 29)
_GUARDS = const(16)            # outputs a table has: 1 + 4 + 8 + 1 = 14

try:
    from time import ticks_add, ticks_diff  # pyright: ignore  (MicroPython: native)
except ImportError:  # CPython (host-side tests of drivers)
    def ticks_add(t, ms):
        return (t + ms) % _PERIOD

    def ticks_diff(a, b):
        return ((a - b + _HALF) % _PERIOD) - _HALF


class HalCommon:
    """What both backends share.

    Flags kept as files in `self.store` (a folder path ending in "/"):
    both backends' store is a filesystem, the board's flash or a folder
    standing for it. Secrets are files there too, named as they are asked
    for; the ESP32 backend of a production image keeps them in its
    encrypted NVS instead (docs/security.md).

    The output guard, Klipper's max_duration, below the controller: every
    output is claimed with the longest time it may stay on, and the HAL itself turns
    off one that stays on longer, at the next tick, remembering it in
    `tripped` (the controller raises output_timeout). The controller's own
    deadlines come first (a lane's idle time, the build's, a lifter's
    switch); this catches the bug that forgets one, so that no bug can
    leave a motor running. Both backends inherit it: they call
    `HalCommon.__init__` once, `_guard` when they claim an output, `_switched`
    when one changes, `_watch` at every tick, and give `_off(pin)`.

    Random bytes: HMAC_DRBG (firmware/drbg.py), instantiated from the
    backend's raw generator, `entropy(n)`, and `pers` (personalization:
    what tells this board from another), reseeded from it every 16 blocks
    of 32 bytes; every block is generated with the backend's jitter pool,
    if it keeps one, as additional input (docs/security.md, Randomness).
    The DRBG's state is `_rb` (firmware/drbg.py says what is where in it)."""
    store: str
    _rb: bytearray

    # One array of (pin, max_ms, on since or -1) per guarded output: the
    # tick's guard reads it without allocating.

    def __init__(self, pers):
        self.tripped = -1
        self._g = array("i", bytes(12 * _GUARDS))
        self._g_n = 0
        drbg.start(self, pers)

    def rand(self, n):
        b = self._rb
        i = b[0]
        if i + n > drbg.BLOCK_END:
            i = drbg.refill(self, n)
        b[0] = i + n
        return b[i:i + n]

    def _guard(self, pin, max_ms):
        i = 3 * self._g_n
        if i == 3 * _GUARDS:
            raise ValueError("more than %d outputs" % _GUARDS)
        g = self._g
        g[i] = pin
        g[i + 1] = max_ms
        g[i + 2] = -1
        self._g_n += 1

    def _switched(self, pin, on, now):
        g = self._g
        for i in range(0, 3 * self._g_n, 3):
            if g[i] == pin:
                if not on:
                    g[i + 2] = -1
                elif g[i + 2] < 0:
                    g[i + 2] = now
                return

    def _watch(self, now):
        g = self._g
        for i in range(0, 3 * self._g_n, 3):
            if g[i + 2] >= 0 and ticks_diff(now, g[i + 2]) > g[i + 1]:
                self.tripped = g[i]
                self._off(g[i])

    def _off(self, pin):
        raise NotImplementedError

    def flag(self, name):
        try:
            open(self.store + name).close()
            return True
        except OSError:
            return False

    def set_flag(self, name, on):
        path = self.store + name
        if on:
            with open(path, "w") as f:
                f.write("1")
        elif self.flag(name):
            os.remove(path)

    def secret(self, name):
        return open(self.store + name, "rb")

    def set_secret(self, name, parts):
        """Written to a .new file, then renamed over the old one: a power
        cut leaves the old secret or the new one, whole."""
        path = self.store + name
        with open(path + ".new", "wb") as f:
            for part in parts:
                f.write(part)
        os.rename(path + ".new", path)
