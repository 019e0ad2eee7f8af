"""The technician's readings that need no session: counters, sensors, the
dice test and the config file (docs/protocol.md, Requests).

Memory: like link/service.py, not resident: the link imports this module
for one request and forgets it after the answer (LinkServer._technician),
so that a table in play carries none of it.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

import json

from engine_core.dice import roll
from firmware.drivers import motion
from firmware.link.codec import LinkError

_DICE_TEST_MAX = const(500)        # rolls per request: the loop waits for them


def answer(ctl, op, args):
    """The answer to counters, sensors, dice_test or config_get."""
    if op == "counters":
        return counters(ctl)
    if op == "sensors":
        return sensors(ctl)
    if op == "dice_test":
        n = args["n"]
        if n < 1 or n > _DICE_TEST_MAX:
            raise LinkError("bad_request", "n must be 1..%d" % _DICE_TEST_MAX)
        if not ctl.still():
            raise LinkError("busy", "a dice test only while the table is idle or stopped")
        return {"ok": True, "counts": dice_test(ctl.hal.rand, n)}
    return config_get(ctl.cfg, args.get("key"))                # config_get


def counters(ctl):
    """What the table has done, kept across power cuts (persist.py):
    cycles, hands, lifts, tiles fed by lane, faults by code; `unsaved`:
    saves that failed; `lost`: why they started again from zero."""
    faults = []
    for code in range(len(ctl.fault_counts)):
        if ctl.fault_counts[code]:
            faults.append([code, ctl.fault_counts[code]])
    out = {"ok": True, "cycles": ctl.cycles, "hands": ctl.hands, "lifts": ctl.lifts,
           "tiles_fed": list(ctl.tiles_fed), "faults": faults, "unsaved": ctl.unsaved}
    if ctl.lost:
        out["lost"] = ctl.lost
    return out


def sensors(ctl):
    """Every input as it reads now: the plate's rotation level and
    revolutions, each lane's count sensor and count, each lifter's top
    and bottom switch, each seat key; and the motors: the plate's and
    each lane's (1 = running), each lifter's motion, the buzzer."""
    d = ctl.d
    hal = ctl.hal
    return {"ok": True, "plate": [hal.read(d.plate.sensor), d.plate.revolutions],
            "lanes": [[hal.read(l.sensor), l.count] for l in d.lanes],
            "lifters": [[hal.read(l.top), hal.read(l.bottom)] for l in d.lifters],
            "keys": list(d.keys.stable),
            "motors": [int(d.plate.running)] + [int(l.running) for l in d.lanes],
            "moving": [motion.NAMES[l.state] for l in d.lifters],
            "buzzer": int(d.buzzer.on)}


def dice_test(rand, n):
    """n rolls of the two dice as the table rolls them: the count of each
    face 1..6 over the 2n dice (the rolls hold up the control loop)."""
    counts = [0, 0, 0, 0, 0, 0]
    for _ in range(n):
        a, b = roll(rand)
        counts[a - 1] += 1
        counts[b - 1] += 1
    return counts


def config_get(cfg, key):
    """The config file's keys, or one key's value. The file is read with
    json alone: importing firmware.config again would bring back the
    validator (and the rulesets) that boot forgot to save heap."""
    with open(cfg.path) as f:
        data = json.load(f)
    if key is None:
        return {"ok": True, "keys": sorted(data)}
    if key not in data:
        raise LinkError("not_found", "the config has no %r" % key)
    value = data[key]
    if isinstance(value, dict):    # names are data here, not fields
        value = [[k, value[k]] for k in sorted(value)]
    return {"ok": True, "key": key, "value": value}
