"""Service requests (firmware/link/session.py, service.py) on both
interpreters: every way one is refused (no session, an expired one, a
hand on, a request replayed, reordered or changed), closing a session,
and a new game."""

from firmware.link import service as s
from firmware.link import session
from firmware.tests.service_helpers import (
    KEY, _Ctl, _InHand, _Link, _Stoppable, _Tech, _answer, _cleaned, _counts, _jog_payload,
    _log, _passed, _refused, _send, _sign)


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
