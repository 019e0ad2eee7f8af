"""The link's messages, read and written by the protocol's tables
(link/protocol.py): one JSON writer, both sides (docs/protocol.md).

Canonical JSON (same bytes on both interpreters) written in place into the
frame buffer, no intermediate string. Guard: every key written must be declared,
and SECRET keys (tile identities) need reveal=True, else LinkError("not_public").

The tables are read in place with find/startswith. Writing a message
makes no object and interns no name: keys are put in order by selection,
not sorted into a list; a str's and an int's bytes are written by
link/json_bytes.py, never a character at a time; and no function here
holds a comprehension or a closure (its captured locals would be heap
cells at every call). What it allocates is the frames of its larger
functions, freed at their return, once per list or dict, not per key and
value (_item).
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython
    def const(x):
        return x

import json

from firmware import frame
from firmware.link import json_bytes
from firmware.link.protocol import (ERROR, ERROR_FIELDS, ERRORS, EVENT, EVENTS, HOMES, HOST_ERRORS,
                                    NESTED, PROTO_VERSION, REQUEST, REQUESTS, RESPONSE,
                                    SECRET_KEYS, WHO)


class LinkError(Exception):
    """code: in ERRORS or HOST_ERRORS (host_tools/link/codec.py); message: for a human; info: more fields."""
    def __init__(self, code, message="", info=None):
        super().__init__("%s: %s" % (code, message))
        self.code, self.message, self.info = code, message, info


def find(spec, k, lo, e, sep):
    """Where the name k ends in spec[lo:e] (the index of the space, colon
    or newline after it), k standing whole: at lo or after sep, and before
    a space, colon, newline or e; -1 if it is not there (or not a str)."""
    if type(k) is not str or not k or " " in k or ":" in k or "\n" in k:
        return -1
    # No local for len(k): with one more, this function's frame would go
    # on the heap at every call (_item), and it is called for every key
    # of every message.
    q = spec.find(k, lo, e)
    while q >= 0:
        # startswith, not spec[q - 1]: MicroPython interns a character read
        # out of a str, for good (_utf8)
        if q == lo or spec.startswith(sep, q - 1):
            q += len(k)                # where the name ends
            if q == e or spec.startswith(" ", q) or spec.startswith(":", q) \
                    or spec.startswith("\n", q):
                return q
            q -= len(k)
        q = spec.find(k, q + 1, e)
    return -1


def route(op):
    """Who may send the request `op` and where its handler is, as its line
    of REQUESTS says: (a word of WHO, a word of HOMES); (None, None) for
    an op that is not in the table."""
    p = find(REQUESTS, op, 0, len(REQUESTS), "\n") + 1
    who = home = None
    if p:
        for w in WHO:
            if REQUESTS.startswith(w, p) and REQUESTS.startswith(" ", p + len(w)):
                who = w
        p = REQUESTS.find(" ", p) + 1
        for w in HOMES:
            if REQUESTS.startswith(w, p) and REQUESTS.startswith(" ", p + len(w)):
                home = w
    return who, home


def _fits(v, spec, q):
    """v against the type at spec[q:] ("int", "list?*", ...): 0 if it does
    not fit, else 1 (a required field) or 2 (optional: "*")."""
    t, n = type(v), 3
    if spec.startswith("int", q):
        ok = t is int                  # True is a bool, no int
    elif spec.startswith("str", q):
        ok = t is str
    elif spec.startswith("any", q):
        ok = True
    else:
        n = 4
        if spec.startswith("bool", q):
            ok = t is bool
        elif spec.startswith("dict", q):
            ok = t is dict
        else:
            ok = t is list or t is tuple
    if spec.startswith("?", q + n):
        ok = ok or v is None
        n += 1
    return 0 if not ok else 2 if spec.startswith("*", q + n) else 1


def check(obj, spec, lo, e, head, code):
    """obj (a message) against the fields declared in spec[lo:e]: each key
    but the head declared, of its type, present unless optional; else
    LinkError(code, why): the least undeclared key, else the first field
    (in table order) missing or ill-typed."""
    req, bad, ill = 0, None, False
    for k in obj:
        if k != head:
            q = find(spec, k, lo, e, " ")
            f = _fits(obj[k], spec, q + 1) if q >= 0 else 0
            if q < 0 and (bad is None or str(k) < bad):
                bad = str(k)
            ill = ill or not f
            req += f == 1
    if bad is not None:
        raise LinkError(code, "field %s is not declared" % bad[:32])
    if not ill and req == spec.count(":", lo, e) - spec.count("*", lo, e):
        return
    for f in spec[lo:e].split():       # what is wrong (the error path may allocate)
        k, t = f.split(":")
        if k not in obj:
            if "*" not in t:
                raise LinkError(code, "field %s: missing" % k)
        elif not _fits(obj[k], t, 0):
            # "?" and "*" are MicroPython's own names; "?*" would be one more
            raise LinkError(code, ("field %s: must be %s or null" if "?" in t else "field %s: must be %s")
                            % (k, t.split("?")[0].rstrip("*")))


# The bytes the writer puts down around values (ASCII; compiled in, no
# heap); a str's and an int's own are link/json_bytes.py's.
_COMMA = const(0x2C)            # ,
_COLON = const(0x3A)            # :
_OPEN_LIST = const(0x5B)        # [
_CLOSE_LIST = const(0x5D)       # ]
_OPEN_OBJECT = const(0x7B)      # {
_CLOSE_OBJECT = const(0x7D)     # }
# What the keys of the objects in a value may be (_value's `mode`).
_ANY_KEYS = const(0)            # any str: inside an "any" field
_PUBLIC = const(1)              # declared in NESTED
_REVEALED = const(2)            # declared in NESTED, or SECRET (reveal=True)


def _item(buf, i, v, mode):
    """v as JSON at buf[i:], its objects' keys by mode (_value); its end.

    A str (a key too) or an int, most of what a message holds, goes
    straight to link/json_bytes.py, whose functions keep their frames
    off the heap; a bigger function, such as _value, has its frame
    allocated on the heap at every call (MicroPython's py/objfun.c), and
    freed at its return it still counts towards the next collection
    (gc.threshold, 512 B: firmware/main.py): written by _value alone, a
    call per key and per value, a `status` answer would take two dozen
    collections, and an event the tick emits would allocate
    (docs/heap-idioms.md)."""
    if type(v) is int:
        return json_bytes.put_int(buf, i, v)
    if type(v) is str:
        return json_bytes.put_str(buf, i, v)
    return _value(buf, i, v, mode)


def _value(buf, i, v, mode, spec=None, lo=0, e=0, head=None):
    """v as JSON at buf[i:]; its end.

    A str is escaped like json.dumps(ensure_ascii=False) (_item). An
    object's keys are written sorted; they must be, by mode (for the
    objects in v): 0 any str (_ANY_KEYS, in an "any" field), _PUBLIC
    NESTED, _REVEALED NESTED or SECRET (reveal). A message
    (spec: its entry is spec[lo:e]) has its "{" and head written already; its
    other keys must be declared in the entry and of their type. Undeclared
    or secret keys are "not_public" at once; ill-typed values and missing
    fields "bad_value" once every key passed the guard."""
    t = type(v)
    if t is str or t is int:
        return _item(buf, i, v, mode)
    if v is None or t is bool:
        return json_bytes.put_ascii(buf, i, "null" if v is None else "true" if v else "false")
    if t is list or t is tuple:
        return _list(buf, i, v, mode)
    if t is not dict:
        raise LinkError("bad_value", "a %s cannot go on the link" % t.__name__)
    return _object(buf, i, v, mode, spec, lo, e, head)


def _list(buf, i, v, mode):
    """A list or tuple at buf[i:]; its end."""
    start = i                          # no comma before the first item
    buf[i] = _OPEN_LIST
    for j in range(len(v)):
        if i != start:
            buf[i] = _COMMA
        i = _item(buf, i + 1, v[j], mode)
    buf[i + (i == start)] = _CLOSE_LIST
    return i + 1 + (i == start)


def _object(buf, i, v, mode, spec, lo, e, head):
    """A dict at buf[i:], its keys sorted and guarded (_value); its end."""
    start = i                          # no comma before the first key
    if head is None:
        buf[i] = _OPEN_OBJECT
    else:                              # a message: a comma before each key
        start = -1
    prev, req, bad = None, 0, False
    while True:
        k = _next_key(v, prev, head, mode)
        if k is None:
            break
        prev = k
        sub = mode
        if mode == _PUBLIC and k in SECRET_KEYS:
            raise LinkError("not_public", "field %s is not public" % k)
        if spec is not None:
            q = find(spec, k, lo, e, " ")
            if q < 0:
                raise LinkError("not_public", "field %s is not declared" % k[:32])
            f = _fits(v[k], spec, q + 1)
            req += f == 1
            bad = bad or not f
            if spec.startswith("any", q + 1):
                sub = _ANY_KEYS
        elif mode != _ANY_KEYS and k not in SECRET_KEYS and find(NESTED, k, 0, len(NESTED), " ") < 0:
            raise LinkError("not_public", "field %s is not declared" % k[:32])
        if i != start:
            buf[i] = _COMMA
        i = _item(buf, i + 1, k, _ANY_KEYS)
        buf[i] = _COLON
        i = _item(buf, i + 1, v[k], sub)
    if spec is not None and (bad or req != spec.count(":", lo, e) - spec.count("*", lo, e)):
        check(v, spec, lo, e, head, "bad_value")     # raises: what is wrong
    buf[i + (i == start)] = _CLOSE_OBJECT
    return i + 1 + (i == start)


def _next_key(v, prev, head, mode):
    """The least key of v after `prev` (None: the first), the head left
    out; None when there is no more. Keys are put in order by selection,
    not sorted into a list: nothing is made."""
    k = None
    for key in v:
        if type(key) is not str:
            if mode != _ANY_KEYS:
                raise LinkError("not_public", "field %s is not declared" % repr(key)[:32])
            raise LinkError("bad_value", "a %s key cannot go on the link" % type(key).__name__)
        if key != head and (prev is None or key > prev) and (k is None or key < k):
            k = key
    return k


def write(buf, kind, seq, obj, spec, key, head, value, reveal, code):
    """obj as a message of frame kind `kind` sealed in buf; its length.
    Called with keywords (the arguments are many, and alike). Its entry in
    spec: the line named by obj[key] (else LinkError(code)), or all of spec
    (key None); on a line of REQUESTS, its answer's fields (after ">").
    `head` goes first; its value: obj's, else value (which it must be).
    reveal: SECRET keys may be written."""
    p = -1
    if key is not None:
        p = find(spec, obj.get(key), 0, len(spec), "\n")
        if p < 0:
            v = obj.get(key)
            raise LinkError(code, "%s %r is not in the table" % (key, v[:32] if type(v) is str else v))
    lo, e = p + 1, spec.find("\n", p) if p >= 0 else len(spec)
    q = spec.find(">", lo, e)
    if q >= 0:                          # a request's line: what its answer holds
        lo = q + 2
    h, mode = frame.HEADER, _REVEALED if reveal else _PUBLIC
    try:                                # an undeclared key: "not_public" here
        buf[h] = _OPEN_OBJECT
        i = _item(buf, h + 1, head, _ANY_KEYS)
        buf[i] = _COLON
        i = _item(buf, i + 1, obj.get(head, value), mode)
        i = _value(buf, i, obj, mode, spec, lo, e, head)
    except (IndexError, RuntimeError):  # past the buffer (a cycle ends there too)
        for k in obj:                   # the guard first, as when it fits
            if k != head and (type(k) is not str or find(spec, k, lo, e, " ") < 0
                              or (mode == _PUBLIC and k in SECRET_KEYS)):
                raise LinkError("not_public", "field %s is not declared" % str(k)[:32])
        check(obj, spec, lo, e, head, "bad_value")
        i = len(buf)
    if value is not None and obj.get(head, value) is not value:
        raise LinkError("bad_value", "field %s: must be %s" % (head, value))
    if i - h > frame.MAX_PAYLOAD or i + 2 > len(buf):
        raise LinkError("too_big", "payload over %d bytes" % min(frame.MAX_PAYLOAD, len(buf) - 8))
    return frame.seal(buf, kind, seq, i - h)


def decode_request(reader):
    """Controller: (op, args) of the REQUEST frame in a FrameReader, or a
    LinkError; a hello of another protocol version is "proto_mismatch"."""
    if reader.kind != REQUEST:
        raise LinkError("bad_kind", "kind 0x%02x is not a request" % reader.kind)
    # Requests are ASCII, escapes too (\u0000-\u007f; docs/protocol.md):
    # every name and value of the protocol is, so a request that is not is
    # refused here, whole, before its text is held anywhere.
    why = json_bytes.not_ascii(reader.buf, frame.HEADER, frame.HEADER + reader.length)
    if why is not None:
        raise LinkError("bad_request", "requests are ASCII: " + why)
    try:
        obj = json.loads(str(reader.buf[frame.HEADER:frame.HEADER + reader.length], "utf-8"))
    except Exception as e:             # never a crash, whatever the bytes are
        raise LinkError("bad_json", "payload is not UTF-8 JSON (%s)" % e)
    if type(obj) is not dict:
        raise LinkError("bad_request", "payload is not a JSON object")
    op = obj.get("op")
    if op is None:
        raise LinkError("bad_request", "field %s: missing" % "op")
    if type(op) is not str:
        raise LinkError("bad_request", "field op: must be str")
    p = find(REQUESTS, op, 0, len(REQUESTS), "\n")
    if p < 0:
        raise LinkError("unknown_op", "%s %r is not in the table" % ("op", op[:32]))
    e = REQUESTS.find(" >", p)          # its arguments: after who and home, before ">"
    lo = REQUESTS.find(" ", REQUESTS.find(" ", p + 1) + 1) + 1
    check(obj, REQUESTS, min(lo, e), e, "op", "bad_request")
    del obj["op"]
    if op == "hello" and obj["proto"] != PROTO_VERSION:
        raise LinkError("proto_mismatch", "host speaks protocol %d, controller %d" % (
            obj["proto"], PROTO_VERSION), {"op": op, "proto": PROTO_VERSION})
    return op, obj


def write_response(buf, seq, obj, reveal=False):
    """RESPONSE {"ok": true, "op": .., results} sealed in buf; its length."""
    return write(buf, kind=RESPONSE, seq=seq, obj=obj, spec=REQUESTS, key="op", head="ok",
                 value=True, reveal=reveal, code="bad_value")


def write_event(buf, seq, obj, reveal=False):
    """EVENT {"ev": .., "t": ms, public fields} sealed in buf; its length."""
    return write(buf, kind=EVENT, seq=seq, obj=obj, spec=EVENTS, key="ev", head="ev",
                 value=None, reveal=reveal, code="bad_value")


def write_error(buf, seq, obj):
    """ERROR {"ok": false, "error": .., "message": ..} from a dict or LinkError."""
    if isinstance(obj, LinkError):
        obj = dict(obj.info or {}, error=obj.code, message=obj.message)
    return write(buf, kind=ERROR, seq=seq, obj=obj, spec=ERROR_FIELDS, key=None, head="ok",
                 value=False, reveal=False, code="bad_value")
