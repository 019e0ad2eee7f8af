"""JSON at the byte level, for the link's writer (link/codec.py): an int
or a str written in place into a frame's buffer, and a request's bytes
checked to be ASCII before they are parsed.

Both sides write with it, so the bytes are the same on both
interpreters: a str escaped like json.dumps(ensure_ascii=False), raw
UTF-8, \\" \\\\ \\b \\f \\n \\r \\t, \\u00XX for other control characters,
\\uXXXX for a lone surrogate (MicroPython's json makes them).

`put_int` and `put_str` are called for every key and value of every
message, so each keeps its locals and stack within 11 words (44 B):
MicroPython puts a bigger function's frame on the heap at every call
(py/objfun.c), and the events the tick emits would allocate
(docs/heap-idioms.md). That is why they reuse `v` and `i` where a reader
would expect a new name.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython
    def const(x):
        return x

from firmware import frame

# The bytes of a short str being written (utf8): every str the control
# loop writes (names of events, states, phases) fits, so writing them
# allocates nothing; a longer one (an error's message, a config value) is
# rare, and encoded into a new bytes. 64 bytes, not a frame's 512: on the
# twin the 448 bytes are the controller's largest free block's margin
# (docs/heap-idioms.md).
_SHORT = const(64)
_text = bytearray(_SHORT)

# The bytes written or read, by name (ASCII; compiled in, no heap).
_SPACE = const(0x20)            # below it: control characters, escaped
_QUOTE = const(0x22)            # "
_MINUS = const(0x2D)            # -
_ZERO = const(0x30)             # 0, the digits follow
_SEVEN = const(0x37)            # 7
_BACKSLASH = const(0x5C)        # \
_HEX_LETTER = const(0x61 - 10)  # a hex digit 10..15 as a..f
_U = const(0x75)                # u, of \uXXXX
_NOT_ASCII = const(0x80)        # from here a byte is not ASCII
_ESCAPES = const(b"btn_fr")     # \b \t \n \v \f \r as written: 0x08..0x0D, \v as \u000b
# A lone surrogate, as MicroPython holds it: ED A0..BF xx (UTF-8 of
# U+D800..DFFF), written \uDXXX.
_SURROGATE_LEAD = const(0xED)
_SURROGATE_MIN = const(0xA0)


def utf8(v):
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


def put_ascii(buf, i, word):
    """An ASCII word (null, true, false) at buf[i:]; its end."""
    b = utf8(word)
    for j in range(len(b)):
        buf[i + j] = b[j]
    return i + len(b)


def put_int(buf, i, v):
    """The int v at buf[i:]; its end."""
    if v < 0:
        buf[i] = _MINUS
        i += 1
        v = -v
    j = v
    while j >= 10:                     # i: where the last digit goes
        j //= 10
        i += 1
    j = i + 1
    while True:                        # the digits, last first
        buf[i] = _ZERO + v % 10
        v //= 10
        if not v:
            return j
        i -= 1


def put_str(buf, i, v):
    """The str v, quoted and escaped, at buf[i:]; its end. `v` holds each
    byte once the str's bytes are out (no more locals: above)."""
    b, j = utf8(v), 0
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


def not_ascii(b, i, e):
    """Why the JSON text b[i:e] is not ASCII, escapes too (\\u0000-\\u007f),
    with the byte's place counted from i; None when it is. Every name and
    value of the protocol is ASCII (docs/protocol.md), so a request that
    is not is refused whole, before its text is held anywhere."""
    start = i
    while i < e:
        c = b[i]
        if c == _BACKSLASH and i + 1 < e and b[i + 1] == _U:            # \uXXXX
            if (i + 5 >= e or b[i + 2] != _ZERO or b[i + 3] != _ZERO
                    or not _ZERO <= b[i + 4] <= _SEVEN):
                return "a \\u escape above U+007F at byte %d" % (i - start)
            i += 6
        elif c >= _NOT_ASCII:
            return "byte 0x%02x at %d" % (c, i - start)
        else:
            i += 2 if c == _BACKSLASH else 1   # an escaped pair: "\\u" is a backslash and a u
    return None
