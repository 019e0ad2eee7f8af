"""Named faults: parse a fault string, inject it, repair it.

Every fault shows only through the devices (what a sensor reads, what a
board answers), never through a side channel, and `repair` leaves the
table working again, as a technician would:

    lane_jam:<lane>          a tile stuck in the lane: nothing moves, no pulses
                             repair: the jam is cleared, the tile goes on
    plate_stall              the plate is blocked: no turning, no rotation pulses
    lift_stuck:<side>        the lifter does not move; its switches stay as they are
    sensor_stuck:<name>:<v>  a sensor reads v whatever happens; name is a pin
                             name of the config with its index, e.g.
                             lane_count:2, lift_top:0, plate_rotation, keys:1
                             (lane_count2 and lane_count[2] are accepted)
    missing_tile:<code>      one copy of that tile is taken out of the set to be built
                             repair: it is put back into the tray
    extra_tile:<code>        one more copy (copy 0 of the other set's tag) is put
                             in the tray where it will be built into a wall; one
                             tile of the set is then left over on the plate
                             repair: the extra tile is taken out; if it was in a
                             wall, the technician puts the next tile from the plate
                             (the one left over) in its slot
    unknown_tag[:<hex uid>]  one tile to be built carries a foreign tag (0xDEADBEEF)
                             repair: the tile gets its proper tag back
    rfid_timeout             the reader stops answering
    rfid_crc                 the reader's replies have a wrong xor
    display_unplugged        no ACKs, frames ignored; repair: plugged back in (blank)
    power_cut:<seconds>      at that virtual time every output goes off and the
                             controller is dead until its next HELLO (table.py)
"""

import re

from engine_core import tiles as core_tiles

from .config import INPUTS
from .tileset import Tile

KINDS = ("lane_jam", "plate_stall", "lift_stuck", "sensor_stuck", "missing_tile",
         "extra_tile", "unknown_tag", "rfid_timeout", "rfid_crc", "display_unplugged",
         "power_cut")
FOREIGN_UID = 0xDEADBEEF
_SENSOR = re.compile(r"^([a-z_]+?)(?:[:.\[]?(\d+)\]?)?$")


class Fault:
    def __init__(self, kind, arg=None, value=None, text=None):
        self.kind = kind
        self.arg = arg          # lane, side, gpio, tile id, uid or time (ms)
        self.value = value      # sensor_stuck: the value read
        self.text = text        # canonical fault string
        self.state = None       # what inject did, for repair

    def __repr__(self):
        return "Fault(%s)" % self.text


def parse(text, config):
    kind, _, rest = text.strip().partition(":")
    if kind not in KINDS:
        raise ValueError("unknown fault %r (known: %s)" % (text, ", ".join(KINDS)))
    if kind in ("plate_stall", "rfid_timeout", "rfid_crc", "display_unplugged"):
        if rest:
            raise ValueError("fault %s takes no argument" % kind)
        return Fault(kind, text=kind)
    if kind in ("lane_jam", "lift_stuck"):
        if not rest.isdigit() or int(rest) > 3:
            raise ValueError("fault %s needs a side 0..3, not %r" % (kind, rest))
        return Fault(kind, int(rest), text="%s:%s" % (kind, int(rest)))
    if kind in ("missing_tile", "extra_tile"):
        tid = core_tiles.tile_id(rest)
        return Fault(kind, tid, text="%s:%s" % (kind, rest))
    if kind == "unknown_tag":
        uid = int(rest, 16) if rest else FOREIGN_UID
        return Fault(kind, uid, text="unknown_tag:%08x" % uid)
    if kind == "power_cut":
        try:
            ms = int(round(float(rest) * 1000))
        except ValueError:
            raise ValueError("fault power_cut needs virtual seconds, not %r" % rest)
        return Fault(kind, ms, text="power_cut:%s" % rest)
    # sensor_stuck:<name>:<0|1>
    name, _, value = rest.rpartition(":")
    m = _SENSOR.match(name)
    if value not in ("0", "1") or not m:
        raise ValueError("fault sensor_stuck needs <name>:<0|1>, not %r" % rest)
    pin_name, index = m.group(1), m.group(2)
    index = int(index) if index is not None else None
    if pin_name not in INPUTS or (pin_name, index) not in config.gpio:
        raise ValueError("sensor_stuck: no input %r in the config" % name)
    gpio = config.pin(pin_name, index)
    return Fault(kind, gpio, int(value),
                 text="sensor_stuck:%s:%s" % (config.label(gpio), value))


