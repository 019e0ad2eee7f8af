"""The technician's requests, and the service sessions that guard those that
move actuators (docs/protocol.md, Service sessions; docs/technician.md).

    host: service_open            -> controller: a fresh nonce (16 random bytes)
    host: service_auth nonce, mac -> mac = HMAC-SHA256(key, nonce + b"service")
                                     controller: a session token, its expiry
    host: jog ... session=token   -> allowed while the session lasts

A nonce answers once and only for `NONCE_MS`; a session lasts `SESSION_MS`
from its last use and never into a hand. No key on the table (`service.key`,
provisioned by make deploy) refuses every session. Every challenge, session
and refusal goes into a small ring, the link's `service_log`.

Memory: a parlour table plays for hours between two technician visits, so
this module is not resident. The link imports it for one technician request
and forgets it after the answer (LinkServer._technician); what must outlive a
request (the session, the outstanding nonces, the log, the key) is kept on
the LinkServer as plain data, and a jog's deadline on the controller, whose
tick stops it. Its names stay interned once used; its functions leave.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

import binascii
import hashlib
import json

from engine_core.dice import roll
from firmware.controller.table import NAMES
from firmware.drivers.lifter import NAMES as LIFT
from firmware.hal import ticks_add, ticks_diff
from firmware.link.codec import LinkError

NONCE_MS = const(30000)            # a challenge must be answered within this
SESSION_MS = const(300000)         # a session lasts this long after its last use
_BLOCK = const(64)                 # SHA-256's block size, for HMAC
_NONCES = const(4)                 # challenges outstanding at once
_LOG = const(16)                   # entries kept
_JOG_MAX_MS = const(2000)          # a jog never runs a motor longer than this
_DICE_TEST_MAX = const(500)        # rolls per request: the loop waits for them


def answer(link, ctl, now, op, args):
    """The answer to a technician's request (LinkError if refused)."""
    if op == "service_open":
        return {"ok": True, "nonce": challenge(link, now), "ttl_ms": NONCE_MS}
    if op == "service_auth":
        token = authenticate(link, now, args["nonce"], args["mac"], ctl.in_hand())
        return {"ok": True, "session": token, "expires_ms": SESSION_MS}
    if op == "service_close":
        return {"ok": True, "closed": close(link, now, "by the host")}
    if op == "service_log":
        return {"ok": True, "entries": link.service_log}
    if op == "jog":
        check(link, now, args.get("session"), ctl.in_hand(), op)
        why = jog(ctl, now, args["actuator"], args.get("n", 0), args["ms"])
        if why:
            raise LinkError("refused", why)
        return {"ok": True, "state": "jogging"}
    if op == "counters":
        return counters(ctl)
    if op == "sensors":
        return sensors(ctl)
    if op == "dice_test":
        n = args["n"]
        if n < 1 or n > _DICE_TEST_MAX:
            raise LinkError("bad_request", "n must be 1..%d" % _DICE_TEST_MAX)
        if not _still(ctl):
            raise LinkError("busy", "a dice test only while the table is idle or stopped")
        return {"ok": True, "counts": dice_test(ctl.hal.rand, n)}
    return config_get(ctl.cfg, args.get("key"))                # config_get


# -- service sessions ------------------------------------------------------

def hmac_sha256(key, msg):
    """RFC 2104 HMAC with SHA-256. Written here because MicroPython's
    firmware has hashlib but no hmac module (micropython-lib's would be one
    more module on the board for these five lines); checked against
    CPython's hmac and RFC 4231's vectors in the tests."""
    if len(key) > _BLOCK:
        key = hashlib.sha256(key).digest()
    key = key + bytes(_BLOCK - len(key))
    inner = hashlib.sha256(bytes(b ^ 0x36 for b in key))
    inner.update(msg)
    outer = hashlib.sha256(bytes(b ^ 0x5C for b in key))
    outer.update(inner.digest())
    return outer.digest()


def challenge(link, now):
    nonce = link.hal.rand(16)
    link.nonces.append([nonce, now])
    if len(link.nonces) > _NONCES:
        link.nonces.pop(0)
    _note(link, now, "challenge")
    return binascii.hexlify(nonce).decode()


