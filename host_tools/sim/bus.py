"""The sim bus server: the virtual table's end of the hardware bus.

Frames are the link's (firmware/frame.py); kinds and payloads are in
docs/hardware.md, "The sim bus". The firmware sends OUT / UART_TX / WDT as
they happen and TICK when it sleeps; the server runs the table to the
TICK's time and answers with every IN and UART_RX of that span, in time
order, then NOW. HELLO is answered with the level of every input (IN at
the current time) and nothing else: the firmware reads them with the frames
of its first TICK, whose NOW tells it the clock. `request_heap_report()`
puts a HEAP frame before the next NOW: the sim HAL then prints the GC's
figures into the firmware's log (host_tools/sim/heaplog.py reads them).

`serve()` returns why it stopped:
    "stopped"     the `stop` callable said so
    "power_cut"   the table lost power (a power_cut fault or power_cut()):
                  the launcher restarts the firmware and calls serve() again
    "watchdog"    the firmware's watchdog was not fed in time: same. A
                  firmware that stops ticking (a hung loop) stops virtual
                  time too; so after `stall_s` wall seconds without a TICK,
                  with a watchdog running, the table's time goes on to the
                  watchdog's deadline, as a board's would, and it bites
    "eof"         the other end closed the port
    "hung"        no TICK for `hung_s` wall seconds (no watchdog running)
After "power_cut" or "watchdog" every frame up to the next HELLO is ignored
(it comes from the dead firmware).
"""

import os
import select
import struct
import time

import serial

from firmware.frame import MAX_PAYLOAD, FrameReader, encode

HELLO, OUT, UART_TX, TICK, WDT = 0x01, 0x02, 0x03, 0x04, 0x05
IN, UART_RX, NOW, HEAP = 0x81, 0x82, 0x83, 0x84


