"""Service sessions (firmware/link/session.py, service.py) on both interpreters: the
HMAC against RFC 4231's vectors, every way a session is refused (a
request replayed, reordered or changed among them), the lockout and the
alarm after wrong MACs, expiry across the tick counter's wrap, and the
service log (a file: what sessions did, test_service_log.py; counts: what
key-less hosts did)."""

import binascii
import json
import os
from array import array

from firmware import frame
from firmware.hal import ticks_add
from firmware.link import codec
from firmware.link import service as s
from firmware.link import session
from firmware.link.codec import LinkError
from firmware.fakes.hal import FakeHal

KEY = bytes(range(32))


LOG = "service.log"             # the store is the working folder here


class _Link:
    """What a LinkServer keeps of the service sessions between requests
    (firmware/link/server.py makes the same at boot)."""
    def __init__(self, key, fresh=True):
        self.hal = FakeHal()
        self.hal.store = ""
        self.key = key
        self.controller = None
        self.session = None
        self.session_at = 0
        self.session_ctr = 0
        self.session_state = 0
        self.session_key = bytearray(40)
        self.challenges = array("i", bytes(16))
        self.bad_run = 0
        self.lock_at = -1
        self.service_counts = array("H", bytes(20))
        self.service_ring = array("i", (-1, 0, 0, 0, -1, 0))
        self.reader = frame.FrameReader(160)
        self.events = []
        if fresh:
            try:
                os.remove(LOG)
            except OSError:
                pass


    def emit(self, name, fields):
        self.events.append((name, fields))


def _log(link):
    """The log's entries, an uptime stamp ["up", ms] as its ms (a PC's
    time, ["utc", s], as it is)."""
    return [[e[0][1]] + e[1:] if e[0][0] == "up" else e for e in session.entries(link)]


def _cleaned(test):
    """The test, then its log file removed (no temp folder on MicroPython)."""
    def run():
        try:
            test()
        finally:
            try:
                os.remove(LOG)
            except OSError:
                pass
    return run


def _counts(link):
    return dict(s.answer(link, _Ctl(), 0, "service_log", {})["counts"])


def _hex(b):
    return binascii.hexlify(b).decode()


def hmac_sha256(key, msg):
    """micropython-lib's hmac, as link/service.py uses it (CPython's own
    under CPython)."""
    import hmac
    return hmac.new(key, msg, "sha256").digest()


def test_hmac_sha256_matches_rfc_4231():
    # Test case 1, 2 and 6 (a key longer than the block) of RFC 4231: the
    # frozen library on MicroPython's hashlib, as the link checks a MAC.
    assert _hex(hmac_sha256(b"\x0b" * 20, b"Hi There")) == \
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
    assert _hex(hmac_sha256(b"Jefe", b"what do ya want for nothing?")) == \
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    assert _hex(hmac_sha256(b"\xaa" * 131,
                            b"Test Using Larger Than Block-Size Key - Hash Key First")) == \
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"


def _answer(nonce_hex, key=KEY):
    return _hex(hmac_sha256(key, binascii.unhexlify(nonce_hex) + b"service"))


def _refused(fn, *args):
    try:
        fn(*args)
    except LinkError as e:
        return e.code, e.message
    return None


class _Tech:
    """A technician's end of a session: its token, its key (derived from
    the challenge, as the host's client does) and its request counter."""

    def __init__(self, link, now=0, key=KEY):
        nonce = session.challenge(link, now)
        self.token = session.authenticate(link, now, nonce, _answer(nonce, key))
        self.sk = hmac_sha256(key, binascii.unhexlify(nonce) + b"session")
        self.ctr = 0

    def payload(self, op, ctr=None, **args):
        """The request signed: any JSON serves, the MAC covers its bytes."""
        self.ctr += 1
        args["op"] = op
        args["session"] = self.token
        args["ctr"] = self.ctr if ctr is None else ctr
        return _sign(self.sk, json.dumps(args).encode())


def _sign(sk, payload):
    head = payload[:-1]                # the object without its closing }
    return head + b',"mac":"' + binascii.hexlify(hmac_sha256(sk, head)[:16]) + b'"}'


def _send(link, now, payload, ctl=None):
    """The payload through the link's reader and the service, as the server
    hands it over: the answer, or the refusal (code, message)."""
    r = frame.FrameReader(160)
    r.feed(frame.encode(0x10, 1, payload))
    assert r.ready
    link.reader = r
    try:
        op, args = codec.decode_request(r)
        return s.answer(link, ctl or _Ctl(), now, op, args)
    except LinkError as e:
        return e.code, e.message


