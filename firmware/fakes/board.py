"""A board of preallocated tables for the control loop's allocation tests
and the bench (firmware/tests/test_mpy_loop_alloc.py, host_tools/bench/
mp_ticks.py): pins as arrays, a UART that is always quiet; nothing here
allocates after construction, so what a tick allocates is the firmware's."""

from array import array

from firmware.fakes.hal import QuietBoard


class QuietUart:
    def write(self, buf, n):
        pass

    def readinto(self, buf):
        return 0


class TableHal(QuietBoard):
    """Pins as arrays; nothing here allocates after construction."""

    def __init__(self):
        self.level = bytearray(49)
        self.out = array("H", bytes(98))
        self.edge = array("I", bytes(196))
        self.uart_obj = QuietUart()

    def output(self, pin, max_ms=0):
        pass

    pwm = input = output
    tripped = -1

    def write(self, pin, v):
        self.out[pin] = v

    duty = write

    def read(self, pin):
        return self.level[pin]

    def edges(self, pin):
        return self.edge[pin]

    def uart(self, n, tx, rx, rxbuf):
        return self.uart_obj

    def all_off(self):
        for pin in range(49):
            self.out[pin] = 0


def events(name, fields):
    """The controller's emit, sending nowhere."""
    pass
