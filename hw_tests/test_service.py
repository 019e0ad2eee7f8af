"""Authenticated service on the link: a session opened by
HMAC-SHA256 challenge-response with the table's key allows a jog, bounded
and only when the table is idle or stopped; without a session, with a
wrong key, with a replayed answer or during a hand it is refused, and the
device logs every session."""

import hashlib
import hmac

import pytest

from host_tools.link.client import LinkError, service_entry


def _mac(key, nonce):
    return hmac.new(key, bytes.fromhex(nonce) + b"service", hashlib.sha256).hexdigest()


def _refusal(target, op, **args):
    with pytest.raises(LinkError) as e:
        target.request(op, **args)
    return e.value.code, e.value.message


def _plate(target, since):
    return [(t, v) for t, what, v in target.output_changes(since=since) if what == "plate_motor"]


@pytest.mark.needs_sim
def test_a_session_with_the_right_key_jogs_the_plate_for_its_time_only(target):
    key = target.sim.key
    session = target.link.open_service(key)
    t0 = target.status()["uptime"]
    assert target.request("jog", session=session, actuator="plate", ms=400)["state"] == "jogging"
    assert target.request("sensors")["motors"][0] == 1          # the plate's motor, running
    target.wait_virtual(t0 + 1500)
    assert target.request("sensors")["motors"] == [0, 0, 0, 0, 0]
    runs = _plate(target, t0)
    assert len(runs) == 2 and runs[0][1] > 0 and runs[1][1] == 0, runs
    assert 400 <= runs[1][0] - runs[0][0] <= 400 + 20, runs     # the deadline, within a tick
    # A lane too; a jog longer than the bound is refused.
    assert target.request("jog", session=session, actuator="lane", n=2, ms=100)["ok"]
    code, msg = _refusal(target, "jog", session=session, actuator="plate", ms=5000)
    assert code == "bad_request" and "2000" in msg
    # A lane or lifter not named is refused, never taken as 0.
    code, msg = _refusal(target, "jog", session=session, actuator="lift_up", ms=500)
    assert code == "bad_request" and "needs n" in msg
    assert target.request("sensors")["moving"] == ["bottom"] * 4
    counts = {}
    log = [service_entry(e) for e in target.link.service_log(counts=counts)]
    assert [e["what"] for e in log] == ["opened", "jog", "jog", "jog", "jog"], log
    assert counts == {"challenge": 1}                 # asked without the key: counted
    assert [(e["actuator"], e["n"], e["ms"], e["outcome"]) for e in log[1:]] == [
        ("plate", None, 400, "ok"), ("lane", 2, 100, "ok"), ("plate", None, 5000, "bad_request"),
        ("lift_up", None, 500, "bad_request")], log
    assert target.request("service_close", session=session)["closed"] is True
    code, _ = _refusal(target, "jog", session=session, actuator="plate", ms=100)
    assert code == "no_session"


@pytest.mark.needs_sim
def test_no_session_a_wrong_key_and_a_replayed_answer_are_refused(target):
    code, msg = _refusal(target, "jog", actuator="plate", ms=100)
    assert code == "no_session" and "service_open" in msg
    nonce = target.request("service_open")["nonce"]
    code, msg = _refusal(target, "service_auth", nonce=nonce, mac=_mac(b"\x00" * 32, nonce))
    assert (code, msg) == ("auth_failed", "wrong key")
    code, msg = _refusal(target, "service_auth", nonce=nonce, mac=_mac(target.sim.key, nonce))
    assert code == "auth_failed" and "locked" in msg     # a wrong key shuts logins a while
    target.wait_virtual(target.status()["uptime"] + 300)
    nonce = target.request("service_open")["nonce"]
    mac = _mac(target.sim.key, nonce)
    assert target.request("service_auth", nonce=nonce, mac=mac)["session"]
    code, msg = _refusal(target, "service_auth", nonce=nonce, mac=mac)       # replayed
    assert code == "auth_failed" and "used" in msg
    t0 = target.status()["uptime"]
    target.wait_virtual(t0 + 500)
    assert _plate(target, 0) == []                          # nothing ever moved
    counts = {}
    log = [e[1] for e in target.link.service_log(counts=counts)]
    assert log == ["opened"]                       # what the session did, only
    assert counts == {"no_session": 1, "challenge": 2, "auth_failed": 2, "locked": 1}, counts


