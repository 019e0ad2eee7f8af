"""Service sessions (firmware/link/session.py, server.py) on both
interpreters: a session, a challenge and a lockout expire at their time
across the tick counter's wrap, and stay expired days later."""

from firmware.hal import ticks_add
from firmware.link import service as s
from firmware.link import session
from firmware.fakes.hal import FakeHal
from firmware.tests.service_helpers import (
    KEY, _Link, _Tech, _answer, _cleaned, _jog_payload, _passed, _refused, _send)


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