def authenticate(link, now, nonce_hex, mac_hex, in_hand):
    """The session token (hex), or LinkError. The nonce is used up either way."""
    if in_hand:
        raise _refused(link, now, "busy", "no service session during a hand")
    found = None
    for entry in link.nonces:
        if binascii.hexlify(entry[0]).decode() == nonce_hex:
            found = entry
    if found is None:
        raise _refused(link, now, "auth_failed", "unknown or already used challenge (ask service_open)")
    link.nonces.remove(found)
    if ticks_diff(now, found[1]) > NONCE_MS:
        raise _refused(link, now, "auth_failed", "challenge expired (ask service_open again)")
    if link.key is None:
        raise _refused(link, now, "auth_failed", "this table has no service key (make deploy KEY=...)")
    want = binascii.hexlify(hmac_sha256(link.key, found[0] + b"service")).decode()
    if mac_hex != want:
        raise _refused(link, now, "auth_failed", "wrong key")
    link.session = binascii.hexlify(link.hal.rand(8)).decode()
    link.session_until = ticks_add(now, SESSION_MS)
    _note(link, now, "opened")
    return link.session


def check(link, now, token, in_hand, what):
    """LinkError unless `token` is the open session (which it extends)."""
    if in_hand:
        raise _refused(link, now, "busy", "%s is refused during a hand" % what)
    if link.session is None or token != link.session:
        raise _refused(link, now, "no_session", "%s needs a service session (service_open)" % what)
    if ticks_diff(now, link.session_until) > 0:
        link.session = None
        raise _refused(link, now, "session_expired", "the service session expired: open another")
    link.session_until = ticks_add(now, SESSION_MS)
    _note(link, now, what)


def close(link, now, reason):
    if link.session is not None:
        link.session = None
        _note(link, now, "closed: " + reason)
        return True
    return False


def _note(link, now, what):
    link.service_log.append([now, what])
    if len(link.service_log) > _LOG:
        link.service_log.pop(0)


def _refused(link, now, code, message):
    """The refusal to raise, noted in the log."""
    _note(link, now, "refused: " + message)
    return LinkError(code, message)


# -- what the table is and does --------------------------------------------

def _still(ctl):
    """Nothing moves for the cycle: idle, or stopped by a fault."""
    return NAMES[ctl.state] in ("idle", "fault")


def counters(ctl):
    """What the table has done since boot (issue 6 keeps them across
    power cuts): cycles, hands, lifts, tiles fed by lane, faults by code."""
    faults = []
    for code in range(len(ctl.fault_counts)):
        if ctl.fault_counts[code]:
            faults.append([code, ctl.fault_counts[code]])
    return {"ok": True, "cycles": ctl.cycles, "hands": ctl.hands, "lifts": ctl.lifts,
            "tiles_fed": list(ctl.tiles_fed), "faults": faults}


def sensors(ctl):
    """Every input as it reads now: the plate's rotation level and
    revolutions, each lane's count sensor and count, each lifter's top
    and bottom switch, each seat key; and the motors: the plate's and
    each lane's (1 = running), each lifter's motion, the buzzer."""
    d = ctl.d
    hal = ctl.hal
    return {"ok": True, "plate": [hal.read(d.plate.rotation), d.plate.revolutions],
            "lanes": [[hal.read(l.sensor), l.count] for l in d.lanes],
            "lifters": [[hal.read(l.top), hal.read(l.bottom)] for l in d.lifters],
            "keys": list(d.keys.stable),
            "motors": [int(d.plate.running)] + [int(l.running) for l in d.lanes],
            "moving": [LIFT[l.state] for l in d.lifters],
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


def jog(ctl, now, actuator, n, ms):
    """Run one motor for `ms`: only when idle or stopped by a fault. None,
    or why not. The controller's tick stops it at `jog_until`."""
    if not _still(ctl):
        return "a jog only when idle or stopped by a fault (the table is %s)" % NAMES[ctl.state]
    if ms < 1 or ms > _JOG_MAX_MS:
        return "ms must be 1..%d" % _JOG_MAX_MS
    if ctl.jogging is not None:
        return "a jog is running"
    d = ctl.d
    if actuator == "plate":
        ctl.jogging = d.plate
        d.plate.start(now)
    elif actuator == "lane" and 0 <= n <= 3:
        ctl.jogging = d.lanes[n]
        d.lanes[n].jog()
    elif (actuator == "lift_up" or actuator == "lift_down") and 0 <= n <= 3:
        lifter = d.lifters[n]
        # The switch itself, not the lifter's state: right after boot
        # its first poll may not have run yet.
        if ctl.hal.read(lifter.top if actuator == "lift_up" else lifter.bottom):
            return "lifter %d is already at its %s switch" % (n, actuator[5:])
        ctl.jogging = lifter           # it stops at its switch, or at the jog's end
        if actuator == "lift_up":
            lifter.lift(now)
        else:
            lifter.lower(now)
    else:
        return "no actuator %r %r to jog (plate; lane, lift_up or lift_down 0..3)" \
            % (actuator, n)
    ctl.jog_until = ticks_add(now, ms)
    ctl.emit("jog", {"name": actuator, "lane": n, "ms": ms})
    return None


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