def _passed(answer):
    """The session's check let the request through: a jog with a wrong
    argument is refused by its handler, never consulting the table."""
    return answer[0] == "bad_request"


def _jog_payload(tech, ctr=None):
    return tech.payload("jog", ctr, actuator="lift", n=1, ms=100)


@_cleaned
def test_the_right_key_opens_a_session_that_allows_and_is_extended_by_use():
    link = _Link(KEY)
    tech = _Tech(link, 10)
    assert tech.token and len(tech.token) == 16
    assert _passed(_send(link, 1000, _jog_payload(tech)))                       # allowed
    assert _passed(_send(link, 1000 + s.SESSION_MS - 1, _jog_payload(tech)))   # use extends it
    assert _log(link)[0] == [10, "opened"] and _counts(link) == {"challenge": 1}


@_cleaned
def test_a_wrong_key_shuts_auth_for_a_while_and_uses_no_challenge():
    link = _Link(KEY)
    nonce = session.challenge(link, 0)
    assert _refused(session.authenticate, link, 5, nonce, _answer(nonce, b"\x01" * 32)) == \
        ("auth_failed", "wrong key")
    # Shut for 250 ms, even to the right answer; the challenge stays.
    code, msg = _refused(session.authenticate, link, 100, nonce, _answer(nonce))
    assert code == "auth_failed" and "locked" in msg and "in 155 ms" in msg
    assert session.authenticate(link, 300, nonce, _answer(nonce))
    code, msg = _refused(session.authenticate, link, 400, nonce, _answer(nonce))   # replayed
    assert code == "auth_failed" and "used" in msg
    nonce = session.challenge(link, 1000)
    code, msg = _refused(session.authenticate, link, 1000 + s.NONCE_MS + 1, nonce, _answer(nonce))
    assert code == "auth_failed" and "expired" in msg
    for forged in ("00" * 16, "zz", nonce[:16] + "ffffffff" + nonce[24:]):   # never issued
        code, msg = _refused(session.authenticate, link, 1001, forged, _answer(forged)
                             if forged != "zz" else "00")
        assert code == "auth_failed" and "unknown" in msg, forged
    assert _counts(link) == {"challenge": 2, "auth_failed": 6, "locked": 1}
    assert _log(link) == [[300, "opened"]]                 # refusals are counted, not logged


@_cleaned
def test_no_session_an_expired_one_and_a_hand_are_refused():
    link = _Link(KEY)
    assert _send(link, 0, b'{"op":"jog","actuator":"plate","ms":10}')[0] == "no_session"
    tech = _Tech(link)
    other = _sign(tech.sk, b'{"op":"jog","session":"' + b"0" * 16 + b'","ctr":1,"actuator":'
                  b'"plate","ms":10}')
    assert _send(link, 10, other)[0] == "no_session"
    assert _send(link, 10, _jog_payload(tech), _InHand())[0] == "busy"        # in a hand
    assert _send(link, 20 + s.SESSION_MS, _jog_payload(tech))[0] == "session_expired"
    assert _send(link, 30 + s.SESSION_MS, _jog_payload(tech))[0] == "no_session"
    nonce = session.challenge(link, 0)
    assert _refused(s.answer, link, _InHand(), 0, "service_auth",
                    {"nonce": nonce, "mac": _answer(nonce)})[0] == "busy"


@_cleaned
def test_a_replayed_reordered_or_changed_request_is_refused_and_logged_once():
    link = _Link(KEY)
    tech = _Tech(link)
    first = _jog_payload(tech)
    second = _jog_payload(tech)
    assert _passed(_send(link, 10, second))
    code, msg = _send(link, 20, first)                      # reordered: an older counter
    assert code == "auth_failed" and "ctr 1 is not above" in msg and "(2)" in msg
    code, msg = _send(link, 30, second)                     # replayed as it was
    assert code == "auth_failed" and "replayed" in msg
    changed = second.replace(b'"ms": 100', b'"ms": 900')   # the arguments changed
    assert changed != second
    code, msg = _send(link, 40, changed)
    assert code == "auth_failed" and "wrong mac" in msg
    unsigned = b'{"op":"jog","session":"%s","ctr":9,"actuator":"lift","n":1,"ms":100}' \
        % tech.token.encode()                               # the token alone
    assert _send(link, 50, unsigned)[0] == "auth_failed"
    moved = second[:-1] + b',"ctr":99}'                   # a member after the MAC
    assert _send(link, 60, moved)[0] == "auth_failed"
    assert _passed(_send(link, 70, _jog_payload(tech)))     # the session goes on
    entries = [e for e in _log(link) if e[1] == "rejected"]
    assert entries == [[20, "rejected", "jog", "replay"]]   # the first; the rest counted
    counts = _counts(link)
    assert counts["replay"] == 2 and counts["bad_mac"] == 3, counts


