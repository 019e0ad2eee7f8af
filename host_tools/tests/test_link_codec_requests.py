"""Requests on the link: every malformed one is refused by the controller
with a clear LinkError (codec.decode_request), and the host sends none the
controller would refuse for its bytes. See docs/protocol.md."""

import json

import pytest
from hypothesis import assume, given, strategies as st

from firmware import frame
from firmware.link import codec
from firmware.link.codec import LinkError
from host_tools.link import codec as link_codec
from host_tools.tests.link_codec_helpers import ANY, BUF, ERRORS, REQUESTS, SCALARS, one_frame


def request_error(payload, kind=link_codec.REQUEST):
    r = one_frame(frame.encode(kind, 1, payload))
    with pytest.raises(LinkError) as e:
        codec.decode_request(r)
    buf = bytearray(BUF)
    codec.write_error(buf, 1, e.value)          # the answer to it always fits
    return e.value


@pytest.mark.parametrize("payload,code,words", [
    (b"", "bad_json", "JSON"),
    (b'{"op":"status"', "bad_json", "JSON"),
    (b'{"op":"st\xffatus"}', "bad_request", "ASCII"),
    (b"[1,2]", "bad_request", "not a JSON object"),
    (b'"status"', "bad_request", "not a JSON object"),
    (b"42", "bad_request", "not a JSON object"),
    (b"{}", "bad_request", "field op"),
    (b'{"op":7}', "bad_request", "field op"),
    (b'{"op":"reboot"}', "unknown_op", "'reboot'"),
    (b'{"op":"hello"}', "bad_request", "field proto: missing"),
    (b'{"op":"hello","proto":"1"}', "bad_request", "field proto: must be int"),
    (b'{"op":"hello","proto":true}', "bad_request", "field proto: must be int"),
    (b'{"op":"hello","proto":1.0}', "bad_request", "field proto: must be int"),
    (b'{"op":"hello","proto":null}', "bad_request", "field proto: must be int"),
    (b'{"op":"faults","n":[3]}', "bad_request", "field n: must be int"),
    (b'{"op":"status","verbose":1}', "bad_request", "field verbose is not declared"),
])
def test_decode_request_errors(payload, code, words):
    e = request_error(payload)
    assert e.code == code and words in e.message, e


def test_decode_request_refuses_other_kinds():
    for kind in (link_codec.RESPONSE, link_codec.EVENT, link_codec.ERROR, 0x02, 0x81):
        assert request_error(b'{"op":"status"}', kind).code == "bad_kind"


@given(st.binary(max_size=80) | st.builds(lambda v: json.dumps(v).encode(), ANY)
       | st.builds(lambda d: json.dumps(d).encode(), st.dictionaries(
           st.sampled_from(["op", "proto", "n", "key", "x"]),
           st.one_of(SCALARS, st.sampled_from(sorted(REQUESTS))), max_size=3)))
def test_decode_request_never_crashes(payload):
    assume(len(payload) <= frame.MAX_PAYLOAD)
    r = one_frame(frame.encode(link_codec.REQUEST, 9, payload))
    try:
        op, args = codec.decode_request(r)
    except LinkError as e:
        assert e.code in ERRORS and e.message
        codec.write_error(bytearray(BUF), 9, e)
    else:
        assert op in REQUESTS and link_codec.encode_request(9, op, **args)


def test_the_host_refuses_to_send_a_request_that_is_not_ascii():
    """The controller would refuse it (docs/protocol.md, requests are ASCII)."""
    with pytest.raises(LinkError) as e:
        link_codec.encode_request(1, "config_get", key="timings.\u00e9")
    assert e.value.code == "bad_request" and "ASCII" in e.value.message
    assert link_codec.encode_request(1, "config_get", key="timings.tick_ms")
