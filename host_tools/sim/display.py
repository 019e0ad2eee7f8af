"""The display board (UART1), from docs/hardware.md.

    0x7E | cmd | len | data | sum | 0x7F        sum = (cmd + len + data...) & 0xFF
    ACK: 0x7E 0x80 0x01 cmd sum 0x7F, `ack_ms` after the frame's last byte

A frame is shown when its last byte arrives; it is good (and ACKed) when
its check and end byte are right, its cmd is known and its data has the
length the table gives (SHOW_TEXT: 0..16 ASCII bytes). Anything else is
ignored without an ACK and counted.

`display_unplugged`: no ACKs, frames ignored; plugged back in, the board
starts blank, as it does after a power cut.
"""

from .serialframes import FrameParser, UartLine, bytes_ms, frame

START, END = 0x7E, 0x7F
SHOW_GOLD, SHOW_DICE, SHOW_DEALER, SHOW_COUNT, SHOW_TEXT, CLEAR, SHOW_ALERT = 1, 2, 3, 4, 5, 6, 7
NAMES = {1: "gold", 2: "dice", 3: "dealer", 4: "count", 5: "text", 6: "clear", 7: "alert"}
LENGTHS = {1: (1, 1), 2: (3, 3), 3: (2, 2), 4: (4, 4), 5: (0, 16), 6: (0, 0), 7: (1, 1)}
ALERTS = ("none", "final", "draw")      # SHOW_ALERT's lamp: the final group, the draw


def sum_check(cmd, n, data):
    return (cmd + n + sum(data)) & 0xFF


class DisplayBoard:
    baud = 115200
    ack_ms = 5
    gap_ms = 20

    def __init__(self, table):
        self.table = table
        self.line = UartLine(self.baud)
        self.parser = FrameParser(START, END, sum_check, self.gap_ms)
        self.incoming = []          # (t, cmd, data)
        self.outbox = []            # (t, ack bytes)
        self.unplugged = False
        self.frames = 0             # good frames shown
        self.rejected = 0           # good framing, bad content
        self.history = []           # (t, field, value): every change shown
        self.blank(None)

    def blank(self, t):
        self.gold = 255
        self.dice = None            # (a, b, rolling)
        self.dealer = (255, 0)      # (seat, streak)
        self.count = None           # (drawable, marker seat, marker stack)
        self.alert = "none"         # the final-group / draw lamp
        self.text = ""
        self.changed_at = {}
        if t is not None:
            self.history.append((t, "blank", None))

    @property
    def dealer_seat(self):
        return self.dealer[0] if self.dealer[0] < 4 else None

    def receive(self, data, t):
        times = self.line.send(len(data), t)
        if self.unplugged:
            return
        for cmd, body, t_end in self.parser.feed(data, times):
            self.incoming.append((t_end, cmd, body))

    def next_time(self, now):
        times = [t for t, _, _ in self.incoming] + [t for t, _ in self.outbox]
        return min(times) if times else None

    def run(self, dt):
        pass

    def fire(self, now):
        while self.outbox and self.outbox[0][0] <= now:
            self.table.uart_out(1, self.outbox.pop(0)[1])
        while self.incoming and self.incoming[0][0] <= now:
            _, cmd, data = self.incoming.pop(0)
            if self._show(now, cmd, data):
                self.frames += 1
                ack = frame(START, END, sum_check, 0x80, bytes((cmd,)))
                self.outbox.append((now + self.ack_ms + bytes_ms(len(ack), self.baud), ack))
            else:
                self.rejected += 1

    def _show(self, now, cmd, data):
        if cmd not in LENGTHS or not LENGTHS[cmd][0] <= len(data) <= LENGTHS[cmd][1]:
            return False
        if cmd == SHOW_GOLD:
            self.gold = data[0]
            value = data[0]
        elif cmd == SHOW_DICE:
            self.dice = value = (data[0], data[1], data[2])
        elif cmd == SHOW_DEALER:
            self.dealer = value = (data[0], data[1])
        elif cmd == SHOW_COUNT:
            drawable = int.from_bytes(data[0:2], "little", signed=True)
            self.count = value = (drawable, data[2], data[3])
        elif cmd == SHOW_ALERT:
            if data[0] >= len(ALERTS):
                return False
            self.alert = value = ALERTS[data[0]]
        elif cmd == SHOW_TEXT:
            if any(b > 0x7E or b < 0x20 for b in data):
                return False
            self.text = value = data.decode("ascii")
        else:
            self.blank(now)
            self.changed_at[NAMES[cmd]] = now
            return True
        self.history.append((now, NAMES[cmd], value))
        self.changed_at[NAMES[cmd]] = now
        if cmd == SHOW_DEALER:
            self.table.players.dealer_shown(now)
        if cmd == SHOW_DICE and not data[2]:
            for d in self.table.attached:       # players read the settled dice
                if hasattr(d, "dice_shown"):
                    d.dice_shown(now, data[0], data[1])
        return True

    def power_off(self, t):
        self.parser.clear()
        self.line.reset()
        self.incoming = []
        self.outbox = []
        self.blank(t)
