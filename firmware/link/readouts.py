"""What anyone may read that `status` does not tell: the hand's public
state, the fault log, the counters, the sensors and the config file
(docs/protocol.md, Requests). Each is declared on its line of the codec's
table (protocol.REQUESTS) and answered by the function named after it,
called by the server's dispatcher as handler(link, ctl, now, args): the
arguments are checked against the table by then.
"""

import json

from firmware.drivers import motion
from firmware.link.codec import LinkError


def hand(link, ctl, now, args):
    """The hand's last published state (public facts only), if one is
    followed."""
    st = ctl.follower.public()
    out = {"ok": True, "active": st is not None}
    if st is not None:
        for k in st:
            if k != "op":
                out[k] = st[k]
    return out


def faults(link, ctl, now, args):
    """The fault log, newest first, at most `n` entries."""
    log = ctl.faults_logged()
    n = args.get("n", len(log))    # any int the codec let through: compared, never sliced
    out = []
    for t, code, name, detail in log:
        if len(out) >= n:
            break
        out.append({"t": t, "code": code, "name": name, "detail": detail})
    return {"ok": True, "faults": out, "total": len(log)}


def counters(link, ctl, now, args):
    """What the table has done, kept across power cuts (persist.py):
    cycles, hands, lifts, tiles fed by lane, faults by code; `unsaved`:
    saves that failed; `lost`: why they started again from zero."""
    by_code = []
    for code in range(len(ctl.fault_counts)):
        if ctl.fault_counts[code]:
            by_code.append([code, ctl.fault_counts[code]])
    out = {"ok": True, "cycles": ctl.cycles, "hands": ctl.hands, "lifts": ctl.lifts,
           "tiles_fed": list(ctl.tiles_fed), "faults": by_code, "unsaved": ctl.unsaved}
    if ctl.lost:
        out["lost"] = ctl.lost
    return out


def sensors(link, ctl, now, args):
    """Every input as it reads now: the plate's rotation level and
    revolutions, each lane's count sensor and count, each lifter's top
    and bottom switch, each seat key; and the motors: the plate's and
    each lane's (1 = running), each lifter's motion, the buzzer."""
    d = ctl.devices
    hal = ctl.hal
    return {"ok": True, "plate": [hal.read(d.plate.sensor), d.plate.revolutions],
            "lanes": [[hal.read(l.sensor), l.count] for l in d.lanes],
            "lifters": [[hal.read(l.top), hal.read(l.bottom)] for l in d.lifters],
            "keys": list(d.keys.stable),
            "motors": [int(d.plate.running)] + [int(l.running) for l in d.lanes],
            "moving": [motion.NAMES[l.state] for l in d.lifters],
            "buzzer": int(d.buzzer.on)}


def config_get(link, ctl, now, args):
    """The config file's keys, or one key's value, as the file holds them
    (the values the controller runs with are the file's at its boot)."""
    key = args.get("key")
    with open(ctl.cfg.path) as f:
        data = json.load(f)
    if key is None:
        return {"ok": True, "keys": sorted(data)}
    if key not in data:
        raise LinkError("not_found", "the config has no %r" % key,
                        {"why": "unknown_key", "key": key})
    value = data[key]
    if isinstance(value, dict):    # names are data here, not fields
        value = [[k, value[k]] for k in sorted(value)]
    return {"ok": True, "key": key, "value": value}
