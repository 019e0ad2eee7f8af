"""A host cannot fill the controller's heap with names (MicroPython only:
CPython interns nothing it is not asked to). MicroPython interns, for good,
each character it reads out of a str; the link writes an error's text a
character at a time ("field X is not declared"), so before requests had
to be ASCII, 1,000 undeclared keys of new characters grew the heap by
about 18 KB for good (a new block of the name pool)."""

import gc

from firmware import frame
from firmware.link.server import LinkServer
from firmware.fakes.hal import FakeHal
from firmware.tests.test_link_server import REQUEST, Line


def test_keys_of_ever_new_characters_do_not_grow_the_heap():
    hal = FakeHal()
    hal.link = line = Line(b"")
    server = LinkServer(hal, "0.0.0", "test")

    answered = [0]

    def ask(seq, key):             # a status request with an undeclared key
        line.data = frame.encode(REQUEST, seq & 0xFF, b'{"op":"status","' + key + b'":1}')
        line.at = 0
        server.poll(seq * 10)
        answered[0] += len(line.out)
        line.out.clear()           # the answers are the host's: not the controller's heap
    for seq in range(20):          # the answers' own names and buffers first
        ask(seq, b"nope")
    gc.collect()
    before = gc.mem_alloc()
    for k in range(500):
        cp = 0x4E00 + k            # as UTF-8 bytes (chr() would intern it here)
        ask(100 + k, bytes((0xE0 | cp >> 12, 0x80 | (cp >> 6) & 63, 0x80 | cp & 63)))
        ask(700 + k, b"\\u%04x" % (0x5000 + k))      # as an escape
    gc.collect()
    grown = gc.mem_alloc() - before
    assert answered[0] == 1020 and server.errors == 1020
    assert grown < 1024, grown


def _fresh(first):
    """128 CJK characters from U+`first` as a str, made from their UTF-8
    bytes (chr() would intern each one here)."""
    out = bytearray()
    for cp in range(first, first + 128):
        out.extend(bytes((0xE0 | cp >> 12, 0x80 | (cp >> 6) & 63, 0x80 | cp & 63)))
    return out.decode()


def _locked(fn):
    import micropython
    gc.collect()
    micropython.heap_lock()
    try:
        return fn()
    except MemoryError:
        return "MemoryError"
    finally:
        micropython.heap_unlock()


def test_reading_new_characters_out_of_a_str_allocates():
    """The premise of the next test, in this process: reading 128 new
    characters out of a str interns them, which needs heap (a new chunk
    for their text, a larger pool), so under heap_lock it fails."""
    text = _fresh(0x6100)

    def read_each():
        for c in text:
            pass
    assert _locked(read_each) == "MemoryError"


def _written(buf, n):
    import json
    return json.loads(bytes(buf[frame.HEADER:frame.HEADER + n - frame.OVERHEAD]).decode())


def test_short_strs_of_new_characters_are_written_without_allocating():
    """The writer takes a str's bytes (json_bytes.utf8), never a character out
    of it: the first messages to carry 128 new characters (CJK, all of
    ASCII, a lone surrogate), in the short strs the control loop writes,
    allocate nothing, so play never grows the name pool (whose next
    block, 7 KB, a full heap could not give), and the text arrives whole."""
    import json
    from firmware.link import codec
    cjk = _fresh(0x6200)
    text = bytes(range(128)).decode()
    lone = json.loads('"a\\ud800b"')            # MicroPython's json makes them
    pieces = [cjk[k:k + 21] for k in range(0, 128, 21)]
    pieces += [text[k:k + 21] for k in range(0, 128, 21)] + [lone]
    buf = bytearray(frame.OVERHEAD + frame.MAX_PAYLOAD)
    for piece in pieces:
        m = {"ev": "refused", "t": 1, "seat": 0, "reason": piece}
        n = _locked(lambda: codec.write_event(buf, 2, m))
        assert n != "MemoryError" and n > 0, repr(piece)
        assert _written(buf, n)["reason"] == piece


def test_long_strs_of_new_characters_leave_nothing_in_the_heap():
    """A longer str (an error's message) is copied into a new bytes, which
    is garbage once written: no name is interned, the heap after a
    collection is as before, and the text arrives whole."""
    from firmware.link import codec
    buf = bytearray(frame.OVERHEAD + frame.MAX_PAYLOAD)
    msgs = [{"ev": "refused", "t": 1, "seat": 0, "reason": s}
            for s in (_fresh(0x6400), bytes(range(32, 128)).decode())]
    codec.write_event(buf, 2, {"ev": "refused", "t": 1, "seat": 0, "reason": "x" * 40})
    gc.collect()
    before = gc.mem_alloc()
    for m in msgs:
        n = codec.write_event(buf, 2, m)
        assert _written(buf, n)["reason"] == m["reason"]
    m = n = None
    gc.collect()
    assert gc.mem_alloc() - before <= 0
