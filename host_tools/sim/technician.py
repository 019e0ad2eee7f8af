"""The virtual technician: what a technician does at the virtual table for
the fault the controller reports (docs/faults.md, recovery). One recipe for
every host that sends one (the table view, the soak): tip the walls being
built into the tray when the fault's fix says so, then repair the injected
faults that explain it (VirtualTable.clear_fault: each kind's repair is in
faults.py). It acts on the table itself: call it in the table's thread (an
attached device's `fire`), or while the table waits for the host.

`TechnicianHands` is the table's side of that work: what the technician's
hands do to the lanes and the sets, methods of VirtualTable (table.py).
"""

from .lanes import Wall, slot_of
from .tileset import make_set

# Which injected faults a technician looks for, by the controller's fault.
SUSPECTS = {
    "lane_jam": ("lane_jam", "sensor_stuck"),
    "plate_stall": ("plate_stall", "sensor_stuck"),
    "lift_stuck": ("lift_stuck", "sensor_stuck"),
    "sensor_stuck": ("sensor_stuck",),
    "build_timeout": ("lane_jam", "plate_stall", "sensor_stuck"),
    "missing_tile": ("missing_tile",),
    "extra_tile": ("extra_tile",),
    "unknown_tag": ("unknown_tag",),
    "rfid_timeout": ("rfid_timeout",),
    "rfid_crc": ("rfid_crc",),
    "display_unplugged": ("display_unplugged",),
}
# Faults whose fix tips the lanes into the tray before `clear`: an audit
# fault (a jam just before the others filled leaves tiles on the plate:
# missing_tile) or a cut power. The walls are built again.
TIP_LANES = ("missing_tile", "extra_tile", "unknown_tag", "power_lost")


def tiles_in_lanes(table):
    """Tiles fed into each lane and not lifted yet (its wall and chute):
    what tipping the lanes returns to the tray."""
    return [sum(1 for t in lane.wall.tiles if t is not None) + (lane.chute is not None)
            for lane in table.lanes]


def visit(table, fault, repair=None):
    """The technician's visit for `fault` (the controller's fault name, or
    None): the lanes tipped if its fix says so, then the injected faults
    repaired, `repair` (fault strings) or by default those that explain
    `fault` (SUSPECTS). Returns (the fault strings repaired, the tiles
    tipped from each lane or None)."""
    tipped = None
    if fault in TIP_LANES:
        tipped = tiles_in_lanes(table)
        table.technician_empties_lanes()
    if repair is None:
        kinds = SUSPECTS.get(fault, ())
        repair = [f.text for f in table.faults if f.kind in kinds]
    done = []
    for name in repair:
        done += table.clear_fault(name)
    return done, tipped


class TechnicianHands:
    """The technician's hands at the table: a part of VirtualTable, which
    holds the lanes, the plate, the walls in play and the log."""

    def technician_empties_lanes(self):
        """After an audit fault the technician tips the walls being built
        back into the tray: every lane starts an empty wall. The walls
        cannot be kept: whoever fixed a tile in them knows where it lies."""
        q = self.plate.queue
        q.extend(self._take_from_lanes())
        self.fault_rng.shuffle(q)
        self.log_event("technician", -1, "lanes emptied into the tray")

    def _take_from_lanes(self):
        """Every tile of the lanes' walls and chutes, taken out by hand: each
        lane starts an empty wall."""
        out = []
        for lane in self.lanes:
            out.extend(t for t in lane.wall.tiles if t is not None)
            if lane.chute is not None:
                out.append(lane.chute)
                lane.clear_chute()
            lane.walls[-1] = Wall(lane.side, self.stacks)
        return out

    def technician_empties_lane(self, side):
        """One lane's wall (and its chute) tipped into the tray by hand: a
        wall with a gap after a power cut, which power_lost `mid_build`
        names; the other lanes keep theirs."""
        lane = self.lanes[side]
        self.plate.queue.extend(t for t in lane.wall.tiles if t is not None)
        if lane.chute is not None:
            self.plate.queue.append(lane.chute)
            lane.clear_chute()
        lane.walls[-1] = Wall(side, self.stacks)
        self.log_event("technician", side, "lane emptied into the tray")

    def technician_sorts_the_sets(self):
        """After a power cut the hand in play is lost and the parlour puts
        the table in order: every tile, wherever it is (tray, lanes, walls
        in play, the table top), is gathered; one whole set goes into the
        tray, shuffled, the other lies on the table top as a finished hand,
        as at power-on. (Tipping the lanes alone is not enough after a cut
        between the first and the last new wall reaching the top: half the
        next set is then on the table top, half in the tray, and no build
        can finish.) Returns how many tiles were gathered."""
        tiles = list(self.plate.queue) + self.pile + self._take_from_lanes()
        self.plate.queue.clear()
        for side in range(4):
            tiles.extend(self.top_walls[side].values())
            self.top_walls[side] = {}
        self._new_walls.clear()
        tray = [t for t in tiles if t.set_no == 0 and not t.extra]
        self.pile = [t for t in tiles if t.set_no != 0 or t.extra]
        self.fault_rng.shuffle(tray)
        self.plate.push(tray)
        self.log_event("technician", -1, "sets sorted: tray and table top", len(tray),
                       len(self.pile))
        return len(tiles)

    def technician_lays_reference_set(self, set_no, leave_out=()):
        """For `rfid learn`: the lanes' walls tipped into the tray, then a
        reference set laid in them by hand in the known order: slot i (the
        firmware's numbering) holds the i-th tile of the set in code order
        (docs/technician.md). `set_no` picks its tags (a number no set of
        the table has: tags the tag table does not know); `leave_out`:
        slots left empty."""
        self.technician_empties_lanes()
        ref = sorted(make_set(self.rules, set_no), key=lambda t: (t.tid, t.copy))
        for lane in self.lanes:
            wall = lane.wall
            for j in range(2 * self.stacks):
                slot = slot_of(lane.side, j, self.stacks)
                wall.tiles.append(None if slot in leave_out else ref[slot])
                wall.gaps.append(0)
                wall.stacked_at.append(self.now)
        self.log_event("technician", -1, "reference set %d laid in the lanes" % set_no)
        return ref
