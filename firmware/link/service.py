"""The service sessions, and the technician's requests that need one: they
move actuators, change the config or read tags (docs/protocol.md, Service
sessions; docs/technician.md). What anyone may read is link/readouts.py.

    host: service_open            -> controller: a challenge (16 bytes, hex)
    host: service_auth nonce, mac -> mac = HMAC-SHA256(key, nonce + b"service")
                                     controller: a session token, its expiry;
                                     both ends derive the session's key
                                     sk = HMAC-SHA256(key, nonce + b"session")
    host: jog ... session, ctr, mac
                                  -> mac = HMAC-SHA256(sk, the payload before
                                     its last member, "mac")[:16]; ctr above
                                     the last one the session accepted

A challenge carries what its check needs: the boot's random prefix (8
bytes), its number since then (4) and its tick (4); the controller keeps
none of them, so the challenges of a host without the key never push out
the technician's. One is answered within `NONCE_MS`, and a right answer
uses it up with every older one. A wrong MAC leaves it, but shuts
service_auth for a lockout that doubles with each wrong MAC in a row;
a run of `_ALARM_RUN` logs an alarm and sends the `auth_alarm` event.
A session lasts `SESSION_MS` from its last use; during a hand its
requests are refused (and their counters used up). Each of its requests is signed with its key and numbered, so a request
seen on the wire cannot be sent again, reordered or changed. No key on the
table (`service.key`, provisioned by make deploy) refuses every session.
Every session, and every jog, config change and scan with its details and
outcome, goes into the service log, a file kept across power cuts;
challenges and refusals are counted by kind (below, The service log).

Each request is declared on its line of the codec's table
(codec.REQUESTS), with who may send it: anyone, no_hand (never during a
hand) or session. `answer` checks that first, then calls the function
named after the request, and logs what a session did with its outcome.
The table itself moves only through the controller's own functions
(controller/technician.py: jog, scan).

What must outlive a request (the session and its key, the challenges'
count, the wrong MACs, the counts, the key) is kept on the LinkServer,
allocated at boot, and a jog's deadline on the controller, whose tick
stops it.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

import binascii
import hashlib
import hmac
import json
import os

from engine_core import tiles
from engine_core.dice import roll
from firmware import config, persist
from firmware.controller import technician
from firmware.controller.states import NAMES
from firmware.hal import ticks_diff
from firmware.link import mqttconf
from firmware.frame import HEADER
from firmware.link.codec import LOCK_MAX_MS, NONCE_MS, SESSION_MS, LinkError, route
from firmware.tags import UNKNOWN

_LOCK_MS = const(250)              # service_auth shut after a wrong MAC, doubled by each next,
                                   # up to LOCK_MAX_MS (link/codec.py)
_ALARM_RUN = const(8)              # wrong MACs in a row that raise the alarm
_CTR_MAX = const(0x3FFFFFFF)       # request counters and challenge numbers stay small ints
# The tail of a signed request's payload: ,"mac":" + 32 hex digits + "}
_TAIL = const(42)
_LOG = const(16)                   # entries kept
_LOG_FILE = const("service.log")   # in the board's flash (the store)
# What key-less hosts did, counted by kind (the link's service_counts;
# then "unsaved", then any other code). Here, above every use: MicroPython
# replaces a const only below its definition.
_COUNTED = const(("challenge", "auth_failed", "no_session", "session_expired", "busy",
                  "locked", "bad_mac", "replay"))
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
        check(link, now, args, op != "service_close" and ctl.in_hand(), op)
    elif who == "no_hand" and ctl.in_hand():
        raise _refused(link, "busy", "%s is refused during a hand" % op)
    handler = globals()[op]
    # A dice test changes nothing on the table, and a long one is 200
    # requests: logged, it would push a visit's evidence out of the log.
    # service_close logs itself.
    if who != "session" or op == "dice_test" or op == "service_close":
        return handler(link, ctl, now, args)
    try:
        out = handler(link, ctl, now, args)
    except LinkError as e:
        _note_act(link, now, op, args, e.code)
        raise
    _note_act(link, now, op, args, "ok")
    return out


def _still(ctl, op):
    """LinkError unless the table is still: idle, or stopped by a fault
    (what moving an actuator, changing the config or reading tags needs)."""
    if not ctl.still():
        raise LinkError("refused", "%s only when idle or stopped by a fault (the table is %s)"
                        % (op, NAMES[ctl.state]))


def _scanned(ctl, op):
    """LinkError unless the table is still and the walls were scanned
    whole, nothing moved since."""
    _still(ctl, op)
    if not ctl.scanned:
        raise LinkError("refused", "scan the walls first (rfid_scan), and move nothing after")


# -- the requests -------------------------------------------------------------

def service_open(link, ctl, now, args):
    return {"ok": True, "nonce": challenge(link, now), "ttl_ms": NONCE_MS}


def service_auth(link, ctl, now, args):
    return {"ok": True, "session": authenticate(link, now, args["nonce"], args["mac"]),
            "expires_ms": SESSION_MS}


def service_close(link, ctl, now, args):
    technician.stop_jog(ctl, now)
    return {"ok": True, "closed": close(link, now, "by the host")}


def service_log(link, ctl, now, args):
    """A page of the log: the whole log with its details does not fit one
    frame; and the key-less events, counted by kind."""
    start = args.get("start", 0)
    n = args.get("n", _LOG_PAGE)
    if start < 0 or n < 1 or n > _LOG_PAGE:
        raise LinkError("bad_request", "start >= 0, n 1..%d" % _LOG_PAGE)
    log = _entries(link)
    counts = []
    for k in range(len(link.service_counts)):
        if link.service_counts[k]:
            counts.append([_COUNTED[k] if k < len(_COUNTED) else
                           "unsaved" if k == len(_COUNTED) else "other",
                           link.service_counts[k]])
    page = log[start:start + n] if start < len(log) else []   # never a huge slice
    return {"ok": True, "entries": page, "total": len(log), "counts": counts}


def jog(link, ctl, now, args):
    """One motor for `ms` (controller/technician.py starts it)."""
    # The arguments first: a wrong call names what is wrong whatever
    # the table is doing, and never falls back to lane or lifter 0.
    actuator = args["actuator"]
    ms = args["ms"]
    n = 0
    if actuator not in ("plate", "lane", "lift_up", "lift_down"):
        raise LinkError("bad_request", "no actuator %r: plate, lane, lift_up or lift_down"
                        % actuator)
    if ms < 1 or ms > _JOG_MAX_MS:
        raise LinkError("bad_request", "ms must be 1..%d, not %d" % (_JOG_MAX_MS, ms))
    if actuator != "plate":
        n = args.get("n")
        if n is None:
            raise LinkError("bad_request", "jog %s needs n: which one, 0..3" % actuator)
        if n < 0 or n > 3:
            raise LinkError("bad_request", "n must be 0..3, not %d" % n)
    _still(ctl, "jog")
    why = technician.jog(ctl, now, actuator, n, ms)
    if why:
        raise LinkError("refused", why)
    return {"ok": True, "state": "jogging"}


def rfid_scan(link, ctl, now, args):
    """The walls in the lanes scanned, side by side; the `scanned` event
    says when it is done."""
    _still(ctl, "rfid_scan")
    why = technician.scan(ctl, now)
    if why:
        raise LinkError("busy", why)
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


# -- service sessions ------------------------------------------------------
#
# On the LinkServer (made at boot): session, session_at, session_ctr,
# session_state; session_key: the session's key, then the boot's
# challenge prefix; challenges: the challenges issued, the last one no longer
# answerable, a mark and its time (server.py, whose tick moves the floor
# past challenges older than NONCE_MS); bad_run, lock_at: the wrong MACs.

def challenge(link, now):
    """A challenge, hex: the boot's prefix, its number, its tick. A host
    may ask for them at will: counted, nothing kept but the count."""
    n = link.challenges
    if n[0] == 0 or n[0] >= _CTR_MAX:  # the boot's first, or the numbers spent: a new prefix
        link.session_key[32:40] = link.hal.rand(8)
        n[0] = n[1] = n[2] = 0
    n[0] += 1
    _count(link, "challenge")
    return binascii.hexlify(bytes(link.session_key[32:40]) + n[0].to_bytes(4, "big")
                            + now.to_bytes(4, "big")).decode()


def authenticate(link, now, nonce_hex, mac_hex):
    """The session token (hex), or LinkError. A right answer uses the
    challenge up, and every older one; a wrong one shuts service_auth for
    a while. Never during a hand: `service_auth` is no_hand (answer)."""
    if link.lock_at >= 0:
        d = ticks_diff(now, link.lock_at)
        if 0 <= d < _lock_ms(link.bad_run):
            raise _refused(link, "auth_failed", "locked after %d wrong answers in a row: try again"
                           " in %d ms" % (link.bad_run, _lock_ms(link.bad_run) - d), "locked")
    try:
        nonce = binascii.unhexlify(nonce_hex)
    except ValueError:
        nonce = b""
    n = link.challenges
    c = int.from_bytes(nonce[8:12], "big") if len(nonce) == 16 else 0
    if not n[0] or nonce[:8] != bytes(link.session_key[32:40]) or c <= n[1] or c > n[0]:
        raise _refused(link, "auth_failed", "unknown, used or expired challenge (ask service_open)")
    d = ticks_diff(now, int.from_bytes(nonce[12:16], "big"))
    if d < 0 or d > NONCE_MS:
        raise _refused(link, "auth_failed", "challenge expired (ask service_open again)")
    if link.key is None:
        raise _refused(link, "auth_failed", "this table has no service key (make deploy KEY=...)")
    if not _same(_mac(link.key, nonce + b"service"), mac_hex, 32):
        _wrong(link, now)
        raise _refused(link, "auth_failed", "wrong key")
    n[1] = c                           # this challenge and every older one: used
    link.bad_run = 0
    link.lock_at = -1
    link.session_key[0:32] = _mac(link.key, nonce + b"session")
    link.session = binascii.hexlify(link.hal.rand(8)).decode()
    link.session_at = now
    link.session_ctr = 0
    link.session_state = 1
    _note(link, [now, "opened"])
    return link.session


def check(link, now, args, in_hand, what):
    """LinkError unless `args` (a request's) carry the open session's
    token, a counter above the last one it accepted and the request's MAC
    under its key (the payload is the link's reader's); the session is
    extended. A refused request that carried the token is counted, and
    the first of each session logged. One refused in a hand uses its
    counter up all the same: seen on the wire, it is no request to send
    once the hand is over. A right MAC here ends no run of wrong ones
    (only service_auth's does): else a host that sees the token could log
    an alarm between each two of the technician's requests."""
    mine = link.session is not None and args.get("session") == link.session
    ctr = args.get("ctr")
    if in_hand:
        if mine and link.session_state and ctr is not None and link.session_ctr < ctr <= _CTR_MAX \
                and _signed(link):
            link.session_ctr = ctr
        raise _refused(link, "busy", "%s is refused during a hand" % what)
    if not mine:
        raise _refused(link, "no_session", "%s needs a service session (service_open)" % what)
    d = ticks_diff(now, link.session_at)
    if not link.session_state or d < 0 or d > SESSION_MS:
        link.session = None
        link.session_state = 0
        raise _refused(link, "session_expired", "the service session expired: open another")
    if ctr is None or not _signed(link):
        _wrong(link, now)
        raise _rejected(link, now, what, "bad_mac", "%s: no ctr, or a wrong mac (the request"
                        " was changed, or not signed with this session's key)" % what)
    if ctr > _CTR_MAX:
        raise _rejected(link, now, what, "replay", "%s: ctr %d is above %d, the largest a"
                        " session takes: open another" % (what, ctr, _CTR_MAX))
    if ctr <= link.session_ctr:
        raise _rejected(link, now, what, "replay", "%s: ctr %d is not above the last one this"
                        " session accepted (%d): a replayed or reordered request"
                        % (what, ctr, link.session_ctr))
    link.session_ctr = ctr
    link.session_at = now


def _signed(link):
    """Does the request's payload end in ,"mac":"<32 hex digits>"} whose
    digits are the first 16 bytes of HMAC-SHA256(session key, every byte
    before that comma)?"""
    r = link.reader
    e = HEADER + r.length
    b = r.buf
    if r.length <= _TAIL or b[e - _TAIL:e - 34] != b',"mac":"' or b[e - 2:e] != b'"}':
        return False
    return _same(_mac(bytes(link.session_key[0:32]), b[HEADER:e - _TAIL]),
                 b[e - 34:e - 2], 16)


def _mac(key, data):
    """HMAC-SHA256(key, data), 32 bytes: micropython-lib's hmac, frozen
    with the firmware."""
    # (The checker reads CPython's hmac, which wants CPython's hash objects.)
    return hmac.new(key, data, hashlib.sha256).digest()  # pyright: ignore[reportArgumentType]


def _same(want, got_hex, n):
    """Are the hex digits `got_hex` the first n bytes of `want`? Every
    byte is compared, whichever differ."""
    try:
        got = binascii.unhexlify(got_hex)
    except (ValueError, TypeError):
        return False
    if len(got) != n:
        return False
    diff = 0
    for i in range(n):
        diff |= got[i] ^ want[i]
    return not diff


def _lock_ms(run):
    """How long service_auth stays shut after the run-th wrong MAC in a row."""
    return min(_LOCK_MS << min(run - 1, 5), LOCK_MAX_MS) if run > 0 else 0


def _wrong(link, now):
    """One more wrong MAC in a row: service_auth shut for a while; the
    run's _ALARM_RUN-th logged as an alarm (once a run: only the key's
    right answer to service_auth ends a run, so a host without it adds
    one entry a session, and one before the first) and,
    with every doubling after it, sent as the `auth_alarm` event."""
    run = link.bad_run + 1
    if run <= _CTR_MAX:
        link.bad_run = run
    link.lock_at = now
    if run == _ALARM_RUN:
        _note(link, [now, "alarm", run])
    if run >= _ALARM_RUN and not run & (run - 1):
        link.emit("auth_alarm", {"wrong": run})


def _rejected(link, now, what, kind, message):
    """The refusal of a request that carried the open session's token
    (kind "bad_mac" or "replay"), counted; the session's first such one
    logged, [t, "rejected", op, kind]: the token is seen on the wire, so
    more would let a host without the key push the log's entries out."""
    if link.session_state == 1:
        link.session_state = 2
        _note(link, [now, "rejected", what, kind])
    return _refused(link, "auth_failed", message, kind)


def close(link, now, reason):
    if link.controller is not None:
            technician.forget_scan(link.controller)
    if link.session is not None:
        link.session = None
        link.session_state = 0
        _note(link, [now, "closed: " + reason])
        return True
    return False


# -- the service log ---------------------------------------------------------
#
# What a session did goes into a file of the board's flash (persist.py:
# atomic, CRC-checked, kept across power cuts), the last _LOG entries;
# what a host without the key did (challenges asked, refusals) is counted
# by kind in the link's `service_counts`. So a host without the key can
# neither push a technician's entries out nor wear the flash, and the log
# keeps nothing in the heap between two requests: entries kept there, each
# made where the heap had room when it came, split the free heap over a
# day of refused requests (docs/heap-idioms.md).

def _count(link, kind):
    """One more key-less event of `kind` (the last slot: any other)."""
    counts = link.service_counts
    i = len(counts) - 1
    for k in range(len(_COUNTED)):
        if _COUNTED[k] == kind:
            i = k
    if counts[i] < 0xFFFF:
        counts[i] += 1


def _entries(link):
    """The service log as saved, oldest first ([] when there is none yet,
    or it is damaged: the next entry starts it again)."""
    try:
        log = persist.load(link.hal.store + _LOG_FILE)
    except ValueError:
        return []
    return log if type(log) is list else []


def _note(link, entry):
    """`entry` ([t, what, ...]) at the end of the log, the oldest past _LOG
    dropped. A flash that fails loses the entry, counted ("unsaved"), never
    the request."""
    try:
        log = _entries(link)
        log.append(entry)
        persist.save(link.hal.store + _LOG_FILE, log[-_LOG:])
    except Exception:
        counts = link.service_counts
        counts[len(counts) - 2] += 1


def _note_act(link, now, op, args, outcome):
    """What a session did and how it ended (`outcome`: "ok" or a LinkError's
    code): [t, "jog", actuator, n or None, ms, outcome], [t, "config_set",
    key, value, outcome], [t, "rfid_scan"/"rfid_audit"/"rfid_learn",
    outcome]."""
    if op == "jog":
        entry = [now, "jog", args.get("actuator"), args.get("n"), args.get("ms"), outcome]
    elif op == "config_set":       # the telemetry's passwords: never logged
        entry = [now, "config_set", args.get("key"), "***" if str(args.get("key")).endswith(
            "password") else args.get("value"), outcome]
    else:
        entry = [now, op, outcome]
    _note(link, entry)


def _refused(link, code, message, kind=None):
    """The refusal to raise, counted by its kind (its code by default)."""
    _count(link, kind or code)
    return LinkError(code, message)


# -- what the table does ------------------------------------------------------

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
        except ValueError as e:
            raise LinkError("config_invalid", str(e))
    with open(cfg.path) as f:
        data = json.load(f)
    head, _, leaf = key.partition(".")
    if leaf:
        if type(data.get(head)) is not dict or leaf not in data[head]:
            raise LinkError("not_found", "the config has no %r" % key)
        data[head][leaf] = value
    elif key in data:
        data[key] = value
    else:
        raise LinkError("not_found", "the config has no %r" % key)
    try:
        config.check(data, cfg.path)
    except ValueError as e:            # the config's: the value is refused, nothing written
        raise LinkError("config_invalid", str(e))
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
            technician.forget_scan(ctl)


def _learn(ctl):
    r = ctl.devices.rfid
    seen, uids, ids = r.seen, r.raw, r.ids
    if uids is None:                   # the scan was not the session's, or it is stale
        raise LinkError("refused", "scan the walls first (rfid_scan), and move nothing after")
    want = ctl.builder.want
    order = bytearray(len(ids))        # the reference tile id of each slot
    slot = 0
    for t in range(tiles.N_KINDS):
        for _ in range(want[t]):
            order[slot] = t
            slot += 1
    for slot in range(len(ids)):
        if not seen[slot]:
            raise LinkError("refused", "slot %d has no tag: lay the whole reference set" % slot)
        for other in range(slot):
            if uids[4 * other:4 * other + 4] == uids[4 * slot:4 * slot + 4]:
                raise LinkError("refused", "slots %d and %d read the same tag" % (other, slot))
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
