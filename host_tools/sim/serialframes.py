"""Byte timing on a UART and the STX..ETX frames of the display and the reader.

Both boards of docs/hardware.md frame the same way, differing only in the
start/end bytes and the check byte:

    start | cmd u8 | len u8 | data (len) | check u8 | end

There is no byte stuffing, so the start byte can occur inside a frame; the
parser therefore keeps the bytes and, when a frame fails (bad check, bad
end byte), drops only its start byte and scans again. A partial frame
older than `gap_ms` is thrown away, as a board's receiver times out.
"""


def bytes_ms(n, baud):
    """Whole milliseconds (rounded up) that n bytes take at 8N1 (10 bits)."""
    return -(-n * 10000 // baud)


class UartLine:
    """When each byte written at time t has fully arrived: bytes queue
    behind those still on the wire. Exact integer units of 1/baud ms."""

    def __init__(self, baud):
        self.baud = baud
        self.free = 0           # line free at this time, in 1/baud ms

    def send(self, n, t):
        """Arrival times (ms, rounded up) of n bytes written at t."""
        start = max(t * self.baud, self.free)
        out = [-(-(start + 10000 * (k + 1)) // self.baud) for k in range(n)]
        self.free = start + 10000 * n
        return out

    def reset(self):
        self.free = 0


class FrameParser:
    def __init__(self, start, end, check, gap_ms):
        self.start, self.end, self.check, self.gap_ms = start, end, check, gap_ms
        self.buf = bytearray()
        self.times = []         # arrival time of each byte in buf
        self.frames = 0
        self.bad = 0            # frames with a bad check or end byte
        self.dropped = 0        # bytes thrown away

    def feed(self, data, times):
        """Bytes with their arrival times; returns [(cmd, data, t_end)]."""
        if self.buf and times and times[0] - self.times[-1] > self.gap_ms:
            self.dropped += len(self.buf)
            self.clear()
        self.buf += data
        self.times += times
        out = []
        buf = self.buf
        while True:
            i = buf.find(self.start)
            if i < 0:
                self._drop(len(buf))
                break
            self._drop(i)
            if len(buf) < 3:
                break
            n = buf[2]
            need = n + 5
            if len(buf) < need:
                break
            data = bytes(buf[3:3 + n])
            if buf[need - 1] == self.end and self.check(buf[1], n, data) == buf[need - 2]:
                out.append((buf[1], data, self.times[need - 1]))
                self.frames += 1
                del buf[:need]
                del self.times[:need]
            else:
                self.bad += 1
                self._drop(1)
        return out

    def _drop(self, n):
        if n:
            self.dropped += n
            del self.buf[:n]
            del self.times[:n]

    def clear(self):
        self.buf = bytearray()
        self.times = []


def frame(start, end, check, cmd, data):
    data = bytes(data)
    return bytes((start, cmd, len(data))) + data + bytes((check(cmd, len(data), data), end))
