"""The link's messages (firmware/link/codec.py, host_tools/link/codec.py):
the tables, every message's round trip to canonical bytes, and
docs/protocol.md naming every name of them."""

import os
import re

import pytest
from hypothesis import assume, given, strategies as st

from firmware import frame
from firmware.link import codec
from firmware.link.codec import LinkError
from host_tools.link import codec as link_codec
from host_tools.tests.link_codec_helpers import (
    BUF, ERROR_FIELDS, ERRORS, EVENTS, HOST_ERRORS, NESTED, REQUESTS, RESPONSES, ROOT,
    canonical, errors, events, one_frame, requests, responses, table, write)


def test_tables_are_well_formed():
    """The reader of the tables finds fields by text: every line is a name
    and "field:type" words, sorted and unique, with a known type."""
    kind = re.compile(r"(int|str|bool|list|dict|any)\??\*?$")
    for spec, head in ((link_codec.REQUESTS, "op"), (link_codec.RESPONSES, "ok"), (link_codec.EVENTS, "ev")):
        assert spec.endswith("\n") and "\n\n" not in spec and "  " not in spec
        names = [line.split(" ")[0] for line in spec.splitlines()]
        assert len(set(names)) == len(names) and all(re.fullmatch("[a-z_]+", n) for n in names)
        for name, entry in table(spec).items():
            words = spec.splitlines()[names.index(name)].split(" ")[1:]
            assert [w.split(":")[0] for w in words] == sorted(entry) and head not in entry
            assert all(re.fullmatch("[a-z_]+", f) and kind.match(t) for f, t in entry.items())
    assert set(REQUESTS) == set(RESPONSES)
    assert all(f["op"] == "str" for f in RESPONSES.values())        # echoed
    assert all(f["t"] == "int" for f in EVENTS.values())
    assert list(ERROR_FIELDS) == sorted(ERROR_FIELDS) and "ok" not in ERROR_FIELDS
    assert all(kind.match(t) for t in ERROR_FIELDS.values())
    assert NESTED == sorted(set(NESTED)) and " ".join(NESTED) == link_codec.NESTED
    assert type(link_codec.SECRET) is tuple and not set(link_codec.SECRET) & set(NESTED)
    assert not set(ERRORS) & set(HOST_ERRORS)


def test_a_key_must_match_a_whole_name_of_the_table():
    """Keys that are parts, runs or types of the table's text are undeclared."""
    base = {"ev": "jogged", "name": "lane", "ms": 5, "end": "time", "t": 1, "lane": 0, "count": 3}
    for key in ("", "coun", "ount", "count:int", "int", "lane count", "t:int\nrefused", "lane:int"):
        with pytest.raises(LinkError) as e:
            codec.write_event(bytearray(BUF), 0, dict(base, **{key: 1}))
        assert e.value.code == "not_public", key
    for ev in ("", "lan", "lane count:int", "lane\nrefused", "t"):
        with pytest.raises(LinkError) as e:
            codec.write_event(bytearray(BUF), 0, dict(base, ev=ev))
        assert e.value.code == "bad_value", ev
    with pytest.raises(LinkError) as e:
        codec.write_event(bytearray(BUF), 0, {"ev": "fault", "t": 1, "code": 1, "name": "x",
                                             "detail": {"lan": 1}})
    assert e.value.code == "not_public"


@given(requests(), st.integers(0, 255))
def test_request_round_trip(req, seq):
    op, args = req
    ascii_ = canonical(dict(args, op=op), "op", op).isascii()
    try:
        data = link_codec.encode_request(seq, op, **args)
    except LinkError as e:
        assume(e.code != "too_big")
        if not ascii_:             # requests are ASCII (docs/protocol.md)
            assert e.code == "bad_request" and "ASCII" in e.message
            return
        raise
    assert ascii_
    r = one_frame(data)
    assert (r.kind, r.seq) == (link_codec.REQUEST, seq)
    assert r.payload() == canonical(dict(args, op=op), "op", op)
    assert codec.decode_request(r) == (op, args)


