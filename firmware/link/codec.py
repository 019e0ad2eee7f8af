"""The link's messages: one table, one JSON writer, both sides (docs/protocol.md).

Canonical JSON (same bytes on both interpreters) written in place into the
frame buffer, no intermediate string. Guard: every key written must be declared,
and SECRET keys (tile identities) need reveal=True, else LinkError("not_public").
"""

import json
from firmware.link.frame import HEADER, MAX_PAYLOAD, seal

PROTO_VERSION = 1          # bumped by any change of the tables below
REQUEST, RESPONSE, EVENT, ERROR = 0x10, 0x11, 0x12, 0x13

# Field types: int str bool list dict any; "?" may be null, "*" may be absent.
REQUESTS = {               # op: fields besides "op"
    "hello": {"proto": "int"}, "status": {}, "start": {}, "clear": {},
    "faults": {"n": "int*"}, "config_get": {"key": "str*"}, "hand_end": {"winner": "int?*"},
}
RESPONSES = {              # op: fields besides "ok" and "op" (echoed)
    "hello": {"proto": "int", "fw": "str", "build": "str", "table": "str"},
    "status": {"state": "str", "phase": "str", "cycles": "int", "fault": "dict?",
               "uptime": "int", "dealer": "int?", "dice": "list?",
               "tiles_per_side": "list", "lanes": "list", "lifters": "list", "link": "dict*"},
    "start": {"state": "str"}, "clear": {"cleared": "int?"},
    "faults": {"faults": "list", "total": "int"}, "hand_end": {"state": "str"},
    "config_get": {"keys": "list*", "key": "str*", "value": "any*"},
}
EVENTS = {                 # ev: public fields besides "ev" and "t" (ms)
    "state": {"state": "str", "phase": "str*"},
    "fault": {"code": "int", "name": "str", "detail": "dict"},
    "dice": {"a": "int", "b": "int", "dealer": "int"},
    "cleared": {"code": "int", "resume": "str*"},
    "walls": {"tiles_per_side": "list", "next": "bool*"}, "lane": {"lane": "int", "count": "int"},
    "refused": {"seat": "int", "reason": "str"},
}
ERROR_FIELDS = {"error": "str", "message": "str", "op": "str*", "proto": "int*"}
ERRORS = ("bad_json", "bad_kind", "bad_request", "unknown_op", "proto_mismatch",
          "busy", "not_found", "too_big", "internal", "config_invalid")   # on the wire
HOST_ERRORS = ("not_public", "bad_value", "bad_response", "bad_event", "timeout", "closed")
NESTED = ("cmd", "code", "count", "detail", "dropped", "end", "errors", "expected", "got",
          "lane", "ms", "name", "overruns", "reason", "requests", "seat", "sensor", "side",
          "slot", "slots", "state", "t")
SECRET = ("tile", "tiles", "uid")


class LinkError(Exception):
    """code: in ERRORS or HOST_ERRORS; message: for a human; info: more fields."""
    def __init__(self, code, message="", info=None):
        super().__init__("%s: %s" % (code, message))
        self.code, self.message, self.info = code, message, info


def _entry(spec, head, extra):
    """(names: head first, then sorted; {name: (type, nullable, optional)})."""
    t = dict(extra, **spec)
    t = {k: (t[k].rstrip("?*"), "?" in t[k], "*" in t[k]) for k in t}
    return (head,) + tuple(sorted(k for k in t if k != head)), t


_REQ = {k: _entry(REQUESTS[k], "op", {"op": "str"}) for k in REQUESTS}
_RSP = {k: _entry(RESPONSES[k], "ok", {"ok": "bool*", "op": "str"}) for k in RESPONSES}
_EV = {k: _entry(EVENTS[k], "ev", {"ev": "str", "t": "int"}) for k in EVENTS}
_ERR = _entry(ERROR_FIELDS, "ok", {"ok": "bool*"})
_KEYS = (tuple(sorted(NESTED)), tuple(sorted(NESTED + SECRET)))  # [reveal]
_TYPES = {"int": (int,), "str": (str,), "bool": (bool,), "list": (list, tuple), "dict": (dict,), "any": None}
_ESC = {c: ("\\u%04x" % c).encode() for c in range(32)}
_ESC.update({8: b"\\b", 9: b"\\t", 10: b"\\n", 12: b"\\f", 13: b"\\r", 34: b'\\"', 92: b"\\\\"})