@pytest.mark.needs_sim
def test_a_jog_is_refused_while_the_table_builds_and_the_session_in_a_hand(target):
    session = target.link.open_service(target.sim.key)
    target.start()
    target.wait_state("building")
    code, msg = _refusal(target, "jog", session=session, actuator="plate", ms=100)
    assert code == "refused" and "building" in msg
    target.wait_event(lambda e: e["ev"] == "state" and e["state"] == "in_hand", "in_hand")
    code, msg = _refusal(target, "jog", session=session, actuator="plate", ms=100)
    assert code == "busy" and "hand" in msg
    nonce = target.request("service_open")["nonce"]
    code, _ = _refusal(target, "service_auth", nonce=nonce, mac=_mac(target.sim.key, nonce))
    assert code == "busy"


@pytest.mark.needs_table
def test_sensors_counters_and_the_dice_test_tell_what_the_table_did(target):
    s = target.request("sensors")
    assert s["lifters"] == [[0, 1]] * 4 and s["keys"] == [0, 0, 0, 0]   # down, nobody pressing
    assert s["plate"][1] == 0 and all(count == 0 for _, count in s["lanes"])
    c = target.request("counters")
    assert (c["cycles"], c["hands"], c["lifts"], c["faults"]) == (0, 0, 0, [])
    session = target.link.open_service(target.sim.key) if target.sim else None
    d = target.request("dice_test", session=session, n=300)["counts"]
    assert len(d) == 6 and sum(d) == 600 and min(d) > 0
    cycle = target.run_cycle()
    assert cycle.ok, cycle.events
    c = target.request("counters")
    assert (c["cycles"], c["lifts"]) == (1, 1) and c["tiles_fed"] == [36, 36, 36, 36]
    s = target.request("sensors")
    assert all(not (top and bottom) for top, bottom in s["lifters"])      # never both
    assert s["plate"][1] > 0 and [count for _, count in s["lanes"]] == [36] * 4
    code, msg = _refusal(target, "dice_test", session=session, n=10)   # never in a hand
    assert code == "busy" and "hand" in msg


@pytest.mark.needs_sim
def test_a_lifter_jog_stops_at_its_switch_or_at_its_time(target):
    session = target.link.open_service(target.sim.key)
    code, msg = _refusal(target, "jog", session=session, actuator="lift_down", n=1, ms=500)
    assert code == "refused" and "already" in msg                 # it is down
    t0 = target.status()["uptime"]
    target.request("jog", session=session, actuator="lift_up", n=1, ms=2000)
    target.wait_virtual(t0 + 3000)
    up = [(t, v) for t, what, v in target.output_changes(since=t0) if what == "lift_up:1"]
    # The model's lifter takes about 2.5 s to the top: the jog's 2 s end it
    # half way, and the switches say so.
    assert up[0][1] == 1 and up[-1][1] == 0 and 1990 <= up[-1][0] - up[0][0] <= 2020, up
    s = target.request("sensors")
    assert s["lifters"][1] == [0, 0] and s["moving"][1] == "unknown", s
    assert target.status()["fault"] is None                       # no lift_stuck after it
    t1 = target.status()["uptime"]
    target.request("jog", session=session, actuator="lift_down", n=1, ms=2000)
    target.wait_virtual(t1 + 2500)
    s = target.request("sensors")
    assert s["lifters"][1] == [0, 1] and s["moving"][1] == "bottom", s   # stopped at the switch
    assert target.status()["fault"] is None


@pytest.mark.needs_sim
def test_a_captured_service_request_sent_again_or_changed_moves_nothing(target):
    """What the wire shows of a session is not enough: its jog sent again
    (a new seq, or the same after the retry window), changed, or a close
    without the session's key, is refused on the twin."""
    session = target.link.open_service(target.sim.key)
    captured = session.sign("jog", {"session": session, "actuator": "plate", "ms": 100})
    assert target.link.request_raw(captured, op="jog")["state"] == "jogging"
    t0 = target.status()["uptime"]
    target.wait_virtual(t0 + 6000)                           # past the retry window
    for payload in (captured, captured.replace(b'"ms":100', b'"ms":900')):
        with pytest.raises(LinkError) as e:
            target.link.request_raw(payload, op="jog")
        assert e.value.code == "auth_failed", payload
    code, _ = _refusal(target, "service_close", session=str(session))   # the token alone
    assert code == "auth_failed"
    assert _plate(target, t0 + 200) == []                    # nothing moved again
    assert target.link.close_service(session) is True
    log = [e[1] for e in target.link.service_log()]
    assert log.count("rejected") == 1 and log[-1] == "closed: by the host", log


