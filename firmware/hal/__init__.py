"""The hardware abstraction layer: the only door to pins, UARTs, time, the
RNG and the watchdog. Two backends with one interface:

* `esp32.Esp32Hal` - machine.Pin / PWM / UART / WDT, os.urandom, time.
* `sim.SimHal`     - the same calls carried over the sim bus to the
                     virtual table (docs/hardware.md), in virtual time.

Interface (what drivers and the controller may use):

    hal.ticks_ms()              now, in ms (virtual under sim)
    hal.sleep_until(t)          end of a control tick: wait until t
    hal.output(pin)             claim a digital output (starts at 0)
    hal.pwm(pin)                claim a PWM output (starts at duty 0)
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
    hal.rand(n)                 n random bytes (hardware RNG)
    hal.flag(name)              a flag kept in flash across power cuts: set?
    hal.set_flag(name, on)      set or clear it (a file in the store)
    hal.wdt_start(ms), hal.wdt_feed()
    hal.all_off()               every output off (the safe state)

Pins are numbers, not objects: a driver keeps the HAL and its pin numbers,
and the HAL keeps one small table per kind, so forty pins cost a few hundred
bytes of heap instead of forty objects. The HAL knows every output it gave
out, so `all_off()` can stop every motor after a fault without the caller
listing them.
"""

# Tick arithmetic that wraps like MicroPython's: times are ints modulo the
# ticks period, compared only through ticks_diff. Pure arithmetic (reading
# the clock is the HAL's job), so drivers use it freely. It lives here, not
# in a module of its own: every module costs heap on a board.
try:
    from time import ticks_add, ticks_diff  # pyright: ignore  (MicroPython: native)
except ImportError:  # CPython (host-side tests of drivers)
    _PERIOD = 1 << 30
    _HALF = 1 << 29

    def ticks_add(t, delta):
        return (t + delta) % _PERIOD

    def ticks_diff(a, b):
        return ((a - b + _HALF) % _PERIOD) - _HALF


class StoreFlags:
    """Flags kept as files in `self.store` (a folder path ending in "/"):
    both backends' store is a filesystem, the board's flash or a folder
    standing for it, so both inherit this one implementation."""
    store: str

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
            import os
            os.remove(path)
