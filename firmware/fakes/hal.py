"""A fake HAL for driver tests, on CPython and MicroPython alike.

Time is whatever the test says: `hal.now`, set by `hal.at(t)` (drivers take
`now` as an argument; `ticks_ms()` returns `hal.now` for code that asks, and
output writes are stamped with it). Nothing sleeps.

* Pins are numbers, as in the real HAL (`output`/`pwm`/`input` claim them,
  `write`/`duty`/`read`/`edges` use them; an unclaimed pin is a KeyError).
  Outputs log every value they are given as (time, pin, value) in
  `hal.log`; `hal.level(pin)` is an output's last value.
* Inputs have a level and a rising-edge count that the test sets:
  `hal.set(pin, 1)` (a 0 -> 1 change counts an edge, like the IRQ),
  `hal.pulse(pin)` (one whole pulse: an edge, the level back at 0).
  An input may be set before or after a driver asks for it.
* UARTs keep what is written (`uart.written`, a bytearray) and hand out
  what the test queued (`uart.feed(bytes)`), at most len(buf) per read.
* `rand(n)` is a seeded xorshift: the same bytes on both interpreters.
"""

import sys


class FakeOutput:
    def __init__(self, hal, pin):
        self.hal = hal
        self.pin = pin
        self.level = 0

    def value(self, v):
        self.level = v
        self.hal.log.append((self.hal.now, self.pin, v))

    def duty(self, d):
        self.value(d)


class FakeInput:
    def __init__(self, pin):
        self.pin = pin
        self.level = 0
        self.rising = 0

    def value(self):
        return self.level


class FakeUart:
    def __init__(self, n, tx, rx):
        self.n = n
        self.tx = tx
        self.rx = rx
        self.written = bytearray()
        self.incoming = bytearray()

    def write(self, buf, n):
        self.written.extend(bytes(buf[:n]))

    def readinto(self, buf):
        k = min(len(buf), len(self.incoming))
        for i in range(k):
            buf[i] = self.incoming[i]
        self.incoming = self.incoming[k:]
        return k

    def feed(self, data):
        self.incoming.extend(bytes(data))

    def take(self):
        """What was written since the last take, as bytes."""
        out = bytes(self.written)
        self.written = bytearray()
        return out


class FakeHal:
    entropy_source = "seeded"      # as a virtual table's: its generator is seeded

    def __init__(self, seed=1):
        self.now = 0
        self.log = []              # (time, pin, value) of every output write
        self.outputs = {}          # pin -> FakeOutput
        self.inputs = {}           # pin -> FakeInput
        self.max_ms = {}           # pin -> the longest it may stay on
        self.tripped = -1          # the real HALs' guard: never trips here
        self.uarts = {}            # n -> FakeUart
        self.link = None
        self.wdt = []              # (time, timeout) of wdt_start / wdt_feed
        self._seed = seed & 0xFFFFFFFF or 1

    # -- the HAL interface ---------------------------------------------------

    def ticks_ms(self):
        return self.now

    def sleep_until(self, t):
        self.now = t

    def output(self, pin, max_ms):
        self.outputs[pin] = FakeOutput(self, pin)
        self.max_ms[pin] = max_ms      # the real HALs' guard (firmware/hal/__init__.py)

    def pwm(self, pin, max_ms):
        self.output(pin, max_ms)

    def input(self, pin):
        self._input(pin)

    def write(self, pin, v):
        self.outputs[pin].value(v)     # KeyError: a pin the driver never claimed

    def duty(self, pin, d):
        self.outputs[pin].value(d)

    def read(self, pin):
        return self.inputs[pin].level

    def edges(self, pin):
        return self.inputs[pin].rising

    def uart(self, n, tx, rx, rxbuf=256):
        u = FakeUart(n, tx, rx)
        self.uarts[n] = u
        return u

    def rand(self, n):
        out = bytearray(n)
        x = self._seed
        for i in range(n):
            x ^= (x << 13) & 0xFFFFFFFF
            x ^= x >> 17
            x ^= (x << 5) & 0xFFFFFFFF
            out[i] = x & 0xFF
        self._seed = x
        return bytes(out)

    def wdt_start(self, ms):
        self.wdt.append((self.now, ms))

    def wdt_feed(self):
        self.wdt.append((self.now, -1))

    def all_off(self):
        for pin in self.outputs:
            self.outputs[pin].value(0)

    # -- what tests use ------------------------------------------------------

    def _input(self, pin):
        i = self.inputs.get(pin)
        if i is None:
            i = FakeInput(pin)
            self.inputs[pin] = i
        return i

    def at(self, t):
        """Move the clock to t and return it: `lane.poll(hal.at(40))` both
        drives the driver's time and stamps the outputs it writes."""
        self.now = t
        return t

    def set(self, pin, level):
        i = self._input(pin)
        if level and not i.level:
            i.rising += 1
        i.level = level

    def pulse(self, pin, n=1):
        """n whole pulses (rising edge and release) between two polls."""
        i = self._input(pin)
        i.rising += n
        i.level = 0

    def level(self, pin):
        o = self.outputs.get(pin)
        return o.level if o is not None else 0

    def writes(self, pin):
        """(time, value) of every write to `pin`, in order."""
        return [(t, v) for (t, p, v) in self.log if p == pin]


# The firmware directory (config.json, tags.txt): next to this package, on
# CPython from the source tree and on MicroPython from build/mpy alike.
FIRMWARE_DIR = __file__.rsplit("/", 2)[0] if "/" in __file__ else ".."


def shipped_pins():
    """The pin map of the shipped config.json: driver tests take their GPIO
    numbers from it, so a pin moved there moves in every test."""
    import json
    with open(FIRMWARE_DIR + "/config.json") as f:
        return json.loads(f.read())["pins"]


def write_temp(text, name="_fw_test_tmp.txt"):
    """Write `text` to a file in the current directory (MicroPython has no
    tempfile module) and return its name; remove it with `remove_temp`."""
    with open(name, "w") as f:
        f.write(text)
    return name


def remove_temp(name="_fw_test_tmp.txt"):
    import os
    try:
        os.remove(name)
    except OSError:
        pass


class QuietBoard:
    """The parts of a HAL a whole-controller test does not look at: a dice
    RNG that always rolls the same (`entropy` too, for the DRBG of a
    HalCommon built on it), no flags in flash, a flash folder that does
    not exist (saves fail and are counted, loads find nothing).
    Allocates nothing (test_mpy_loop_alloc runs it under heap_lock)."""
    store = "no-such-flash/"

    def rand(self, n):
        return b"\x03" * n

    entropy = rand

    def flag(self, name):
        return False

    def set_flag(self, name, on):
        pass


def unload(name):
    """Drop the module `name` from sys.modules and from its package, so
    that the next import loads it again (a test that imports a module
    under stand-ins for what it imports)."""
    package, _, leaf = name.rpartition(".")
    sys.modules.pop(name, None)
    parent = sys.modules.get(package)
    if parent is not None and hasattr(parent, leaf):
        delattr(parent, leaf)