@pytest.mark.needs_sim
def test_wrong_macs_between_the_technicians_requests_push_none_of_them_out_of_the_log(target):
    """A host without the key that sees the session's token sends 8 wrong
    MACs between each two of a dice test's requests, and sends a jog the
    hand refused again after the hand: the log keeps the technician's
    entries, with one alarm, and nothing moves for the jog."""
    session = target.link.open_service(target.sim.key)
    forged = b'{"ctr":99,"n":1,"op":"dice_test","session":"%s","mac":"%s"}' % (
        str(session).encode(), b"0" * 32)
    assert target.request("jog", session=session, actuator="plate", ms=100)["ok"]
    for _ in range(20):
        for _ in range(8):
            with pytest.raises(LinkError) as e:
                target.link.request_raw(forged, op="dice_test")
            assert e.value.code == "auth_failed"
        assert target.request("dice_test", session=session, n=1)["counts"]
    log = target.link.service_log()
    assert [e[1] for e in log] == ["opened", "jog", "rejected", "alarm", "dice_test"], log
    assert log[-1][2:] == [20, "ok"], log          # the dice test's 20 requests: one entry
    target.start()
    target.wait_state("in_hand")
    captured = session.sign("jog", {"session": session, "actuator": "plate", "ms": 2000})
    code, _ = _refusal_raw(target, captured)
    assert code == "busy"
    target.request("hand_end", winner=0)
    target.wait_state("building")
    target.in_table(lambda: target.table.inject("lane_jam:2"))
    target.wait_event(lambda e: e["ev"] == "fault", "the lane_jam")
    t0 = target.status()["uptime"]
    code, msg = _refusal_raw(target, captured)          # the table still: sent again
    assert code == "auth_failed" and "replayed" in msg, msg
    target.wait_virtual(t0 + 500)
    assert _plate(target, t0) == []


def _refusal_raw(target, payload):
    with pytest.raises(LinkError) as e:
        target.link.request_raw(payload)
    return e.value.code, e.value.message


def _signed_with(session, ctr_text, args_text):
    """A dice_test of `session` signed right, with `ctr` written as
    `ctr_text` (the raw JSON value) and the other arguments `args_text`."""
    head = (b'{"op":"dice_test",%s"ctr":%s,"session":"%s"'
            % (args_text, ctr_text, str(session).encode()))
    mac = hmac.new(session.key, head, hashlib.sha256).digest()[:16].hex().encode()
    return head + b',"mac":"' + mac + b'"}'


@pytest.mark.needs_sim
def test_malformed_signed_requests_are_refused_and_the_session_lives(target):
    """Signed requests bent at the bytes the signature rests on: a tail one
    byte short, a mac not in hex, not last, a space in or after the tail,
    a second ctr, a ctr that is not a positive int under 2**30. Each is
    refused and runs nothing; the session goes on, and its log gets one
    `rejected` entry (the rest are counted). The mac in upper case is the
    same request written otherwise: taken once."""
    s = target.link.open_service(target.sim.key)
    good = s.sign("dice_test", {"n": 1})
    head, mac = good[:good.rindex(b',"mac":')], good[-34:-2]
    tok = str(s).encode()
    bent = {
        "tail one byte short": b'{"op":"dice_test","n":1,"session":"%s","ctr":5,"mac":"' % tok
                               + b"0" * 31 + b'"}',
        "no mac": b'{"op":"dice_test","n":1,"session":"%s"}' % tok,
        "mac not hex": head + b',"mac":"' + b"zz" * 16 + b'"}',
        "mac not last": head + b',"mac":"' + mac + b'","x":1}',
        "a second ctr": head + b',"ctr":999,"mac":"' + mac + b'"}',
        "a space in the tail": head + b', "mac":"' + mac + b'"}',
        "a space after it": head + b',"mac":"' + mac + b'"} ',
        "ctr a bool": _signed_with(s, b"true", b'"n":1,'),
        "ctr a float": _signed_with(s, b"7.0", b'"n":1,'),
        "ctr a str": _signed_with(s, b'"8"', b'"n":1,'),
        "ctr negative": _signed_with(s, b"-5", b'"n":1,'),
        "ctr zero": _signed_with(s, b"0", b'"n":1,'),
        "ctr past 2**30": _signed_with(s, b"%d" % (1 << 40), b'"n":1,'),
    }
    for what, payload in bent.items():
        with pytest.raises(LinkError) as e:
            target.link.request_raw(payload, op="dice_test")
        assert e.value.code in ("auth_failed", "bad_request", "bad_json"), (what, e.value)
    upper = head + b',"mac":"' + mac.upper() + b'"}'
    assert target.link.request_raw(upper, op="dice_test")["counts"]
    with pytest.raises(LinkError) as e:
        target.link.request_raw(upper, op="dice_test")      # its ctr is used up
    assert e.value.code == "auth_failed" and "not above" in e.value.message
    assert target.request("dice_test", session=s, n=1)["counts"]        # the session lives
    log = [e[1] for e in target.link.service_log()]
    assert log.count("rejected") == 1 and log[0] == "opened", log
