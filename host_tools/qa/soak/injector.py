"""The soak's faults: injected at a random moment after a set of walls
comes up, and repaired by the technician when the firmware reports them."""

import threading

from host_tools.sim import technician

# Faults the table recovers from by a repair and `clear` (docs/faults.md);
# audit faults and power cuts need the lanes emptied: not injected here.
KINDS = ("lane_jam:0", "lane_jam:1", "lane_jam:2", "lane_jam:3", "plate_stall",
         "rfid_timeout", "display_unplugged")


class Injector:
    """Attached to the virtual table, so that it acts in the table's own
    thread: injects the planned faults at their virtual time, and sends
    the technician (sim/technician.py) when asked (`repair()` from the
    host, then wait)."""

    def __init__(self, table, rng, rate, parlour=None):
        self.table = table
        self.parlour = parlour     # to tell whether a hand is in play at a fault
        self.rng = rng
        self.rate = rate
        self.planned = None        # (t, kind)
        self.active = None         # the kind injected, until repaired
        self.injected = []         # (t, kind)
        self.landed = {"building_in_hand": 0, "building": 0, "in_hand": 0, "other": 0}
        self._asked = False
        self._fault = None
        self.tipped = [0, 0, 0, 0]  # tiles fed, then tipped into the tray, by lane
        self.repaired = threading.Event()
        table.attach(self)

    def repair(self, fault):
        """Send the technician for `fault` (its name): at the table's next
        step, technician.visit repairs what was injected, and after an audit
        fault or a cut power tips the lanes into the tray first."""
        self.repaired.clear()
        self._fault = fault
        self._asked = True

    # -- the table's hooks (its thread) ----------------------------------------

    def walls_up(self, now):
        if self.planned is None and self.active is None and self.rng.random() < self.rate:
            self.planned = (now + self.rng.randrange(1000, 60000), self.rng.choice(KINDS))

    def dice_shown(self, now, a, b):
        pass

    def next_time(self, now):
        if self._asked:
            return now
        return self.planned[0] if self.planned else None

    def run(self, dt):
        pass

    def fire(self, now):
        if self._asked:
            self._asked = False
            # The tiles it tips back were fed but will never be lifted:
            # the controller counts tiles fed by the walls it lifts.
            _, tipped = technician.visit(self.table, self._fault,
                                         [] if self.active is None else [self.active])
            self.active = None
            if tipped is not None:
                self.tipped = [a + b for a, b in zip(self.tipped, tipped)]
            self.repaired.set()
        if self.planned is not None and now >= self.planned[0]:
            kind = self.planned[1]
            self.planned = None
            self._landed()
            self.table.inject(kind)
            self.active = kind
            self.injected.append((now, kind))

    def _landed(self):
        """Where a fault lands: with the next set building (the plate or a
        lane running) and/or a hand in play (players planned it, not done)."""
        table = self.table
        building = table.plate.duty > 0 or any(lane.feed for lane in table.lanes)
        hp = self.parlour.current if self.parlour is not None else None
        playing = hp is not None and hp.scenario is not None and not hp.done
        key = ("building_in_hand" if building and playing else "building" if building
               else "in_hand" if playing else "other")
        self.landed[key] += 1
