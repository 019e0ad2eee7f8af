"""The sim HAL on the esp32 port, in QEMU (docs/hardware.md, The firmware
in QEMU): the firmware frozen into the board's QEMU image drives the same
virtual table as the twin, over the same sim bus, in the same virtual time.

    UART1   the sim bus, to the virtual table (QEMU's second serial port)
    UART0   the link, MicroPython's console (QEMU has no USB)

The image's frozen main.py runs the table on `sim_hal()` when the flash holds `qemu.json`
(the launcher writes it: host_tools/sim/qemu.py); without it the board
stops at the REPL, where the esp32 HAL's check runs (host_tools/kit_tests/).
"""

import json
import random
import select
import sys

import machine
from micropython import const

from firmware.hal.esp32 import UsbLink
from firmware.hal.sim import SimHal

_BUS_UART = const(1)
_BUS_BAUD = const(921600)       # nominal: QEMU moves bytes at its own pace (unthrottle)
_BUS_RXBUF = const(1024)        # one tick's frames from the table, and room
_SETTINGS = const("qemu.json")

_UART0_CLKDIV = const(0x60000014)  # the S3's UART0_CLKDIV_REG; UART1's is 0x10000 on
_CLKDIV_LEAST = const(1)           # divider 1, fraction 0


def unthrottle(uart):
    """QEMU's UART model, once its 128-byte RX FIFO is full, takes no more
    bytes for 128 characters' time at a rate it derives from this
    divider: about 0.9 s at the console's 115200 (measured: the 129th
    byte of a burst comes 0.9-0.96 s after the first), far past the
    link's 100 ms of table time between a frame's bytes, and past a
    tick on the bus. The emulated line has no rate of its own, so the
    least divider leaves a wait of about a millisecond. Only the QEMU
    image runs this: on a chip it would set the line to 80 Mbaud."""
    machine.mem32[_UART0_CLKDIV + 0x10000 * uart] = _CLKDIV_LEAST


class UartBus:
    """UART1 as the sim HAL reads its pty on the twin: `readinto(buf, n)`
    waits for the first byte (the virtual table always answers a TICK; a
    UART read alone gives up at its timeout), then takes what is there, up
    to n: the sim HAL's reader takes a frame in pieces."""

    def __init__(self):
        self.uart = machine.UART(_BUS_UART, baudrate=_BUS_BAUD, rxbuf=_BUS_RXBUF, timeout=0)
        unthrottle(_BUS_UART)
        self.pollable = self.uart      # what the sim HAL's wake waits on
        self.poll = select.poll()
        self.poll.register(self.uart, select.POLLIN)

    def write(self, buf):
        self.uart.write(buf)

    def readinto(self, buf, n):
        while True:
            for _ in self.poll.ipoll(-1):
                k = self.uart.readinto(buf, n)
                if k:
                    return k


class ConsoleLink(UsbLink):
    """The link on UART0, the console: stdin and stdout, as a board's USB
    link. `f` is what the sim HAL waits on besides the bus."""

    def __init__(self):
        UsbLink.__init__(self)
        self.f = sys.stdin
        unthrottle(0)


def _seeded(seed):
    """The "hardware" RNG of a virtual table: seeded, so that a run is
    reproducible from its seed (as firmware/sim_main.py)."""
    random.seed(seed)

    def rand(n):
        return bytes(random.getrandbits(8) for _ in range(n))
    return rand


def settings():
    """The launcher's settings on the flash, or None (the REPL then)."""
    try:
        with open(_SETTINGS) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def sim_hal(conf):
    """The sim HAL on UART1 and the console, seeded from `conf`."""
    seed = conf.get("seed")
    return SimHal(UartBus(), ConsoleLink(), "/",  # pyright: ignore[reportArgumentType]  (objects for the fds)
                  None if seed is None else _seeded(seed))
