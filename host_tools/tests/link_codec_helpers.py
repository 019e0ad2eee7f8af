"""What the link's tests share (test_link_codec_*.py, test_link_client_pty.py):
the codec's tables read as {name: {field: type}}, hypothesis strategies that
draw messages from them, and a frame's bytes read and written as the
controller reads and writes them. See docs/protocol.md."""

import json
import os
import sys

from hypothesis import assume, strategies as st

from firmware import frame
from firmware.link import codec
from firmware.link.codec import LinkError
from host_tools.link import codec as link_codec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MICROPYTHON = os.path.join(os.path.dirname(sys.executable), "micropython")
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


# Every int is a small int on a 32-bit MicroPython, as the controller's are
# (times are ticks, below 2**30): a larger one is a heap object there.
RUNTIME = {"bits": 32, "frozen": True, "micropython": "1.28.0", "port": "unix", "chip": None,
           "entropy": "seeded"}