@_cleaned
def test_a_request_refused_in_a_hand_is_used_up_and_cannot_be_sent_after_it():
    """Captured as the hand refused it (busy), a signed request is no
    request to send once the hand has ended: its counter is used up."""
    link = _Link(KEY)
    tech = _Tech(link)
    captured = _jog_payload(tech)
    assert _send(link, 10, captured, _InHand())[0] == "busy"
    code, msg = _send(link, 20, captured)                   # the hand over
    assert code == "auth_failed" and "replayed" in msg
    assert _passed(_send(link, 30, _jog_payload(tech)))     # the session goes on


@_cleaned
def test_service_close_needs_the_session_signed_and_works_in_a_hand():
    link = _Link(KEY)
    tech = _Tech(link)
    unsigned = b'{"op":"service_close","session":"%s"}' % tech.token.encode()
    assert _send(link, 10, unsigned)[0] == "auth_failed"
    assert _send(link, 11, b'{"op":"service_close"}')[0] == "no_session"
    assert link.session == tech.token and link.session_state
    answer = _send(link, 20, tech.payload("service_close"), _Stoppable(in_hand=True))
    assert answer == {"ok": True, "closed": True}
    assert link.session is None and _log(link)[-1] == [20, "closed: by the host"]


@_cleaned
def test_a_keyless_flood_of_challenges_pushes_out_no_challenge_nor_log_entry():
    """A host without the key asks for challenges and sessions at will:
    counted, never logged, and the technician's challenge still answers."""
    link = _Link(KEY)
    _session(link)
    mine = session.challenge(link, 0)
    for t in range(1, 100):
        session.challenge(link, t)
        _send(link, t, b'{"op":"jog","session":"ffffffffffffffff","actuator":"plate","ms":9}')
    assert session.authenticate(link, 150, mine, _answer(mine))
    assert _log(link) == [[0, "opened"], [150, "opened"]]
    assert _counts(link) == {"challenge": 101, "no_session": 99}
    later = session.challenge(link, 200)            # a newer one answered: the older are used
    assert session.authenticate(link, 210, later, _answer(later))
    assert _refused(session.authenticate, link, 220, mine, _answer(mine))[0] == "auth_failed"


@_cleaned
def test_wrong_macs_in_a_row_lock_longer_each_time_and_raise_the_alarm_once_a_run():
    link = _Link(KEY)
    nonce = session.challenge(link, 0)
    t = 0
    waits = []
    for k in range(17):
        wait = session._lock_ms(link.bad_run)
        if wait:
            code, msg = _refused(session.authenticate, link, t + wait - 1, nonce, "00" * 32)
            assert "locked" in msg, k             # a try within the lockout: not even checked
        t += wait
        waits.append(wait)
        nonce = session.challenge(link, t)
        assert _refused(session.authenticate, link, t, nonce, "00" * 32) == ("auth_failed", "wrong key")
    assert waits[:8] == [0, 250, 500, 1000, 2000, 4000, 8000, 8000]
    alarms = [e for e in _log(link) if e[1] == "alarm"]
    assert len(alarms) == 1 and alarms[0][2] == 8            # logged once a run
    assert link.events == [("auth_alarm", {"wrong": 8}), ("auth_alarm", {"wrong": 16})]
    t += 8000                                # the right key ends the run
    nonce = session.challenge(link, t)
    assert session.authenticate(link, t, nonce, _answer(nonce)) and link.bad_run == 0
    assert _counts(link)["locked"] == 16


@_cleaned
def test_the_technicians_requests_end_no_run_so_wrong_macs_between_them_log_one_alarm():
    """A host that sees the session's token sends 8 wrong MACs between
    each two of the technician's requests (a dice test is hundreds): one
    alarm in the log for the session (and its first refusal), never one
    per request, which would push the technician's entries out of it."""
    link = _Link(KEY)
    tech = _Tech(link)
    forged = b'{"op":"jog","session":"%s","ctr":99,"actuator":"lift","n":1,"ms":100,' \
        b'"mac":"%s"}' % (tech.token.encode(), b"0" * 32)
    for t in range(1, 11):
        for _ in range(8):
            assert _send(link, t, forged)[0] == "auth_failed"
        assert _passed(_send(link, t, _jog_payload(tech)))
    entries = [e[1] for e in _log(link)]
    assert entries == ["opened", "rejected", "alarm"] + ["jog"] * 10, entries
    assert [e[1]["wrong"] for e in link.events] == [8, 16, 32, 64]