def matches(fault, name):
    """clear_fault(name): a full fault string, or its leading part
    ("lane_jam" clears every lane jam, "sensor_stuck:lane_count:2" that sensor)."""
    return fault.text == name or fault.text.startswith(name + ":")


def inject(table, f):
    k = f.kind
    if k == "lane_jam":
        table.lanes[f.arg].jammed = True
    elif k == "plate_stall":
        table.plate.stalled = True
    elif k == "lift_stuck":
        table.lifters[f.arg].stuck = True
    elif k == "sensor_stuck":
        table.stick(f.arg, f.value)
    elif k == "missing_tile":
        f.state = _take_out(table, f.arg)
    elif k == "extra_tile":
        f.state = _put_extra(table, f.arg)
    elif k == "unknown_tag":
        f.state = _retag(table, f.arg)
    elif k == "rfid_timeout":
        table.rfid.silent = True
    elif k == "rfid_crc":
        table.rfid.bad_xor = True
    elif k == "display_unplugged":
        table.display.unplugged = True
        table.display.power_off(table.now)
    elif k == "power_cut":
        table.power_cut_at = f.arg


def repair(table, f):
    k = f.kind
    if k == "lane_jam":
        table.lanes[f.arg].jammed = False
    elif k == "plate_stall":
        table.plate.stalled = False
    elif k == "lift_stuck":
        table.lifters[f.arg].stuck = False
    elif k == "sensor_stuck":
        table.unstick(f.arg)
    elif k == "missing_tile":
        if f.state is not None:
            q = table.plate.queue
            q.insert(table.fault_rng.randint(0, len(q)), f.state)
        table.technician_empties_lanes()
    elif k == "extra_tile":
        _remove_extra(table, f.state)
        table.technician_empties_lanes()
    elif k == "unknown_tag":
        f.state.uid = f.state.proper_uid()
        table.technician_empties_lanes()
    elif k == "rfid_timeout":
        table.rfid.silent = False
    elif k == "rfid_crc":
        table.rfid.bad_xor = False
    elif k == "display_unplugged":
        table.display.unplugged = False
    elif k == "power_cut":
        if table.power_cut_at == f.arg:
            table.power_cut_at = None


def _buildable(table):
    """How many tiles from the front of the plate's queue the lanes can still take."""
    room = sum(lane.cap - len(lane.wall.tiles) - (lane.chute is not None)
               for lane in table.lanes)
    return min(room, len(table.plate.queue))


def _take_out(table, tid):
    """Remove one copy from the set to be built (the tray), else from the
    next set waiting on the table top."""
    for place in (table.plate.queue, table.pile):
        for t in place:
            if t.tid == tid:
                place.remove(t)
                return t
    raise ValueError("missing_tile: no copy of %s left outside the walls" % core_tiles.CODES[tid])


def _put_extra(table, tid):
    q = table.plate.queue
    n = _buildable(table)
    # A tile of the other set strayed in: a known tag, so it shows as a fifth copy.
    other = 1 - q[0].set_no if q and q[0].set_no in (0, 1) else 1
    extra = Tile(tid, 0, set_no=other, extra=True)
    i = table.fault_rng.randrange(0, n) if n > 0 else len(q)
    q.insert(i, extra)
    # The tile that will be left over must not be a copy of the same code,
    # or the walls would hold the right count and the fault would not show.
    if n < len(q) and q[n].tid == tid:
        for j in range(n - 1, -1, -1):
            if q[j].tid != tid:
                q[j], q[n] = q[n], q[j]
                break
    return extra


def _retag(table, uid):
    n = _buildable(table)
    if n == 0:
        raise ValueError("unknown_tag: no tile left to build")
    tile = table.plate.queue[table.fault_rng.randrange(0, n)]
    tile.uid = uid
    return tile


def _remove_extra(table, extra):
    q = table.plate.queue
    if extra in q:
        q.remove(extra)
        return
    for lane in table.lanes:
        if lane.chute is extra:
            lane.clear_chute()      # the technician lifts it out of the chute
            return
        for wall in lane.walls:
            if extra in wall.tiles:
                j = wall.tiles.index(extra)
                wall.tiles[j] = table.plate.take() if q else None   # None: a hole
                return
    for side, top in table.top_walls.items():
        for slot, t in list(top.items()):
            if t is extra:
                if q:
                    top[slot] = table.plate.take()
                else:
                    del top[slot]
                return
    if extra in table.pile:
        table.pile.remove(extra)
