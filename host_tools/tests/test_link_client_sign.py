"""The host's signing of a session's requests (host_tools/link/client.py)
against the byte layout of docs/protocol.md, and the controller's check
of what it signs (firmware/link/service.py)."""

import hashlib
import hmac

from hypothesis import given, strategies as st

from host_tools.link.client import REQUEST_MAX, LinkError, ServiceSession, sign_request

SK = bytes(range(32))


def test_the_documented_example():
    assert sign_request(SK, "0123456789abcdef", 1, "jog", {"actuator": "plate", "ms": 500}) == (
        b'{"op":"jog","actuator":"plate","ctr":1,"ms":500,"session":"0123456789abcdef",'
        b'"mac":"64cabda459ec8854eee49c1afd91a945"}')


@given(st.integers(1, (1 << 30) - 1), st.sampled_from(["plate", "lane", "lift_up"]),
       st.integers(1, 2000), st.integers(0, 3))
def test_every_signed_request_ends_in_the_mac_of_what_is_before_it(ctr, actuator, ms, n):
    p = sign_request(SK, "00" * 8, ctr, "jog", {"actuator": actuator, "ms": ms, "n": n})
    head, tail = p[:-42], p[-42:]
    assert tail[:8] == b',"mac":"' and tail[-2:] == b'"}'
    assert tail[8:40] == hmac.new(SK, head, hashlib.sha256).hexdigest()[:32].encode()


def test_a_session_numbers_its_requests_and_a_request_too_long_is_refused_before_sending():
    s = ServiceSession("ab" * 8, SK)
    assert b'"ctr":1,' in s.sign("rfid_scan", {"session": s})
    assert b'"ctr":2,' in s.sign("rfid_scan", {"session": s})
    try:
        s.sign("config_set", {"session": s, "key": "k" * 60, "value": "v" * 60})
    except LinkError as e:
        assert e.code == "too_big" and str(REQUEST_MAX) in e.message
    else:
        raise AssertionError("a request over the controller's bound was signed")
