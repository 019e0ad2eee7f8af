"""The seat keys and the virtual players who press them.

Presses are scripted (`press`) or automatic: once a new set of walls has
reached the top and the display has shown a dealer (a SHOW_DEALER since
the last automatic press: a lamp left on from the last hand does not
count), that dealer presses the dice key `reaction_ms` later and holds it
`hold_ms`; once per set of walls.
Players wait for the walls as well as the lamp (the lower bound counts
the lift and the reaction one after the other), and a lamp shown before
the walls came up is the last hand's (a display replugged after a fault
during a hand shows the last hand's dealer again; players do not press
for that one at the next lift).
"""

import heapq


class Players:
    reaction_ms = 300
    hold_ms = 120

    def __init__(self, table):
        self.table = table
        self.pins = [table.config.pin("keys", s) for s in range(4)]
        self.auto_dice = True
        self.armed_at = None        # walls up, the dealer has not pressed yet
        self.lamp_at = None         # a SHOW_DEALER since the last automatic press
        self.queue = []             # heap of (t, n, seat, value)
        self.n = 0
        self.presses = []           # (t, seat): every press made
        for p in self.pins:
            table.init_input(p, 0)

    def press(self, seat, at=None, hold_ms=None):
        """Seat `seat` presses its key at `at` (default: now) for hold_ms."""
        at = self.table.now if at is None else at
        hold = self.hold_ms if hold_ms is None else hold_ms
        self._push(at, seat, 1)
        self._push(at + hold, seat, 0)
        self.presses.append((at, seat))

    def _push(self, t, seat, value):
        self.n += 1
        heapq.heappush(self.queue, (t, self.n, seat, value))

    def walls_up(self, now):
        # A lamp shown before these walls came up is the last hand's (the
        # display shows everything again after it was replugged): the
        # dealer of these walls is the one the next SHOW_DEALER names.
        if self.lamp_at is not None and self.lamp_at < now:
            self.lamp_at = None
        self.armed_at = now
        self._maybe_press()

    def dealer_shown(self, now):
        self.lamp_at = now
        self._maybe_press()

    def _maybe_press(self):
        seat = self.table.display.dealer_seat
        if (not self.auto_dice or self.armed_at is None or self.lamp_at is None
                or seat is None):
            return
        self.press(seat, max(self.lamp_at, self.armed_at) + self.reaction_ms)
        self.armed_at = None
        self.lamp_at = None

    def next_time(self, now):
        return self.queue[0][0] if self.queue else None

    def run(self, dt):
        pass

    def fire(self, now):
        while self.queue and self.queue[0][0] <= now:
            _, _, seat, value = heapq.heappop(self.queue)
            self.table.emit(self.pins[seat], value)
