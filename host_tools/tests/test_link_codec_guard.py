"""The link's guard: nothing undeclared and no tile's identity leaves the
controller (firmware/link/codec.py), and the host checks what it is sent
(host_tools/link/codec.py). See docs/protocol.md."""

import pytest
from hypothesis import assume, given, strategies as st

from firmware import frame
from firmware.link import codec
from firmware.link.codec import LinkError
from host_tools.link import codec as link_codec
from host_tools.tests.link_codec_helpers import BUF, SCALARS, events, write


@pytest.mark.parametrize("obj,reveal", [
    ({"ev": "jogged", "name": "lane", "ms": 5, "end": "time", "t": 1, "lane": 0, "count": 3, "tile": "5b"}, False),
    ({"ev": "jogged", "name": "lane", "ms": 5, "end": "time", "t": 1, "lane": 0, "count": 3, "wall": [1, 2]}, False),
    ({"ev": "jogged", "name": "lane", "ms": 5, "end": "time", "t": 1, "lane": 0, "count": 3, "tile": "5b"}, True),   # undeclared anyway
    ({"ev": "fault", "t": 1, "code": 10, "name": "lane_jam", "detail": {"tile": "5b"}}, False),
    ({"ev": "fault", "t": 1, "code": 10, "name": "lane_jam", "detail": {"hand": ["1m"]}}, True),
    ({"ev": "fault", "t": 1, "code": 10, "name": "x", "detail": {"got": [{"uid": "4d4a0101"}]}}, False),
    ({"ev": "walls", "t": 1, "tiles_per_side": [{"tiles": ["1m", "2m"]}]}, False),
])
def test_guard_refuses_undeclared_and_secret_fields(obj, reveal):
    buf = bytearray(BUF)
    with pytest.raises(LinkError) as e:
        codec.write_event(buf, 0, obj, reveal=reveal)
    assert e.value.code == "not_public"
    assert buf[:frame.HEADER] == bytes(frame.HEADER)          # nothing was sealed


@given(events(), st.sampled_from(link_codec.SECRET + ("hand", "wall_tiles")), SCALARS)
def test_guard_refuses_any_extra_event_field(obj, key, value):
    assume(key not in obj)
    with pytest.raises(LinkError) as e:
        codec.write_event(bytearray(BUF), 0, dict(obj, **{key: value}))
    assert e.value.code == "not_public"


def test_an_rfid_audit_answer_names_tiles_only_when_revealed():
    obj = {"op": "rfid_audit", "tags": 144, "unknown": 0, "kinds": 1, "tiles": [["5b", 3, 4]]}
    with pytest.raises(LinkError) as e:
        codec.write_response(bytearray(BUF), 0, obj)
    assert e.value.code == "not_public"
    assert codec.write_response(bytearray(BUF), 0, obj, reveal=True)


def test_reveal_lets_an_audit_fault_name_its_tile():
    obj = {"ev": "fault", "t": 9, "code": 20, "name": "missing_tile", "detail": {"tile": "1z"}}
    data = write(codec.write_event, obj, reveal=True)
    assert link_codec.decode(link_codec.EVENT, data[6:-2]) == obj


def test_responses_and_requests_are_checked_too():
    buf = bytearray(BUF)
    for obj, code in [({"op": "status"}, "bad_value"),                   # fields missing
                      ({"op": "start", "state": "x", "hand": 1}, "not_public"),
                      ({"op": "start", "state": 5}, "bad_value"),
                      ({"op": "start", "state": "x", "ok": False}, "bad_value"),
                      ({"op": "reboot"}, "bad_value"),
                      ({"op": "start", "state": 1.5}, "bad_value")]:
        with pytest.raises(LinkError) as e:
            codec.write_response(buf, 0, obj)
        assert e.value.code == code, obj
    for op, args, code in [("reboot", {}, "unknown_op"), ("hello", {}, "bad_request"),
                           ("hello", {"proto": "1"}, "bad_request"),
                           ("status", {"x": 1}, "bad_request")]:
        with pytest.raises(LinkError) as e:
            link_codec.encode_request(0, op, **args)
        assert e.value.code == code


def test_host_checks_answers_and_events():
    ev = write(codec.write_event, {"ev": "jogged", "name": "lane", "ms": 5, "end": "time", "t": 1, "lane": 2, "count": 9})[6:-2]
    for kind, payload, op in [(link_codec.EVENT, b'{"ev":"jogged","t":1,"lane":2}', None),
                              (link_codec.EVENT, b'{"ev":"gold","t":1,"tile":"5b"}', None),
                              (link_codec.EVENT, b"\xff", None),
                              (link_codec.RESPONSE, b'{"ok":true,"op":"start"}', "start"),
                              (link_codec.RESPONSE, b'{"ok":true,"op":"start","state":"x"}', "status"),
                              (link_codec.RESPONSE, ev, "status"),
                              (link_codec.ERROR, b'{"ok":false,"error":"busy"}', "start")]:
        with pytest.raises(LinkError) as e:
            link_codec.decode(kind, payload, op)
        assert e.value.code in ("bad_event", "bad_response")
