"""Service sessions (firmware/link/service.py) on both interpreters: the
HMAC against RFC 4231's vectors, and every way a session is refused."""

import binascii

from firmware.link import service as s
from firmware.link.codec import LinkError
from firmware.tests.fakehal import FakeHal

KEY = bytes(range(32))


class _Link:
    """What a LinkServer keeps of the service sessions between requests."""
    def __init__(self, key):
        self.hal = FakeHal()
        self.key = key
        self.nonces = []
        self.session = None
        self.session_until = 0
        self.service_log = []


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


def test_the_right_key_opens_a_session_that_allows_and_is_extended_by_use():
    link = _Link(KEY)
    nonce = s.challenge(link, 0)
    token = s.authenticate(link, 10, nonce, _answer(nonce), False)
    assert token and len(token) == 16
    s.check(link, 1000, token, False, "jog")                     # allowed
    s.check(link, 1000 + s.SESSION_MS - 1, token, False, "jog")  # use extends it
    assert [e[1] for e in link.service_log] == ["challenge", "opened"]   # actions note themselves


def test_a_wrong_key_a_replay_and_an_old_challenge_are_refused():
    link = _Link(KEY)
    nonce = s.challenge(link, 0)
    assert _refused(s.authenticate, link, 5, nonce, _answer(nonce, b"\x01" * 32), False) == \
        ("auth_failed", "wrong key")
    # The nonce was used up by the wrong answer: the right one is now a replay.
    code, msg = _refused(s.authenticate, link, 6, nonce, _answer(nonce), False)
    assert code == "auth_failed" and "used" in msg
    nonce = s.challenge(link, 100)
    s.authenticate(link, 200, nonce, _answer(nonce), False)
    code, msg = _refused(s.authenticate, link, 300, nonce, _answer(nonce), False)   # replayed
    assert code == "auth_failed" and "used" in msg
    nonce = s.challenge(link, 1000)
    code, msg = _refused(s.authenticate, link, 1000 + s.NONCE_MS + 1, nonce, _answer(nonce), False)
    assert code == "auth_failed" and "expired" in msg
    assert link.service_log[-1][1].startswith("refused")


def test_no_session_an_expired_one_and_a_hand_are_refused():
    link = _Link(KEY)
    assert _refused(s.check, link, 0, None, False, "jog")[0] == "no_session"
    nonce = s.challenge(link, 0)
    token = s.authenticate(link, 0, nonce, _answer(nonce), False)
    assert _refused(s.check, link, 10, "0" * 16, False, "jog")[0] == "no_session"
    assert _refused(s.check, link, 10, token, True, "jog")[0] == "busy"          # in a hand
    code, _ = _refused(s.check, link, 20 + s.SESSION_MS, token, False, "jog")
    assert code == "session_expired"
    assert _refused(s.check, link, 30 + s.SESSION_MS, token, False, "jog")[0] == "no_session"
    nonce = s.challenge(link, 0)
    assert _refused(s.authenticate, link, 0, nonce, _answer(nonce), True)[0] == "busy"


def test_a_table_without_a_key_refuses_every_session_and_says_why():
    link = _Link(None)
    nonce = s.challenge(link, 0)
    code, msg = _refused(s.authenticate, link, 1, nonce, _answer(nonce), False)
    assert code == "auth_failed" and "no service key" in msg


def test_the_log_and_the_challenges_are_bounded():
    link = _Link(KEY)
    first = s.challenge(link, 0)
    for t in range(1, 40):
        s.challenge(link, t)
    assert len(link.service_log) == 16 and link.service_log[-1] == (39, "challenge")
    assert _refused(s.authenticate, link, 50, first, _answer(first), False)[0] == "auth_failed"


# -- a jog's arguments: each checked, none assumed ---------------------------

class _Ctl:
    """A controller that must not be reached: a jog with a wrong argument
    is refused before the table's state is even looked at."""
    def in_hand(self):
        return False

    def still(self):
        raise AssertionError("the table was consulted for a wrong jog")


def _session(link):
    nonce = s.challenge(link, 0)
    return s.authenticate(link, 0, nonce, _answer(nonce), False)


def _jog(link, token, **args):
    """The refusal (code, message) of a jog with these arguments."""
    args["session"] = token
    return _refused(s.answer, link, _Ctl(), 10, "jog", args)


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
    from firmware.link import codec, frame
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


def _packed(ms, n, actuator, outcome):
    """A jog's entry as the firmware packs it: time | number << 17 |
    actuator << 20 | outcome << 23."""
    return ms | n << 17 | actuator << 20 | outcome << 23


def test_a_refused_jog_is_logged_with_its_details_and_moves_nothing():
    link = _Link(KEY)
    token = _session(link)
    assert _jog(link, token, actuator="lane", ms=500)[0] == "bad_request"
    assert _jog(link, token, actuator="lift_up", n=7, ms=500)[0] == "bad_request"
    assert _jog(link, token, actuator="plate", ms=9000)[0] == "bad_request"
    assert _jog(link, token, actuator="lift", n=2, ms=999999)[0] == "bad_request"
    # 7: no number (or none 0..6), an unknown actuator; 2: bad_request.
    assert link.service_log[-4:] == [(10, _packed(500, 7, 1, 2)), (10, _packed(500, 7, 2, 2)),
                                     (10, _packed(9000, 7, 0, 2)),
                                     (10, _packed(0x1FFFF, 2, 7, 2))]
    assert all(e[1] < 1 << 26 for e in link.service_log[-4:])         # small ints


def test_a_jog_that_went_and_one_the_table_refused_are_logged_as_such():
    link = _Link(KEY)
    s._note_act(link, 5, "jog", {"actuator": "lift_down", "n": 3, "ms": 1500}, "ok")
    s._note_act(link, 6, "jog", {"actuator": "plate", "ms": 2000}, "refused")
    s._note_act(link, 7, "rfid_scan", {}, "ok")
    s._note_act(link, 8, "rfid_audit", {}, "refused")
    assert link.service_log == [(5, _packed(1500, 3, 3, 0)), (6, _packed(2000, 7, 0, 1)),
                                (7, "rfid_scan"), (8, "rfid_audit", "refused")]


def test_the_service_log_is_read_in_pages_that_fit_a_frame():
    link = _Link(KEY)
    for t in range(10):
        s.challenge(link, t)
    page = s.answer(link, _Ctl(), 20, "service_log", {"start": 8})
    assert page["entries"] == [(8, "challenge"), (9, "challenge")] and page["total"] == 10
    assert len(s.answer(link, _Ctl(), 20, "service_log", {})["entries"]) == 4
    assert _refused(s.answer, link, _Ctl(), 20, "service_log", {"n": 5})[0] == "bad_request"
