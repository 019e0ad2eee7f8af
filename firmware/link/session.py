"""The service sessions (docs/protocol.md, Service sessions;
docs/security.md) and the service log: a challenge, its answer, each
session request's token, counter and MAC checked, the wrong answers'
lockout and alarm; what a session did written to the log, what hosts
without the key did counted by kind. link/service.py answers the
requests and calls these.

    host: service_open            -> controller: a challenge (16 bytes, hex)
    host: service_auth nonce, mac[, time]
                                  -> mac = HMAC-SHA256(key, nonce + b"service"
                                     [+ the time's decimal digits]): the PC's
                                     clock (seconds since 1970 UTC), which
                                     the session's log entries then carry
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
requests are refused (and their counters used up). Each of its requests
is signed with its key and numbered, so a request seen on the wire cannot
be sent again, reordered or changed. No key on the table (`service.key`,
provisioned by make deploy) refuses every session.

What must outlive a request (the session and its key, the challenges'
count, the wrong MACs, the counts, the key) is kept on the LinkServer,
allocated at boot.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

import binascii
import hashlib
import hmac

from firmware.controller import service_work
from firmware.frame import HEADER
from firmware.hal import ticks_diff
from firmware.link import service_log
from firmware.link.codec import LinkError
from firmware.link.protocol import LOCK_MAX_MS, NONCE_MS, SESSION_MS

_LOCK_MS = const(250)              # service_auth shut after a wrong MAC, doubled by each next,
                                   # up to LOCK_MAX_MS (link/codec.py)
_ALARM_RUN = const(8)              # wrong MACs in a row that raise the alarm
_CTR_MAX = const(0x3FFFFFFF)       # request counters and challenge numbers stay small ints
# The tail of a signed request's payload: ,"mac":" + 32 hex digits + "}
_TAIL = const(42)
# What key-less hosts did, counted by kind (the link's service_counts;
# then "unsaved", then any other code). 
COUNTED = const(("challenge", "auth_failed", "no_session", "session_expired", "busy",
                  "locked", "bad_mac", "replay"))


# -- the sessions ------------------------------------------------------------
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


def authenticate(link, now, nonce_hex, mac_hex, unix_s=None):
    """The session token (hex), or LinkError. A right answer uses the
    challenge up, and every older one; a wrong one shuts service_auth for
    a while. Never during a hand: `service_auth` is no_hand (answer).
    `unix_s`: the PC's clock, signed with the answer (a host without the
    key cannot set the log's dates); the session's entries carry it."""
    if link.lock_at >= 0:
        d = ticks_diff(now, link.lock_at)
        if 0 <= d < _lock_ms(link.bad_run):
            wait = _lock_ms(link.bad_run) - d
            raise refused(link, "auth_failed", "locked after %d wrong answers in a row: try again"
                          " in %d ms" % (link.bad_run, wait), "locked",
                          {"why": "locked", "n": link.bad_run, "retry_ms": wait})
    try:
        nonce = binascii.unhexlify(nonce_hex)
    except ValueError:
        nonce = b""
    n = link.challenges
    c = int.from_bytes(nonce[8:12], "big") if len(nonce) == 16 else 0
    if not n[0] or nonce[:8] != bytes(link.session_key[32:40]) or c <= n[1] or c > n[0]:
        raise refused(link, "auth_failed", "unknown, used or expired challenge (ask service_open)",
                      info={"why": "challenge"})
    d = ticks_diff(now, int.from_bytes(nonce[12:16], "big"))
    if d < 0 or d > NONCE_MS:
        raise refused(link, "auth_failed", "challenge expired (ask service_open again)",
                      info={"why": "challenge"})
    if link.key is None:
        raise refused(link, "auth_failed", "this table has no service key (make deploy KEY=...)",
                      info={"why": "keyless"})
    signed = nonce + b"service" if unix_s is None else nonce + b"service" + str(unix_s).encode()
    if not _same(_mac(link.key, signed), mac_hex, 32):
        _wrong(link, now)
        raise refused(link, "auth_failed", "wrong key", info={"why": "wrong_key"})
    n[1] = c                           # this challenge and every older one: used
    link.bad_run = 0
    link.lock_at = -1
    link.session_key[0:32] = _mac(link.key, nonce + b"session")
    link.session = binascii.hexlify(link.hal.rand(8)).decode()
    link.session_at = now
    link.session_ctr = 0
    link.session_state = 1
    if unix_s is None:
        service_log.clear_clock(link)
    else:
        service_log.set_clock(link, now, unix_s)
    link.service_ring[service_log.DICE] = -1
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
        raise refused_in_hand(link, what)
    if not mine:
        raise refused(link, "no_session", "%s needs a service session (service_open)" % what,
                      info={"why": "no_session", "op": what})
    d = ticks_diff(now, link.session_at)
    if not link.session_state or d < 0 or d > SESSION_MS:
        link.session = None
        link.session_state = 0
        raise refused(link, "session_expired", "the service session expired: open another",
                      info={"why": "expired"})
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
    return refused(link, "auth_failed", message, kind, {"why": kind, "op": what})


def close(link, now, reason):
    if link.controller is not None:
            service_work.forget_scan(link.controller)
    if link.session is not None:
        link.session = None
        link.session_state = 0
        _note(link, [now, "closed: " + reason])
        service_log.clear_clock(link)
        return True
    return False


# -- the service log ---------------------------------------------------------
#
# What a session did goes into a ring of fixed-size records in the board's
# flash (link/service_log.py: kept across power cuts, the last 200
# entries); what a host without the key did (challenges asked, refusals)
# is counted by kind in the link's `service_counts`. So a host without
# the key can neither push a technician's entries out nor wear the flash,
# and the log keeps nothing in the heap between two requests: entries kept
# there, each made where the heap had room when it came, split the free
# heap over a day of refused requests (docs/heap-idioms.md).

def _count(link, kind):
    """One more key-less event of `kind` (the last slot: any other)."""
    counts = link.service_counts
    i = len(counts) - 1
    for k in range(len(COUNTED)):
        if COUNTED[k] == kind:
            i = k
    if counts[i] < 0xFFFF:
        counts[i] += 1


def entries(link):
    """The service log as kept, oldest first (a damaged record as
    [None, "damaged"])."""
    return [service_log.entry(link, i) for i in range(service_log.count(link))]


def _note(link, entry, seq=-1):
    """`entry` ([t, what, ...]) at the end of the log (or over record
    `seq`); its seq. A flash that fails loses the entry, counted
    ("unsaved"), never the request."""
    try:
        return service_log.note(link, entry[0], entry[1:], seq)
    except Exception:
        counts = link.service_counts
        counts[len(counts) - 2] += 1
        return -1


def note_dice(link, now, n, outcome):
    """A dice test's rolls: one entry a session, [t, "dice_test", rolls,
    outcome], its rolls summed over the session's requests (a long test
    is 200 of them: an entry each would push a visit's evidence out)."""
    r = link.service_ring
    if outcome == "ok" and r[service_log.DICE] >= 0:
        r[service_log.DICE_N] += n
        _note(link, [now, "dice_test", r[service_log.DICE_N], "ok"], r[service_log.DICE])
        return
    seq = _note(link, [now, "dice_test", n, outcome])
    if outcome == "ok":
        r[service_log.DICE] = seq
        r[service_log.DICE_N] = n


def note_act(link, now, op, args, outcome):
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


def refused(link, code, message, kind=None, info=None):
    """The refusal to raise, counted by its kind (its code by default);
    `info`: its reason's word and facts (protocol.ERROR_FIELDS)."""
    _count(link, kind or code)
    return LinkError(code, message, info)


def refused_in_hand(link, op):
    """The refusal of `op` during a hand."""
    return refused(link, "busy", "%s is refused during a hand" % op,
                   info={"why": "in_hand", "op": op})