class BusServer:
    poll_s = 0.02           # longest wait for a byte before checking stop / hung
    hung_s = 10.0
    stall_s = 3.0           # a firmware silent this long with its watchdog on is hung

    def __init__(self, serial_obj, table, realtime=False, speed=1.0):
        """realtime: hold each NOW until the wall clock reaches it, virtual
        time running at `speed` times the wall clock (2.0: twice as fast)."""
        if not speed > 0:
            raise ValueError("speed must be > 0, not %r" % (speed,))
        self.serial = serial_obj
        self._fd = _fd_of(serial_obj)
        self.table = table
        self.realtime = realtime
        self.speed = speed
        self.reader = FrameReader()
        self.seq = 0
        self.booted = False
        self.firmware_version = None
        self.hellos = 0
        self.ticks = 0
        self.garbage = 0        # good CRC but an unknown kind or a bad payload
        self.ignored = 0        # frames before HELLO
        self.heap_reports = 0   # HEAP frames sent
        self._heap_asked = False
        self._rest = b""        # bytes read but not parsed when serve returned
        self._anchor = None     # (wall s, virtual ms) for real-time mode

    def attach(self, serial_obj):
        """A new port (the launcher reopened the bus for a restarted
        firmware): forget the bytes of the old one."""
        self.serial = serial_obj
        self._fd = _fd_of(serial_obj)
        self.reader = FrameReader()
        self._rest = b""

    def request_heap_report(self):
        """Ask the firmware for the GC's figures: a HEAP frame goes with
        the answer to its next TICK (from any thread; asks made before
        that answer leave as one frame)."""
        self._heap_asked = True

    def stats(self):
        return {"hellos": self.hellos, "ticks": self.ticks, "garbage_frames": self.garbage,
                "garbage_bytes": self.reader.dropped, "bad_crc": self.reader.bad_crc,
                "ignored": self.ignored}

    def serve(self, stop=None):
        timeout = getattr(self.serial, "timeout", None)
        if timeout is None or timeout > self.poll_s:
            self.serial.timeout = self.poll_s
        last_tick = time.monotonic()
        while True:
            if stop is not None and stop():
                return "stopped"
            silent = time.monotonic() - last_tick
            if silent > self.stall_s and self.booted and self.table.wdt_deadline is not None:
                self.table.advance_to(self.table.wdt_deadline)
                if self.table.halt_reason is not None:
                    self.booted = False
                    return self.table.halt_reason
            if silent > self.hung_s:
                return "hung"
            if self._rest:
                data, self._rest = self._rest, b""
            else:
                try:
                    data = self._read()
                except (serial.SerialException, OSError):
                    return "eof"
            i = 0
            while i < len(data):
                i = self.reader.feed(data, i)
                if not self.reader.ready:
                    continue
                kind = self.reader.kind
                if kind in (TICK, HELLO):
                    last_tick = time.monotonic()
                reason = self._frame(kind, self.reader.payload(), stop)
                if reason is not None:
                    self._rest = bytes(data[i:])
                    return reason

    def _read(self):
        """What has come, waiting up to `poll_s` for a first byte. On a
        POSIX port (the ptys of the virtual table) straight from its file
        descriptor: a soak runs this once per firmware tick, millions of
        times, and pyserial's read costs a timeout object, a FIONREAD and
        up to two selects per call. The bytes are the same."""
        fd = self._fd
        if fd is None:
            return self.serial.read(self.serial.in_waiting or 1)
        if not select.select((fd,), (), (), self.poll_s)[0]:
            return b""
        try:
            data = os.read(fd, 4096)
        except BlockingIOError:
            return b""
        if not data:           # readable but empty: the other end is gone
            raise serial.SerialException("the port was closed")
        return data

    # -- one frame ------------------------------------------------------------

    def _frame(self, kind, p, stop):
        table = self.table
        if kind == HELLO:
            self.hellos += 1
            self.booted = True
            self.firmware_version = p[0] if p else None
            inputs = table.boot(self.firmware_version)
            self._anchor = (time.monotonic(), table.now)
            self._send([self._in(pin, v, table.now) for pin, v in sorted(inputs.items())])
            return None
        if not self.booted:
            self.ignored += 1
            return None
        if kind == OUT and len(p) == 3:
            pin, value = struct.unpack("<BH", p)
            table.set_output(pin, value)
        elif kind == UART_TX and len(p) >= 1:
            table.uart_write(p[0], p[1:])
        elif kind == WDT and len(p) == 2:
            table.feed_watchdog(struct.unpack("<H", p)[0])
        elif kind == TICK and len(p) == 4:
            self.ticks += 1
            until = struct.unpack("<I", p)[0]
            out = []
            for ev in table.advance_to(until):
                if ev[0] == "in":
                    out.append(self._in(ev[1], ev[2], ev[3]))
                else:
                    out.extend(self._uart_rx(ev[1], ev[2]))
            if table.halt_reason is None:
                if self.realtime:
                    self._hold(table.now, stop)
                if self._heap_asked:
                    self._heap_asked = False
                    self.heap_reports += 1
                    out.append(self._frame_out(HEAP, b""))
                out.append(self._frame_out(NOW, struct.pack("<I", table.now)))
            self._send(out)
        else:
            self.garbage += 1
        if table.halt_reason is not None:
            self.booted = False     # whatever comes before the next HELLO is from the dead
            return table.halt_reason
        return None

    def _in(self, pin, value, at):
        return self._frame_out(IN, struct.pack("<BBI", pin, value, at))

    def _uart_rx(self, uart, data):
        step = MAX_PAYLOAD - 1
        return [self._frame_out(UART_RX, bytes((uart,)) + data[i:i + step])
                for i in range(0, len(data), step)]

    def _frame_out(self, kind, payload):
        self.seq = (self.seq + 1) & 0xFF
        return encode(kind, self.seq, payload)

    def _send(self, frames):
        if not frames:
            return
        data = b"".join(frames)
        fd = self._fd
        if fd is None:
            self.serial.write(data)
            return
        while data:                # a non-blocking fd: wait while the pty is full
            try:
                data = data[os.write(fd, data):]
            except BlockingIOError:
                select.select((), (fd,), (), self.poll_s)

    def _hold(self, now, stop):
        """Real-time mode: NOW leaves when the wall clock reaches it (virtual
        time scaled down by `speed`)."""
        wall0, virt0 = self._anchor
        while True:
            left = wall0 + (now - virt0) / (1000.0 * self.speed) - time.monotonic()
            if left <= 0 or (stop is not None and stop()):
                return
            time.sleep(min(left, self.poll_s))


def _fd_of(port):
    """The file descriptor of a pyserial POSIX port, or of a port that says
    it has one (`posix_fd`: QEMU's socket, host_tools/sim/qemu_machine.py), or None
    (another kind of port object, e.g. a test's fake: read and written
    through pyserial's calls)."""
    fd = getattr(port, "fd", None)
    posix = isinstance(port, serial.Serial) or getattr(port, "posix_fd", False)
    return fd if posix and isinstance(fd, int) else None