def check(obj, entry, code):
    """obj against an entry: each key declared, present unless optional, of
    its type (True is no int); else LinkError(code, why)."""
    (names, types), seen = entry, 0
    for j in range(len(names)):
        k = names[j]
        base, null, opt = types[k]
        if k in obj:
            seen += 1
            v, ok = obj[k], _TYPES[base]
            if not (ok is None or (v is None and null) or type(v) in ok):
                raise LinkError(code, "field %s: must be %s%s" % (k, base, " or null" * null))
        elif not opt:
            raise LinkError(code, "field %s: missing" % k)
    if seen != len(obj):
        k = [k for k in obj if k not in types][0]
        raise LinkError(code, "field %s is not declared" % str(k)[:32])


def _put(buf, i, e):
    for j in range(len(e)):            # no slice assignment: it could grow buf
        buf[i + j] = e[j]
    return i + len(e)


def _str(buf, i, s):
    i = _put(buf, i, b'"')
    for j in range(len(s)):            # by index: no allocation for ASCII
        c = ord(s[j])
        if c in _ESC:
            i = _put(buf, i, _ESC[c])
        elif c < 128:
            buf[i] = c
            i += 1
        elif 0xD800 <= c < 0xE000:     # lone surrogate (MicroPython's json makes them)
            i = _put(buf, i, ("\\u%04x" % c).encode())
        else:
            i = _put(buf, i, s[j].encode("utf-8"))
    return _put(buf, i, b'"')