@given(responses())
def test_response_round_trip(obj):
    # A field named for tiles (rfid_audit's) goes out only when revealed;
    # test_link_codec_guard.py's test_guard_refuses_undeclared_and_secret_fields
    # shows it refused otherwise.
    data = write(codec.write_response, obj, reveal=any(k in link_codec.SECRET for k in obj))
    r = one_frame(data)
    assert (r.kind, r.seq) == (link_codec.RESPONSE, 7)
    assert r.payload() == canonical(obj, "ok", True)
    assert link_codec.decode(r.kind, r.payload(), obj["op"]) == dict(obj, ok=True)


@given(events(), st.integers(0, 255))
def test_event_round_trip(obj, seq):
    data = write(codec.write_event, obj, seq)
    r = one_frame(data)
    assert (r.kind, r.seq) == (link_codec.EVENT, seq)
    assert r.payload() == canonical(obj, "ev", obj["ev"])
    assert link_codec.decode(r.kind, r.payload()) == obj


@given(errors())
def test_error_round_trip(obj):
    data = write(codec.write_error, obj)
    r = one_frame(data)
    assert r.kind == link_codec.ERROR and r.payload() == canonical(obj, "ok", False)
    err = link_codec.decode(r.kind, r.payload(), "status")
    assert isinstance(err, LinkError)
    assert (err.code, err.message, err.info) == (obj["error"], obj["message"], dict(obj, ok=False))


def test_writer_escapes_like_json_and_never_grows_the_buffer():
    text = "".join(map(chr, range(0x30))) + '\\"\x7f\xe9\u2028\U0001F600'
    obj = {"ev": "state", "t": -5, "state": text}
    assert write(codec.write_event, obj)[6:-2] == canonical(obj, "ev", "state")
    small = bytearray(30)
    with pytest.raises(LinkError) as e:
        codec.write_event(small, 0, {"ev": "state", "t": 0, "state": "x" * 40})
    assert e.value.code == "too_big" and len(small) == 30


def test_too_big_answer_and_the_error_that_replaces_it():
    buf = bytearray(BUF)
    big = {"op": "faults", "total": 200, "faults": [{"code": 10, "name": "lane_jam", "t": k,
                                                     "detail": {"lane": k % 4}} for k in range(20)]}
    with pytest.raises(LinkError) as e:
        codec.write_response(buf, 3, big)
    assert e.value.code == "too_big"
    n = codec.write_error(buf, 3, e.value)
    err = link_codec.decode(link_codec.ERROR, bytes(buf[frame.HEADER:n - 2]), "faults")
    assert err.code == "too_big" and "512" in err.message


def test_proto_mismatch_names_both_versions():
    r = one_frame(link_codec.encode_request(1, "hello", proto=codec.PROTO_VERSION + 1))
    with pytest.raises(LinkError) as e:
        codec.decode_request(r)
    assert e.value.code == "proto_mismatch"
    assert "protocol %d, controller %d" % (codec.PROTO_VERSION + 1, codec.PROTO_VERSION) in e.value.message
    assert e.value.info["proto"] == codec.PROTO_VERSION


def test_protocol_doc_lists_every_message_field_and_code():
    doc = open(os.path.join(ROOT, "docs", "protocol.md"), encoding="utf-8").read()
    words = set(re.findall(r"`([a-z_]+)`", doc))
    names = set(REQUESTS) | set(EVENTS) | set(ERRORS) | set(HOST_ERRORS)
    for entries in (REQUESTS, RESPONSES, EVENTS):
        for spec in entries.values():
            names |= set(spec)
    names |= set(NESTED) | set(link_codec.SECRET) | set(ERROR_FIELDS)
    assert names - words == set()
    assert "PROTO_VERSION = %d" % codec.PROTO_VERSION in doc
