"""The virtual technician: what a technician does at the virtual table for
the fault the controller reports (docs/faults.md, recovery). One recipe for
every host that sends one (the table view, the soak): tip the walls being
built into the tray when the fault's fix says so, then repair the injected
faults that explain it (VirtualTable.clear_fault: each kind's repair is in
faults.py). It acts on the table itself: call it in the table's thread (an
attached device's `fire`), or while the table waits for the host."""

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