# -- expiry across the tick counter's wrap (1 << 30 ms on MicroPython) --------

_WRAP = 1 << 30


def _later(t, ms):
    """The tick ms after t, however far (ticks_add takes less than 2**29)."""
    return (t + ms) % _WRAP


def _server(t0):
    """A real LinkServer (its tick ends what expired) on a clock at t0."""
    from firmware.link.server import LinkServer
    hal = FakeHal()
    hal.store = ""
    hal.now = t0
    return LinkServer(hal, "0.0.0", "test", "test", KEY)


@_cleaned
def test_a_session_expires_right_across_the_wrap():
    t0 = _WRAP - 1000                        # the clock just before the wrap
    link = _Link(KEY)
    tech = _Tech(link, t0)
    assert _passed(_send(link, ticks_add(t0, s.SESSION_MS - 1), _jog_payload(tech)))
    t1 = ticks_add(t0, s.SESSION_MS - 1)
    assert t1 < t0                           # wrapped
    assert _send(link, ticks_add(t1, s.SESSION_MS + 1), _jog_payload(tech))[0] == \
        "session_expired"


@_cleaned
def test_an_unclosed_session_stays_expired_days_later_whatever_the_tick_did():
    for days in (6.3, 6.5, 7, 12.43, 25):
        server = _server(_WRAP - 1000)
        t0 = server.hal.now
        tech = _Tech(server, t0)
        server.poll(ticks_add(t0, 10))                       # the tick: still open
        assert server.session_state == 1
        server.poll(ticks_add(t0, s.SESSION_MS + 10))        # the tick past its idle time
        assert server.session_state == 0
        later = _later(t0, int(days * 86400000))
        assert _send(server, later, _jog_payload(tech))[0] == "session_expired", days
        # Without that tick, a request 6.2 to 12.4 days later still finds it expired.
        server = _server(t0)
        tech = _Tech(server, t0)
        if days < 12.4:
            assert _send(server, later, _jog_payload(tech))[0] == "session_expired", days


@_cleaned
def test_a_challenge_expires_right_across_the_wrap_and_days_later():
    t0 = _WRAP - 1000
    server = _server(t0)
    nonce = session.challenge(server, t0)
    assert _refused(session.authenticate, server, ticks_add(t0, s.NONCE_MS + 1), nonce,
                    _answer(nonce))[1].startswith("challenge expired")
    nonce = session.challenge(server, t0)
    for k in range(1, 4):                    # the tick, every 30 s
        server.poll(ticks_add(t0, k * (s.NONCE_MS + 1)))
    # 2**30 ms later the tick reads the same: the floor refuses it anyway.
    code, msg = _refused(session.authenticate, server, _later(t0, _WRAP), nonce, _answer(nonce))
    assert code == "auth_failed" and "used or expired" in msg
    nonce = session.challenge(server, t0)          # a fresh one, across the wrap
    assert session.authenticate(server, ticks_add(t0, 2000), nonce, _answer(nonce))


@_cleaned
def test_a_lockout_ends_at_its_time_across_the_wrap_and_not_again_days_later():
    t0 = _WRAP - 100
    server = _server(t0)
    nonce = session.challenge(server, t0)
    assert _refused(session.authenticate, server, t0, nonce, "00" * 32)[1] == "wrong key"
    assert "locked" in _refused(session.authenticate, server, ticks_add(t0, 249), nonce,
                                _answer(nonce))[1]
    server.poll(ticks_add(t0, 9000))         # the tick ends the lockout
    assert server.lock_at == -1
    nonce = session.challenge(server, _later(t0, _WRAP + 10))
    assert session.authenticate(server, _later(t0, _WRAP + 20), nonce, _answer(nonce))


# -- a jog's arguments: each checked, none assumed ---------------------------

class _Ctl:
    """A controller that must not be reached: a jog with a wrong argument
    is refused before the table's state is even looked at."""
    def in_hand(self):
        return False

    def still(self):
        raise AssertionError("the table was consulted for a wrong jog")


class _InHand(_Ctl):
    """A controller in the middle of a hand."""
    def in_hand(self):
        return True


class _Stoppable(_Ctl):
    """A controller whose jog service_close stops (none runs)."""
    def __init__(self, in_hand=False):
        self.hand = in_hand
        self.work = None

    def in_hand(self):
        return self.hand


def _session(link):
    return _Tech(link)


def _jog(link, tech, **args):
    """The refusal (code, message) of a jog with these arguments."""
    return _send(link, 10, tech.payload("jog", **args))