def _int(buf, i, v):                   # few locals: MicroPython keeps this frame off the heap
    if v < 0:
        buf[i] = 45
        return _int(buf, i + 1, -v)
    if v >= 10:
        i = _int(buf, i, v // 10)
    buf[i] = 48 + v % 10
    return i + 1


def _value(buf, i, v, keys, names=None, types=None, hval=None):
    """v at buf[i:]; keys: allowed keys of nested objects (None: unchecked).
    The top object: `names` in order (names[0] defaults to hval), `types`."""
    t = type(v)
    if v is None or t is bool:
        return _put(buf, i, b"null" if v is None else b"true" if v else b"false")
    if t is int:
        return _int(buf, i, v)
    if t is str:
        return _str(buf, i, v)
    if t is not list and t is not tuple and t is not dict:
        raise LinkError("bad_value", "a %s cannot go on the link" % t.__name__)
    buf[i] = 91 if t is not dict else 123
    start = i
    if t is not dict:
        for j in range(len(v)):
            if i != start:
                buf[i] = 44
            i = _value(buf, i + 1, v[j], keys)
    else:
        names = names or (sorted(v) if keys is None else keys)
        seen = 0
        for j in range(len(names)):
            k = names[j]
            if k in v:
                seen += 1
            elif j or hval is None:
                continue
            if types and k in SECRET and keys is _KEYS[0]:
                raise LinkError("not_public", "field %s is a tile identity" % k)
            if i != start:
                buf[i] = 44
            i = _str(buf, i + 1, k)
            buf[i] = 58
            sub = None if types and types[k][0] == "any" else keys
            i = _value(buf, i + 1, v[k] if k in v else hval, sub)
        if seen != len(v):
            raise LinkError("not_public", "field %s is not declared" % [k for k in v if k not in names][0])
    buf[i + (i == start)] = 93 if t is not dict else 125
    return i + 1 + (i == start)


def _write(buf, kind, seq, obj, entry, hval, reveal):
    try:                                # an undeclared key: "not_public" here
        i = _value(buf, HEADER, obj, _KEYS[1 if reveal else 0], entry[0], entry[1], hval)
    except (IndexError, RuntimeError):  # past the buffer (a cycle ends there too)
        i = len(buf)
    except TypeError:                   # sorting the keys of an "any" object
        raise LinkError("bad_value", "object keys must be strings")
    check(obj, entry, "bad_value")      # then types and missing fields
    if hval is not None and obj.get(entry[0][0], hval) is not hval:
        raise LinkError("bad_value", "field %s must be %r" % (entry[0][0], hval))
    if i - HEADER > MAX_PAYLOAD or i + 2 > len(buf):
        raise LinkError("too_big", "payload over %d bytes" % min(MAX_PAYLOAD, len(buf) - 8))
    return seal(buf, kind, seq, i - HEADER)


def _lookup(table, obj, key, code):
    if type(obj.get(key)) is not str or obj[key] not in table:
        raise LinkError(code, "%s %r is not in the table" % (key, obj.get(key)))
    return table[obj[key]]


def _loads(payload, code):
    try:
        obj = json.loads(str(payload, "utf-8"))
    except Exception as e:             # never a crash, whatever the bytes are
        raise LinkError(code, "payload is not UTF-8 JSON (%s)" % e)
    if type(obj) is not dict:
        raise LinkError("bad_request" if code == "bad_json" else code, "payload is not a JSON object")
    return obj


def decode_request(reader):
    """Controller: (op, args) of the REQUEST frame in a FrameReader, or a
    LinkError; a hello of another protocol version is "proto_mismatch"."""
    if reader.kind != REQUEST:
        raise LinkError("bad_kind", "kind 0x%02x is not a request" % reader.kind)
    obj = _loads(reader.buf[HEADER:HEADER + reader.length], "bad_json")
    op = obj.get("op")
    if type(op) is not str:
        raise LinkError("bad_request", "field op: missing or not a string")
    if op not in _REQ:
        raise LinkError("unknown_op", "no request %r" % op[:32])
    check(obj, _REQ[op], "bad_request")
    del obj["op"]
    if op == "hello" and obj["proto"] != PROTO_VERSION:
        raise LinkError("proto_mismatch", "host speaks protocol %d, controller %d" % (
            obj["proto"], PROTO_VERSION), {"op": op, "proto": PROTO_VERSION})
    return op, obj


def write_response(buf, seq, obj, reveal=False):
    """RESPONSE {"ok": true, "op": .., results} sealed in buf; its length."""
    return _write(buf, RESPONSE, seq, obj, _lookup(_RSP, obj, "op", "bad_value"), True, reveal)


def write_event(buf, seq, obj, reveal=False):
    """EVENT {"ev": .., "t": ms, public fields} sealed in buf; its length."""
    return _write(buf, EVENT, seq, obj, _lookup(_EV, obj, "ev", "bad_value"), None, reveal)


def write_error(buf, seq, obj):
    """ERROR {"ok": false, "error": .., "message": ..} from a dict or LinkError."""
    if isinstance(obj, LinkError):
        obj = dict(obj.info or {}, error=obj.code, message=obj.message)
    return _write(buf, ERROR, seq, obj, _ERR, False, False)


def encode_request(seq, op, **args):
    """Host: one REQUEST frame as bytes; LinkError if op/args are not in the table."""
    buf, args = bytearray(HEADER + MAX_PAYLOAD + 2), dict(args, op=op)
    try:
        n = _write(buf, REQUEST, seq, args, _lookup(_REQ, args, "op", "unknown_op"), None, False)
    except LinkError as e:
        raise LinkError(e.code if e.code in ("too_big", "unknown_op") else "bad_request", e.message)
    return bytes(buf[:n])


def decode(kind, payload, op=None):
    """Host: a RESPONSE (to request `op`) or EVENT payload as a dict checked
    against the table; an ERROR as a LinkError (returned: the caller raises)."""
    code = "bad_event" if kind == EVENT else "bad_response"
    obj = _loads(payload, code)
    if kind == ERROR and obj.get("ok") is False:
        check(obj, _ERR, code)
        return LinkError(obj["error"], obj["message"], obj)
    answer = kind == RESPONSE and obj.get("ok") is True and obj.get("op") == op and op in _RSP
    if kind != EVENT and not answer:
        raise LinkError(code, "not a response to %s: %r" % (op, obj))
    check(obj, _lookup(_EV, obj, "ev", code) if kind == EVENT else _RSP[op], code)
    return obj
