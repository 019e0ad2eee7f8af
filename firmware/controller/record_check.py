"""The hand's record read back at boot and checked (its format:
controller/hand_record.py): `check` takes only a record of this firmware's
shape and this table's ruleset, every value in its range and the changes
coherent; anything else is a ValueError that says what is wrong, never a
guess. Imported by the boot's resume only (controller/resume.py)."""

import json

from engine_core import tiles
from engine_core.tiles import is_int

_KEYS = ("changes", "dealer", "dice", "full", "gold", "gold_dice", "heads", "n", "reserve",
         "ruleset", "takes", "tiles", "v", "wins_in_row")
_SEATED = ("kong", "draw")                  # the changes made by a seat's event
_UNSEATED = ("deal", "replace_flowers", "reveal_gold")   # flower quads dealt, replaced, turned up


def load(sealer, path, rules):
    """The record sealed at `path` (firmware/sealed.py: `sealer`, the
    table's), checked against `rules` (the table's ruleset); None if there
    is none. ValueError if its seal does not check (another key, changed,
    damaged) or it is not a record of this firmware and ruleset."""
    try:
        data = sealer.load(path)
        if data is None:
            return None
        rec = json.loads(data)
    except ValueError as e:
        raise ValueError("the hand's record: %s" % e)
    return check(rec, rules)


def cut_hand(sealer, path, rules, hands):
    """The record of the hand the power cut, when the table had counted
    `hands` hands before it: None when that hand had not begun (a cut
    between the lift and the dice: no record, the last hand's erased at
    its end, or left by an erase that failed). ValueError when the table
    has no key (`sealer` None: no record was kept), or the record is
    damaged, foreign, or of another hand than the one cut."""
    if sealer is None:
        raise ValueError("the table has no key: a hand's tiles are not kept")
    rec = load(sealer, path, rules)
    if rec is None or rec["n"] == hands:
        return None
    if rec["n"] != hands + 1:
        raise ValueError("the hand's record is of hand %d, the hand cut was hand %d"
                         % (rec["n"], hands + 1))
    return rec


def check(rec, rules):
    """`rec` if it is a record of this firmware and ruleset, else a
    ValueError naming the first thing wrong."""
    if type(rec) is not dict:
        raise ValueError("the hand's record is not an object")
    keys = sorted(rec)
    if keys != list(_KEYS):
        raise ValueError("the hand's record is not this firmware's (its fields: %s)"
                         % " ".join(keys))
    if rec["v"] != 3:
        raise ValueError("the hand's record is of version %r, this firmware reads 3" % (rec["v"],))
    if rec["ruleset"] != rules.name:
        raise ValueError("the hand's record is of ruleset %r, the table plays %s"
                         % (rec["ruleset"], rules.name))
    _int(rec, "n", 1, 1 << 30)
    _int(rec, "dealer", 0, 3)
    _int(rec, "wins_in_row", 0, 1 << 30)
    if not _faces(rec["dice"]):
        raise ValueError("the hand's record: dice must be two faces 1..6, not %r" % (rec["dice"],))
    _check_gold(rec, rules)
    reserve = _check_changes(rec["changes"], rules.reserve_base)
    _check_positions(rec, rules.n_tiles)
    if not is_int(rec["full"], 0, 1):
        raise ValueError("the hand's record: full must be 0 or 1")
    _int(rec, "reserve", 0, 255)
    if rec["reserve"] != reserve:
        raise ValueError("the hand's record: the reserve is %d, its changes make it %d"
                         % (rec["reserve"], reserve))
    return rec


def _check_gold(rec, rules):
    """The gold a tile that is no flower, or none; its roll only in a
    ruleset that finds the gold by the dice, and with the gold."""
    gold = rec["gold"]
    if gold is not None:
        try:
            tid = tiles.tile_id(gold)
        except (ValueError, TypeError, KeyError):
            raise ValueError("the hand's record: the gold %r is not a tile" % (gold,))
        if tiles.is_flower(tid):
            raise ValueError("the hand's record: the gold %s is a flower" % gold)
    by_dice = rules.gold_method == "dice"
    if rec["gold_dice"] is not None:
        if not by_dice:
            raise ValueError("the hand's record: a gold roll, but %s turns the gold from the tail"
                             % rules.name)
        if not _faces(rec["gold_dice"]):
            raise ValueError("the hand's record: gold_dice must be two faces 1..6, not %r"
                             % (rec["gold_dice"],))
    if by_dice and (gold is None) != (rec["gold_dice"] is None):
        raise ValueError("the hand's record: the gold and its roll go together")


def _check_changes(changes, reserve):
    """Each change a reserve change that grows the reserve from
    `reserve`; the reserve they make."""
    if type(changes) is not list:
        raise ValueError("the hand's record: changes must be a list")
    for c in changes:
        if not (type(c) is list and len(c) == 4):
            raise ValueError("the hand's record: a change is [op, seat, concealed, reserve], "
                             "not %r" % (c,))
        op, seat, concealed, after = c
        if op in _SEATED:
            ok = is_int(seat, 0, 3)
        else:
            ok = op in _UNSEATED and seat is None
        if not ok or not is_int(concealed, 0, 1) or (concealed and op != "kong"):
            raise ValueError("the hand's record: a change %r is not a reserve change" % (c,))
        if not is_int(after, reserve + 1, 255):
            raise ValueError("the hand's record: the reserve goes from %d to %r" % (reserve, after))
        reserve = after
    return reserve


def _check_positions(rec, n):
    """The heads (one per change), the takes and the tiles: positions and
    slots of a wall of `n` tiles."""
    changes = rec["changes"]
    heads = rec["heads"]
    if not (type(heads) is list and len(heads) == len(changes)):
        raise ValueError("the hand's record: heads must be one per change")
    for h in heads:
        if not is_int(h, -1, n - 1):
            raise ValueError("the hand's record: a head %r is not a position" % (h,))
    takes = rec["takes"]
    if type(takes) is not list:
        raise ValueError("the hand's record: takes must be a list")
    k = 0
    for t in takes:
        if not (type(t) is list and len(t) == 4 and t[0] in ("take", "put_back")
                and is_int(t[1], 0, n - 1) and is_int(t[2], -1, n - 1)
                and is_int(t[3], k, len(changes))):
            raise ValueError("the hand's record: a take %r is not [op, slot, head, changes before]"
                             % (t,))
        k = t[3]
    ids = rec["tiles"]
    if not (type(ids) is str and len(ids) == 2 * n):
        raise ValueError("the hand's record: tiles must be %d hex digits" % (2 * n))


def _faces(dice):
    return type(dice) is list and len(dice) == 2 and is_int(dice[0], 1, 6) and is_int(dice[1], 1, 6)


def _int(rec, key, lo, hi):
    if not is_int(rec[key], lo, hi):
        raise ValueError("the hand's record: %s must be %d..%d, not %r" % (key, lo, hi, rec[key]))
