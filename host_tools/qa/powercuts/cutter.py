"""The power cut, planned at a virtual instant, and the technician's hands
on the lanes: both act in the virtual table's own thread."""

import threading


class Cutter:
    """Attached to the virtual table (its thread): cuts the power at the
    planned virtual time; the technician's tipping of the lanes too."""

    def __init__(self, table):
        self.table = table
        self.cut_at = None
        self.cut = threading.Event()
        self.cut_t = None
        self._tip = False
        self.tipped = threading.Event()
        self.tiles = []             # every tile the table holds, at each repair
        table.attach(self)

    def plan(self, t):
        self.cut.clear()
        self.cut_t = None
        self.cut_at = t

    def tip_lanes(self, lanes=None):
        """The parlour sorts the two sets (None), or the technician empties
        only `lanes` (power_lost `mid_build` names them; [] for none); the
        tiles are counted either way."""
        self.tipped.clear()
        self._tip = True if lanes is None else list(lanes)

    # the table's hooks
    def walls_up(self, now):
        pass

    def dice_shown(self, now, a, b):
        pass

    def next_time(self, now):
        if self._tip is not False:
            return now
        return self.cut_at

    def run(self, dt):
        pass

    def fire(self, now):
        if self._tip is not False:
            tip, self._tip = self._tip, False
            if tip is True:
                self.tiles.append(self.table.technician_sorts_the_sets())
            else:
                for side in tip:
                    self.table.technician_empties_lane(side)
                self.tiles.append(self.table.tiles_held())
            self.tipped.set()
        if self.cut_at is not None and now >= self.cut_at:
            self.cut_at = None
            self.cut_t = now
            self.table.power_cut()
            self.cut.set()
