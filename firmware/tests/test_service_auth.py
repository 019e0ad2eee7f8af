"""Service sessions (firmware/link/session.py, service.py) on both
interpreters: the HMAC against RFC 4231's vectors, a session opened with
the right key, the lockout and the alarm after wrong answers and MACs,
and a key-less host's flood counted, never logged."""

from firmware.link import service as s
from firmware.link import session
from firmware.tests.service_helpers import (
    KEY, _Link, _Tech, _answer, _cleaned, _counts, _hex, _jog_payload, _log, _passed,
    _refused, _send, _session, hmac_sha256)


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
