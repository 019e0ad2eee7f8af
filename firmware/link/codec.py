"""The link's messages, read and written by the protocol's tables
(link/protocol.py): one JSON writer, both sides (docs/protocol.md).

Canonical JSON (same bytes on both interpreters) written in place into the
frame buffer, no intermediate string. Guard: every key written must be declared,
and SECRET keys (tile identities) need reveal=True, else LinkError("not_public").

The tables are read in place with find/startswith. Writing a message
makes no object and interns no name: keys are put in order by selection, not sorted into a list, a string's bytes are copied
through one buffer (_utf8), never read a character at a time, and no
function here holds a comprehension or a closure (its captured locals
would be heap cells at every call). What it allocates is the frames of
its larger functions, freed at their return, once per list or dict, not
per key and value (_item).
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython
    def const(x):
        return x

import json

from firmware import frame
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


# The bytes of a short str being written (_utf8): every str the control
# loop writes (names of events, states, phases) fits, so writing them
# allocates nothing; a longer one (an error's message, a config value) is
# rare, and encoded into a new bytes. 64 bytes, not a frame's 512: on the
# twin the 448 bytes are the controller's largest free block's margin
# (docs/heap-idioms.md).
_SHORT = const(64)
_text = bytearray(_SHORT)

# The bytes the writer puts down, by name (ASCII; compiled in, no heap).
_SPACE = const(0x20)            # below it: control characters, escaped
_QUOTE = const(0x22)            # "
_COMMA = const(0x2C)            # ,
_MINUS = const(0x2D)            # -
_ZERO = const(0x30)             # 0, the digits follow
_SEVEN = const(0x37)            # 7
_COLON = const(0x3A)            # :
_OPEN_LIST = const(0x5B)        # [
_BACKSLASH = const(0x5C)        # \
_CLOSE_LIST = const(0x5D)       # ]
_HEX_LETTER = const(0x61 - 10)  # a hex digit 10..15 as a..f
_U = const(0x75)                # u, of \uXXXX
_OPEN_OBJECT = const(0x7B)      # {
_CLOSE_OBJECT = const(0x7D)     # }
_NOT_ASCII = const(0x80)        # from here a byte is not ASCII
_ESCAPES = const(b"btn_fr")     # \b \t \n \v \f \r as written: 0x08..0x0D, \v as \u000b
# A lone surrogate, as MicroPython holds it: ED A0..BF xx (UTF-8 of
# U+D800..DFFF), written \uDXXX.
_SURROGATE_LEAD = const(0xED)
_SURROGATE_MIN = const(0xA0)
# What the keys of the objects in a value may be (_value's `mode`).
_ANY_KEYS = const(0)            # any str: inside an "any" field
_PUBLIC = const(1)              # declared in NESTED
_REVEALED = const(2)            # declared in NESTED, or SECRET (reveal=True)


def _utf8(v):
    """The UTF-8 bytes of the str v (a lone surrogate as ED Ax xx, as
    MicroPython holds it). MicroPython interns, for good, each character
    read out of a str (`v[j]`, iteration, chr()): written that way, every
    character a message carries would be a name of the pool, whose next block
    (7 KB on the unix port) a full heap cannot give. bytearray.extend takes
    a str's own bytes instead, into _text when they surely fit (a character
    is at most 3 bytes), else str.encode copies them into a new bytes (no
    name either). CPython has no buffer in a str: there it is encoded."""
    if len(v) > frame.MAX_PAYLOAD:
        raise IndexError("a str longer than a frame")
    if 3 * len(v) > _SHORT:
        return v.encode("utf-8", "surrogatepass")
    _text[:] = b""
    try:
        _text.extend(v)
    except TypeError:                  # CPython
        return v.encode("utf-8", "surrogatepass")
    return _text


def _item(buf, i, v, mode):
    """v as JSON at buf[i:], its objects' keys by mode (_value); its end.

    A str (a key too) or an int, most of what a message holds, is written
    here, in a function whose locals and stack take at most 11 words
    (44 B): a bigger one, such as _value, has its frame allocated on the
    heap at every call (MicroPython's py/objfun.c). Freed at its return,
    a frame still counts towards the next collection (gc.threshold, 512 B:
    firmware/main.py): written by _value alone, a call per key and per
    value, a `status` answer would take two dozen collections, and an
    event the tick emits would allocate (docs/heap-idioms.md). So no more
    locals here: `v` holds each
    character of a str once its bytes are out.

    A str is escaped like json.dumps(ensure_ascii=False): raw UTF-8,
    \\" \\\\ \\b \\f \\n \\r \\t, \\u00XX for other control characters,
    \\uXXXX for a lone surrogate (MicroPython's json makes them)."""
    if type(v) is int:
        if v < 0:
            buf[i] = _MINUS
            i += 1
            v = -v
        j = v
        while j >= 10:                 # i: where the last digit goes
            j //= 10
            i += 1
        j = i + 1
        while True:                    # the digits, last first
            buf[i] = _ZERO + v % 10
            v //= 10
            if not v:
                return j
            i -= 1
    if type(v) is not str:
        return _value(buf, i, v, mode)
    b, j = _utf8(v), 0
    buf[i] = _QUOTE
    i += 1
    while j < len(b):
        v = b[j]
        j += 1
        if v == _SURROGATE_LEAD and j + 1 < len(b) and b[j] >= _SURROGATE_MIN:
            v = 0xD000 | (b[j] & 0x3F) << 6 | b[j + 1] & 0x3F     # its code point
            j += 2
        elif v >= _SPACE and v != _QUOTE and v != _BACKSLASH:   # UTF-8 bytes as they are
            buf[i] = v
            i += 1
            continue
        buf[i] = _BACKSLASH
        if v == _QUOTE or v == _BACKSLASH:
            buf[i + 1] = v
            i += 2
        elif 0x08 <= v <= 0x0D and v != 0x0B:
            buf[i + 1] = _ESCAPES[v - 0x08]
            i += 2
        else:                          # \uXXXX, hex digits in lower case as json.dumps has them
            buf[i + 1] = _U
            i += 5                     # the last digit's place; the digits last first,
            v |= 0x10000               # down to this 1 above them (no loop variable)
            while v > 1:
                buf[i] = (v & 0xF) + (_ZERO if v & 0xF < 10 else _HEX_LETTER)
                v >>= 4
                i -= 1
            i += 5
    buf[i] = _QUOTE
    return i + 1


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
        b = _utf8("null" if v is None else "true" if v else "false")
        for j in range(len(b)):
            buf[i + j] = b[j]
        return i + len(b)
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
    b, i, e = reader.buf, frame.HEADER, frame.HEADER + reader.length
    while i < e:
        c = b[i]
        if c == _BACKSLASH and i + 1 < e and b[i + 1] == _U:            # \uXXXX
            if (i + 5 >= e or b[i + 2] != _ZERO or b[i + 3] != _ZERO
                    or not _ZERO <= b[i + 4] <= _SEVEN):
                raise LinkError("bad_request", "requests are ASCII: a \\u escape above"
                                " U+007F at byte %d" % (i - frame.HEADER))
            i += 6
        elif c >= _NOT_ASCII:
            raise LinkError("bad_request", "requests are ASCII: byte 0x%02x at %d"
                            % (c, i - frame.HEADER))
        else:
            i += 2 if c == _BACKSLASH else 1   # an escaped pair: "\\u" is a backslash and a u
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