@_cleaned
def test_a_jog_names_its_lane_or_lifter_and_its_time_or_is_refused():
    link = _Link(KEY)
    token = _session(link)
    for actuator in ("lane", "lift_up", "lift_down"):
        code, msg = _jog(link, token, actuator=actuator, ms=500)          # no lane or lifter
        assert code == "bad_request" and "needs n" in msg and actuator in msg
        for n in (-1, 4):
            code, msg = _jog(link, token, actuator=actuator, n=n, ms=500)
            assert code == "bad_request" and "0..3" in msg
    for actuator in ("plate", "lane", "lift_up", "lift_down"):
        for ms in (0, -5, 2001):
            code, msg = _jog(link, token, actuator=actuator, n=1, ms=ms)
            assert code == "bad_request" and "1..2000" in msg
    assert _jog(link, token, actuator="lift", n=1, ms=500)[0] == "bad_request"


def test_a_jog_without_its_time_or_actuator_never_reaches_the_service():
    from firmware import frame
    from firmware.link import codec
    for payload in (b'{"op":"jog","actuator":"lane","n":1}',      # no time
                    b'{"op":"jog","n":1,"ms":500}'):               # no actuator
        r = frame.FrameReader()
        r.feed(frame.encode(0x10, 1, payload))
        assert r.ready
        try:
            codec.decode_request(r)
            raise AssertionError("decoded %r" % payload)
        except LinkError as e:
            assert e.code == "bad_request" and "missing" in e.message


@_cleaned
def test_a_refused_jog_is_logged_with_its_details_and_moves_nothing():
    link = _Link(KEY)
    token = _session(link)
    assert _jog(link, token, actuator="lane", ms=500)[0] == "bad_request"
    assert _jog(link, token, actuator="lift_up", n=7, ms=500)[0] == "bad_request"
    assert _jog(link, token, actuator="plate", ms=9000)[0] == "bad_request"
    assert _jog(link, token, actuator="lift", n=2, ms=999999)[0] == "bad_request"
    assert _log(link)[-4:] == [[10, "jog", "lane", None, 500, "bad_request"],
                               [10, "jog", "lift_up", 7, 500, "bad_request"],
                               [10, "jog", "plate", None, 9000, "bad_request"],
                               [10, "jog", "lift", 2, 999999, "bad_request"]]


@_cleaned
def test_a_jog_that_went_and_one_the_table_refused_are_logged_as_such():
    link = _Link(KEY)
    session.note_act(link, 5, "jog", {"actuator": "lift_down", "n": 3, "ms": 1500}, "ok")
    session.note_act(link, 6, "jog", {"actuator": "plate", "ms": 2000}, "refused")
    session.note_act(link, 7, "rfid_scan", {}, "ok")
    session.note_act(link, 8, "rfid_audit", {}, "refused")
    assert _log(link) == [[5, "jog", "lift_down", 3, 1500, "ok"],
                          [6, "jog", "plate", None, 2000, "refused"],
                          [7, "rfid_scan", "ok"], [8, "rfid_audit", "refused"]]


@_cleaned
def test_the_service_log_is_read_in_pages_that_fit_a_frame():
    link = _Link(KEY)
    for t in range(10):
        session.note_act(link, t, "rfid_scan", {}, "ok")
    page = s.answer(link, _Ctl(), 20, "service_log", {"start": 8})
    assert page["entries"] == [[["up", 8], "rfid_scan", "ok"], [["up", 9], "rfid_scan", "ok"]]
    assert page["total"] == 10 and page["counts"] == []
    assert len(s.answer(link, _Ctl(), 20, "service_log", {})["entries"]) == 4
    assert s.answer(link, _Ctl(), 20, "service_log", {"start": 1 << 40})["entries"] == []
    assert _refused(s.answer, link, _Ctl(), 20, "service_log", {"n": 5})[0] == "bad_request"


class _Dealer(_Ctl):
    """A controller between hands whose new game draws seat 2."""
    def __init__(self, hand=False):
        self.hand = hand
        self.games = 0

    def in_hand(self):
        return self.hand

    def new_game(self):
        self.games += 1
        return 2


@_cleaned
def test_a_new_game_needs_a_session_and_never_comes_in_a_hand():
    link = _Link(KEY)
    ctl = _Dealer()
    assert _send(link, 0, b'{"op":"new_game"}', ctl)[0] == "no_session"
    assert ctl.games == 0                          # drawn again by no one's word
    tech = _Tech(link, 5)
    assert _send(link, 10, tech.payload("new_game"), ctl) == {"dealer": 2, "ok": True}
    assert ctl.games == 1 and _log(link)[-1] == [10, "new_game", "ok"]
    assert _send(link, 20, tech.payload("new_game"), _Dealer(hand=True))[0] == "busy"
