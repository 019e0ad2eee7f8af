"""The RFID reader under the walls (UART2), from docs/hardware.md.

    request  0x02 | cmd | len | data | xor | 0x03     xor = cmd ^ len ^ data...
    0x10 SCAN_SIDE  side u8 [, level u8]  ->  0x90  side, count, count x (slot u8, uid u32 BE)
    0x11 PING       -                     ->  0x91  version u8

Level 0 (the default when the byte is left out) is the antenna under the
lifter platform: the wall being built, readable while the platform is at
the bottom (an empty reply otherwise). Level 1 is the antenna under the
table top: the wall in play. Slots are the rules' slot numbers; an empty
slot is not listed, entries come in slot order.

Timing: the request's bytes, then `read_ms` for a side's antenna array
(`ping_ms` for a PING), then the reply's bytes at 115200 baud; the tags
are read at the end of the read time. One request at a time: a request
while one is in progress is ignored, as are frames with a bad xor, an
unknown cmd or bad data (no reply: the firmware times out).

Faults: `rfid_timeout` (no replies at all), `rfid_crc` (replies carry a
wrong xor).
"""

from .serialframes import FrameParser, UartLine, bytes_ms, frame

STX, ETX = 0x02, 0x03
SCAN_SIDE, PING = 0x10, 0x11
LEVEL_PLATFORM, LEVEL_TOP = 0, 1


def xor_check(cmd, n, data):
    x = cmd ^ n
    for b in data:
        x ^= b
    return x


class RfidReader:
    baud = 115200
    read_ms = 120           # one side's antenna array
    ping_ms = 2
    version = 1
    gap_ms = 20             # a partial request older than this is dropped
    bad_xor_mask = 0x5A     # what rfid_crc does to the check byte

    def __init__(self, table):
        self.table = table
        self.line = UartLine(self.baud)
        self.parser = FrameParser(STX, ETX, xor_check, self.gap_ms)
        self.incoming = []      # (t, cmd, data): requests received, not yet handled
        self.reading = None     # (t_done, cmd, side, level)
        self.outbox = []        # (t, bytes): replies on the wire
        self.silent = False
        self.bad_xor = False
        self.requests = 0
        self.replies = 0
        self.ignored = 0        # busy, silent, or a bad request

    @classmethod
    def request_ms(cls, n_data):
        return bytes_ms(n_data + 5, cls.baud)

    @classmethod
    def scan_ms(cls, count, level_byte=False):
        """Request to last reply byte for a side with `count` tags, as this
        reader times it (the lower bound uses the same figure)."""
        return (cls.request_ms(2 if level_byte else 1) + cls.read_ms
                + bytes_ms(2 + 5 * count + 5, cls.baud))

    def receive(self, data, t):
        for item in self.parser.feed(data, self.line.send(len(data), t)):
            self.incoming.append((item[2], item[0], item[1]))

    def next_time(self, now):
        times = [t for t, _, _ in self.incoming] + [t for t, _ in self.outbox]
        if self.reading is not None:
            times.append(self.reading[0])
        return min(times) if times else None

    def run(self, dt):
        pass

    def fire(self, now):
        table = self.table
        while self.outbox and self.outbox[0][0] <= now:
            t, data = self.outbox.pop(0)
            table.uart_out(2, data)
            self.replies += 1
        while self.incoming and self.incoming[0][0] <= now:
            _, cmd, data = self.incoming.pop(0)
            self._request(now, cmd, data)
        if self.reading is not None and self.reading[0] <= now:
            _, cmd, side, level = self.reading
            self.reading = None
            if cmd == PING:
                self._reply(now, 0x91, bytes((self.version,)))
            else:
                entries = sorted(self.read_side(side, level).items())
                out = bytearray((side, len(entries)))
                for slot, tile in entries:
                    out.append(slot)
                    out += tile.uid.to_bytes(4, "big")
                self._reply(now, 0x90, out)

    def _request(self, now, cmd, data):
        self.requests += 1
        if self.silent or self.reading is not None or self.outbox:
            self.ignored += 1
            return
        if cmd == PING and len(data) == 0:
            self.reading = (now + self.ping_ms, cmd, 0, 0)
        elif (cmd == SCAN_SIDE and len(data) in (1, 2) and data[0] < 4
              and (len(data) == 1 or data[1] in (LEVEL_PLATFORM, LEVEL_TOP))):
            level = data[1] if len(data) == 2 else LEVEL_PLATFORM
            self.reading = (now + self.read_ms, cmd, data[0], level)
        else:
            self.ignored += 1
            self.table.log_event("rfid", None, "bad request", cmd, data.hex())

    def _reply(self, now, cmd, data):
        out = bytearray(frame(STX, ETX, xor_check, cmd, data))
        if self.bad_xor:
            out[-2] ^= self.bad_xor_mask
        self.outbox.append((now + bytes_ms(len(out), self.baud), bytes(out)))

    def read_side(self, side, level):
        """{slot: tile} the antenna of that level sees on that side now."""
        table = self.table
        if level == LEVEL_TOP:
            return dict(table.top_walls[side])
        if not table.lifters[side].on_bottom():
            return {}
        return table.lanes[side].wall.slots()

    def power_off(self):
        self.parser.clear()
        self.line.reset()
        self.incoming = []
        self.reading = None
        self.outbox = []
