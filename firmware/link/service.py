"""The technician's requests: they move actuators, change the config or
read tags (docs/protocol.md, Service sessions; docs/technician.md), and
the requests that open and close a service session (link/session.py
checks the sessions and keeps their log). What anyone may read is
link/readouts.py.

Each request is declared on its line of the codec's table
(protocol.REQUESTS), with who may send it: anyone, no_hand (never during a
hand) or session. `answer` checks that first, then calls the function
named after the request, and logs what a session did with its outcome.
The table itself moves only through the controller's own functions
(controller/service_work.py: jog, scan); a jog's deadline is the
controller's, whose tick stops it.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

import json
import os

from engine_core import tiles
from engine_core.dice import roll
from engine_core.rulesets import SettingError
from firmware import config
from firmware.controller import service_work
from firmware.controller.states import NAMES
from firmware.link import mqttconf, session
from firmware.link import service_log as ring    # the module: service_log is a request here
from firmware.link.codec import LinkError, route
from firmware.link.protocol import NONCE_MS, SESSION_MS
from firmware.tags import UNKNOWN

_LOG_PAGE = const(4)               # entries per service_log answer: 4 of the longest fit a frame
_JOG_MAX_MS = const(2000)          # a jog never runs a motor longer than this
_AUDIT_KINDS = const(24)           # kinds listed by rfid_audit: 24 x 13 bytes fit a frame
_DICE_TEST_MAX = const(500)        # rolls per dice_test: the loop waits for them


def answer(link, ctl, now, op, args):
    """The answer to a request whose home is here (LinkError if refused):
    who may send it first, as its line in the codec's table says; then the
    function named after it; what a session did goes into the log, with
    its outcome ("ok" or the refusal's code)."""
    who = route(op)[0]
    if who == "session":               # the open session's, signed; never in a hand
        # but service_close, which only ends things
        session.check(link, now, args, op != "service_close" and ctl.in_hand(), op)
    elif who == "no_hand" and ctl.in_hand():
        raise session.refused_in_hand(link, op)
    handler = globals()[op]
    # service_close logs itself.
    if who != "session" or op == "service_close":
        return handler(link, ctl, now, args)
    try:
        out = handler(link, ctl, now, args)
    except LinkError as e:
        _noted(link, now, op, args, e.code)
        raise
    _noted(link, now, op, args, "ok")
    return out


def _noted(link, now, op, args, outcome):
    """What a session did, in the log: a dice test as one entry a session
    (its rolls summed), the rest an entry each."""
    if op == "dice_test":
        n = args.get("n")
        session.note_dice(link, now, n if type(n) is int else 0, outcome)
    else:
        session.note_act(link, now, op, args, outcome)


def _still(ctl, op):
    """LinkError unless the table is still: idle, or stopped by a fault
    (what moving an actuator, changing the config or reading tags needs)."""
    if not ctl.still():
        raise LinkError("refused", "%s only when idle or stopped by a fault (the table is %s)"
                        % (op, NAMES[ctl.state]), {"why": "not_still", "op": op,
                                                   "state": NAMES[ctl.state]})


def _working():
    """The refusal of a jog or a scan while another runs."""
    return LinkError("busy", "a jog or a scan is running", {"why": "working"})


def _scanned(ctl, op):
    """LinkError unless the table is still and the walls were scanned
    whole, nothing moved since."""
    _still(ctl, op)
    if not ctl.scanned:
        raise LinkError("refused", "scan the walls first (rfid_scan), and move nothing after",
                        {"why": "scan_first"})


# -- the requests -------------------------------------------------------------

def service_open(link, ctl, now, args):
    return {"ok": True, "nonce": session.challenge(link, now), "ttl_ms": NONCE_MS}


def service_auth(link, ctl, now, args):
    unix_s = args.get("time")
    if unix_s is not None and (type(unix_s) is not int or unix_s < 0):
        raise LinkError("bad_request", "time: seconds since 1970 UTC")
    return {"ok": True, "session": session.authenticate(link, now, args["nonce"], args["mac"],
                                                        unix_s), "expires_ms": SESSION_MS}


def service_close(link, ctl, now, args):
    service_work.stop_jog(ctl, now)
    return {"ok": True, "closed": session.close(link, now, "by the host")}


def service_log(link, ctl, now, args):
    """A page of the log: the whole log with its details does not fit one
    frame; and the key-less events, counted by kind."""
    start = args.get("start", 0)
    n = args.get("n", _LOG_PAGE)
    if start < 0 or n < 1 or n > _LOG_PAGE:
        raise LinkError("bad_request", "start >= 0, n 1..%d" % _LOG_PAGE)
    total = ring.count(link)
    counts = []
    for k in range(len(link.service_counts)):
        if link.service_counts[k]:
            counts.append([session.COUNTED[k] if k < len(session.COUNTED) else
                           "unsaved" if k == len(session.COUNTED) else "other",
                           link.service_counts[k]])
    page = [] if start >= total else [ring.entry(link, i)    # never a range past the log
                                      for i in range(start, min(start + n, total))]
    return {"ok": True, "entries": page, "total": total, "counts": counts}


def jog(link, ctl, now, args):
    """One motor for `ms` (controller/service_work.py starts it)."""
    # The arguments first: a wrong call names what is wrong whatever
    # the table is doing, and never falls back to lane or lifter 0.
    actuator = args["actuator"]
    ms = args["ms"]
    n = 0
    if actuator not in ("plate", "lane", "lift_up", "lift_down"):
        raise LinkError("bad_request", "no actuator %r: plate, lane, lift_up or lift_down"
                        % actuator)
    if ms < 1 or ms > _JOG_MAX_MS:
        raise LinkError("bad_request", "ms must be 1..%d, not %d" % (_JOG_MAX_MS, ms),
                        {"why": "range", "key": "ms", "lo": 1, "hi": _JOG_MAX_MS, "got": ms})
    if actuator != "plate":
        n = args.get("n")
        if n is None:
            raise LinkError("bad_request", "jog %s needs n: which one, 0..3" % actuator)
        if n < 0 or n > 3:
            raise LinkError("bad_request", "n must be 0..3, not %d" % n,
                            {"why": "range", "key": "n", "lo": 0, "hi": 3, "got": n})
    _still(ctl, "jog")
    why = service_work.jog(ctl, now, actuator, n, ms)
    if why == "at_switch":
        switch = actuator[5:]
        raise LinkError("refused", "lifter %d is already at its %s switch" % (n, switch),
                        {"why": why, "n": n, "switch": switch})
    if why:
        raise _working()
    return {"ok": True, "state": "jogging"}


def rfid_scan(link, ctl, now, args):
    """The walls in the lanes scanned, side by side; the `scanned` event
    says when it is done."""
    _still(ctl, "rfid_scan")
    if service_work.scan(ctl, now):
        raise _working()
    return {"ok": True, "state": "scanning"}


def dice_test(link, ctl, now, args):
    """n rolls of the two dice as the table rolls them: the count of each
    face 1..6 over the 2n dice. In a session, on a still table: the rolls
    hold up the control loop, and only a technician sees what the
    generator gives (docs/security.md, Randomness)."""
    n = args["n"]
    if n < 1 or n > _DICE_TEST_MAX:
        raise LinkError("bad_request", "n must be 1..%d" % _DICE_TEST_MAX)
    _still(ctl, "dice_test")
    counts = [0, 0, 0, 0, 0, 0]
    for _ in range(n):
        a, b = roll(ctl.hal.rand)
        counts[a - 1] += 1
        counts[b - 1] += 1
    return {"ok": True, "counts": counts}


# -- what the table does ------------------------------------------------------

def new_game(link, ctl, now, args):
    """A new game: the first dealer drawn again, the streak 0 (docs/hand.md,
    A new game). In a session: drawn again at will, the first dealer
    would be anyone's who asks until his seat comes up, and a streak
    anyone's to end (docs/security.md, Requests open to anyone). Never
    during a hand, a cut one included (the session's own rule)."""
    return {"dealer": ctl.new_game(), "ok": True}


def config_set(link, ctl, now, args):
    """One key of the config file changed, checked whole by the validator,
    written atomically: a new
    file, then a rename over the old one (a power cut leaves one or the
    other). It takes effect when the controller next starts. `key`: a top
    key, or "timings.NAME" / "pins.NAME" for one entry of those."""
    _still(ctl, "config_set")
    cfg, key, value = ctl.cfg, args["key"], args["value"]
    if key.startswith("mqtt."):       # the telemetry's settings: a secret (link/telemetry.py)
        try:
            return mqttconf.configure(ctl.hal, key, value)
        except SettingError as e:
            raise LinkError("config_invalid", str(e), e.facts)
    with open(cfg.path) as f:
        data = json.load(f)
    head, _, leaf = key.partition(".")
    if leaf:
        if type(data.get(head)) is not dict or leaf not in data[head]:
            raise LinkError("not_found", "the config has no %r" % key,
                            {"why": "unknown_key", "key": key})
        data[head][leaf] = value
    elif key in data:
        data[key] = value
    else:
        raise LinkError("not_found", "the config has no %r" % key,
                        {"why": "unknown_key", "key": key})
    try:
        config.check(data, cfg.path)
    except SettingError as e:          # the config's: the value is refused, nothing written
        raise LinkError("config_invalid", str(e), e.facts)
    _write_atomic(cfg.path, data)
    return {"ok": True, "key": key, "value": value, "restart": True}


def _write_atomic(path, data):
    """`data` as JSON in a new file, then renamed over the old one. Written
    to the file as it is encoded: the text whole would be one more
    contiguous block at the session's fullest heap."""
    with open(path + ".new", "w") as f:
        json.dump(data, f)
    os.rename(path + ".new", path)


def rfid_audit(link, ctl, now, args):
    """The tiles in the walls against the ruleset: the tags read, the
    unknown ones, how many kinds differ and each (the first _AUDIT_KINDS)
    as [code, have, want]."""
    _scanned(ctl, "rfid_audit")
    r = ctl.devices.rfid
    seen, ids = r.seen, r.ids
    have = bytearray(tiles.N_KINDS)
    unknown = 0
    read = 0
    for slot in range(len(ids)):
        if not seen[slot]:
            continue
        read += 1
        if ids[slot] == UNKNOWN:
            unknown += 1
        else:
            have[ids[slot]] += 1
    want = ctl.builder.want
    kinds = 0
    diff = []              # at most _AUDIT_KINDS fit in a frame (empty walls: every kind)
    for t in range(tiles.N_KINDS):
        if have[t] != want[t]:
            kinds += 1
            if kinds <= _AUDIT_KINDS:
                diff.append([tiles.CODES[t], have[t], want[t]])
    return {"ok": True, "tags": read, "unknown": unknown, "kinds": kinds, "tiles": diff}


def rfid_learn(link, ctl, now, args):
    """The tag table from a reference set laid in the walls in the known
    order (docs/technician.md): slot 0 up holds the ruleset's tiles in
    code order, each kind's copies together. Every slot must hold a tag,
    each a different one. Tags already known keep their line (a tile's tag
    never changes), with the learned code; the table's secret is written
    whole, atomically, and read when the controller next starts. The scan
    is used up either way."""
    _scanned(ctl, "rfid_learn")
    try:
        return _learn(ctl)
    finally:
            service_work.forget_scan(ctl)


def _learn(ctl):
    r = ctl.devices.rfid
    seen, uids, ids = r.seen, r.raw, r.ids
    if uids is None:                   # the scan was not the session's, or it is stale
        raise LinkError("refused", "scan the walls first (rfid_scan), and move nothing after",
                        {"why": "scan_first"})
    want = ctl.builder.want
    order = bytearray(len(ids))        # the reference tile id of each slot
    slot = 0
    for t in range(tiles.N_KINDS):
        for _ in range(want[t]):
            order[slot] = t
            slot += 1
    for slot in range(len(ids)):
        if not seen[slot]:
            raise LinkError("refused", "slot %d has no tag: lay the whole reference set" % slot,
                            {"why": "no_tag", "slot": slot})
        for other in range(slot):
            if uids[4 * other:4 * other + 4] == uids[4 * slot:4 * slot + 4]:
                raise LinkError("refused", "slots %d and %d read the same tag" % (other, slot),
                                {"why": "same_tag", "slot": slot, "other": other})
    tags = ctl.devices.tags
    learned = bytearray(b"\xff" * len(tags))  # by entry of the table: its slot
    new = 0
    changed = 0
    for slot in range(len(ids)):
        if ids[slot] == UNKNOWN:
            new += 1
        else:
            learned[tags.find(uids, 4 * slot)] = slot
            changed += ids[slot] != order[slot]
    ctl.hal.set_secret(tags.path, _learned(ctl, tags, learned, order))
    return {"ok": True, "tags": len(tags) + new, "new": new, "changed": changed, "restart": True}


def _learned(ctl, tags, learned, order):
    """The learned tag table's lines, one at a time (hal.set_secret writes
    each as it comes: the whole text is never in the heap)."""
    yield "# RFID tag table: UID code (written by rfid_learn)\n"
    for i in range(len(tags)):         # the known tags, learned codes over old
        tid = tags.ids[i] if learned[i] == 0xFF else order[learned[i]]
        yield "%08x %s\n" % (tags.uid(i), tiles.CODES[tid])
    rfid = ctl.devices.rfid
    for slot in range(len(rfid.ids)):
        if rfid.ids[slot] == UNKNOWN:
            yield "%08x %s\n" % (rfid.uid(slot), tiles.CODES[order[slot]])
