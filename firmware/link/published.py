"""What the telemetry publishes (link/telemetry.py), topic by topic, as
docs/fleet.md gives the payloads: each made from one of the controller's
events, its counters or the link's health, as bytes ready for the wire.

Only public facts: a fault's code, name, cause, fix and its scalar
detail (none for the audit's faults, whose details may name tiles), the
state, a hand's result, the counters, health and build; never a key the
protocol declares secret (link/protocol.py, SECRET_KEYS).
"""

import gc
import json

from firmware import faults
from firmware.faults import AUDIT_FAULTS as _AUDIT_FAULTS
from firmware.link.protocol import SECRET_KEYS

# The controller's events published (the state's own topic is `state`,
# a hand's result is `hand`).
EVENTS = ("state", "fault", "cleared", "result")

# Formatted, not json.dumps of nested dicts: one string, no dict.
_HEALTH = ('{"uptime": %d, "heap_free": %d, "boots": %d, "link": {"errors": %d, '
           '"dropped": %d, "overruns": %d}, "mqtt": {"dropped": %d, "errors": %d, '
           '"refused": %d, "connects": %d, "sent": %d, "skipped": %d}}')


def of_event(name, fields, hands):
    """(topic leaf, payload, retained) of the controller's event `name`
    (fault, cleared or result; a state goes by `state`); `hands`: the
    hands counted, this one's end included."""
    t = fields.get("t")
    if name == "fault":
        code = fields["code"]
        out = {"code": code, "name": fields["name"], "cause": faults.name_of(code, 1),
               "fix": faults.name_of(code, 2), "t": t}
        if code not in _AUDIT_FAULTS:
            out["detail"] = public(fields.get("detail"))
        return "fault", json.dumps(out).encode(), False
    if name == "cleared":
        return "cleared", json.dumps({"code": fields["code"], "t": t}).encode(), False
    w = fields["winner"]
    return "hand", json.dumps({"winner": w, "draw": w is None, "dealer": fields["dealer"],
                               "wins_in_row": fields["wins_in_row"],
                               "streak": fields["streak"], "hands": hands, "t": t}).encode(), False


def state(name, fault, t):
    """The retained state: its name, the fault's code (0: none) and when."""
    return json.dumps({"state": name, "fault": fault or None, "t": t}).encode()


def build(fw, build_id):
    """The retained build: the firmware's version and the image's build id."""
    return json.dumps({"fw": fw, "build": build_id}).encode()


def counters(ctl):
    """The retained counters: cycles, hands, lifts, tiles fed by lane, and
    each fault code seen with how often."""
    by_code = []
    for code in range(len(ctl.fault_counts)):
        if ctl.fault_counts[code]:
            by_code.append([code, ctl.fault_counts[code]])
    return json.dumps({"cycles": ctl.cycles, "hands": ctl.hands, "lifts": ctl.lifts,
                       "tiles_fed": list(ctl.tiles_fed), "faults": by_code}).encode()


def health(now, link, tel):
    """The retained health: uptime, free heap, boots, the link's and the
    telemetry's own counters (`tel`: link/telemetry.py's)."""
    return (_HEALTH % (now, gc.mem_free(), tel.boots, link.errors, link.dropped, link.overruns,
                       tel.dropped, tel.errors, tel.refused, tel.connects, tel.sent,
                       tel.skipped)).encode()


def public(detail):
    """A fault's detail, its scalar members only, none that names a tile."""
    out = {}
    if type(detail) is dict:
        for k in detail:
            v = detail[k]
            if k not in SECRET_KEYS and (v is None or type(v) in (int, str, bool)):
                out[k] = v
    return out
