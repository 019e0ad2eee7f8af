"""Service sessions (firmware/link/service.py) on both interpreters: the
HMAC against RFC 4231's vectors, every way a session is refused, and the
service log (a file: what sessions did; counts: what key-less hosts did)."""

import binascii
import os
from array import array

from firmware.link import service as s
from firmware.link.codec import LinkError
from firmware.tests.fakehal import FakeHal

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
        self.nonces = bytearray(16 * 4)
        self.nonce_at = array("i", bytes(16))
        self.nonce_live = bytearray(4)
        self.nonce_next = 0
        self.service_counts = array("H", bytes(14))
        self.session = None
        self.session_until = 0
        if fresh:
            try:
                os.remove(LOG)
            except OSError:
                pass


def _log(link):
    return s._entries(link)


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


@_cleaned
def test_the_right_key_opens_a_session_that_allows_and_is_extended_by_use():
    link = _Link(KEY)
    nonce = s.challenge(link, 0)
    token = s.authenticate(link, 10, nonce, _answer(nonce))
    assert token and len(token) == 16
    s.check(link, 1000, token, False, "jog")                     # allowed
    s.check(link, 1000 + s.SESSION_MS - 1, token, False, "jog")  # use extends it
    assert _log(link) == [[10, "opened"]] and _counts(link) == {"challenge": 1}


@_cleaned
def test_a_wrong_key_a_replay_and_an_old_challenge_are_refused():
    link = _Link(KEY)
    nonce = s.challenge(link, 0)
    assert _refused(s.authenticate, link, 5, nonce, _answer(nonce, b"\x01" * 32)) == \
        ("auth_failed", "wrong key")
    # The nonce was used up by the wrong answer: the right one is now a replay.
    code, msg = _refused(s.authenticate, link, 6, nonce, _answer(nonce))
    assert code == "auth_failed" and "used" in msg
    nonce = s.challenge(link, 100)
    s.authenticate(link, 200, nonce, _answer(nonce))
    code, msg = _refused(s.authenticate, link, 300, nonce, _answer(nonce))   # replayed
    assert code == "auth_failed" and "used" in msg
    nonce = s.challenge(link, 1000)
    code, msg = _refused(s.authenticate, link, 1000 + s.NONCE_MS + 1, nonce, _answer(nonce))
    assert code == "auth_failed" and "expired" in msg
    assert _counts(link) == {"challenge": 3, "auth_failed": 4}
    assert _log(link) == [[200, "opened"]]                 # refusals are counted, not logged


@_cleaned
def test_no_session_an_expired_one_and_a_hand_are_refused():
    link = _Link(KEY)
    assert _refused(s.check, link, 0, None, False, "jog")[0] == "no_session"
    nonce = s.challenge(link, 0)
    token = s.authenticate(link, 0, nonce, _answer(nonce))
    assert _refused(s.check, link, 10, "0" * 16, False, "jog")[0] == "no_session"
    assert _refused(s.check, link, 10, token, True, "jog")[0] == "busy"          # in a hand
    code, _ = _refused(s.check, link, 20 + s.SESSION_MS, token, False, "jog")
    assert code == "session_expired"
    assert _refused(s.check, link, 30 + s.SESSION_MS, token, False, "jog")[0] == "no_session"
    nonce = s.challenge(link, 0)
    assert _refused(s.answer, link, _InHand(), 0, "service_auth",
                    {"nonce": nonce, "mac": _answer(nonce)})[0] == "busy"


@_cleaned
def test_a_table_without_a_key_refuses_every_session_and_says_why():
    link = _Link(None)
    nonce = s.challenge(link, 0)
    code, msg = _refused(s.authenticate, link, 1, nonce, _answer(nonce))
    assert code == "auth_failed" and "no service key" in msg


@_cleaned
def test_the_challenges_are_bounded_and_a_keyless_flood_leaves_the_log_alone():
    """A host without the key asks for challenges and sessions at will:
    counted, never logged, so the technician's entries stay."""
    link = _Link(KEY)
    _session(link)
    first = s.challenge(link, 0)
    for t in range(1, 40):
        s.challenge(link, t)
        _refused(s.check, link, t, "f" * 16, False, "jog")
    assert _refused(s.authenticate, link, 50, first, _answer(first))[0] == "auth_failed"
    assert _log(link) == [[0, "opened"]]
    assert _counts(link) == {"challenge": 41, "no_session": 39, "auth_failed": 1}


@_cleaned
def test_the_log_keeps_the_last_16_entries_across_a_restart():
    link = _Link(KEY)
    for t in range(20):
        s._note_act(link, t, "rfid_scan", {}, "ok")
    assert [e[0] for e in _log(link)] == list(range(4, 20))
    again = _Link(KEY, fresh=False)         # a restarted link: the file is still there
    assert [e[0] for e in _log(again)] == list(range(4, 20))


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


def _session(link):
    nonce = s.challenge(link, 0)
    return s.authenticate(link, 0, nonce, _answer(nonce))


def _jog(link, token, **args):
    """The refusal (code, message) of a jog with these arguments."""
    args["session"] = token
    return _refused(s.answer, link, _Ctl(), 10, "jog", args)


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
    s._note_act(link, 5, "jog", {"actuator": "lift_down", "n": 3, "ms": 1500}, "ok")
    s._note_act(link, 6, "jog", {"actuator": "plate", "ms": 2000}, "refused")
    s._note_act(link, 7, "rfid_scan", {}, "ok")
    s._note_act(link, 8, "rfid_audit", {}, "refused")
    assert _log(link) == [[5, "jog", "lift_down", 3, 1500, "ok"],
                          [6, "jog", "plate", None, 2000, "refused"],
                          [7, "rfid_scan", "ok"], [8, "rfid_audit", "refused"]]


@_cleaned
def test_the_service_log_is_read_in_pages_that_fit_a_frame():
    link = _Link(KEY)
    for t in range(10):
        s._note_act(link, t, "rfid_scan", {}, "ok")
    page = s.answer(link, _Ctl(), 20, "service_log", {"start": 8})
    assert page["entries"] == [[8, "rfid_scan", "ok"], [9, "rfid_scan", "ok"]]
    assert page["total"] == 10 and page["counts"] == []
    assert len(s.answer(link, _Ctl(), 20, "service_log", {})["entries"]) == 4
    assert s.answer(link, _Ctl(), 20, "service_log", {"start": 1 << 40})["entries"] == []
    assert _refused(s.answer, link, _Ctl(), 20, "service_log", {"n": 5})[0] == "bad_request"
