"""A host cannot fill the controller's heap with names (MicroPython only:
CPython interns nothing it is not asked to). MicroPython interns, for good,
each character it reads out of a str; the link writes an error's text a
character at a time ("field X is not declared"), so before requests had
to be ASCII, 1,000 undeclared keys of new characters grew the heap by
about 18 KB for good (a new block of the name pool)."""

import gc

from firmware.link import frame
from firmware.link.server import LinkServer
from firmware.tests.fakehal import FakeHal
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


def test_the_first_write_of_any_ascii_character_adds_no_name():
    """After codec.intern_ascii() (main.run calls it at boot), the first
    message to carry any ASCII character allocates nothing: play never
    grows the name pool (whose next block, 7 KB, a full heap could not give)."""
    import micropython
    from firmware.link import codec
    codec.intern_ascii()
    text = bytes(range(128)).decode()          # not chr(): that would intern them here
    buf = bytearray(frame.OVERHEAD + frame.MAX_PAYLOAD)
    first = {"ev": "refused", "t": 1, "seat": 0, "reason": text[:64]}
    second = {"ev": "refused", "t": 2, "seat": 1, "reason": text[64:]}
    gc.collect()
    a = b = 0
    micropython.heap_lock()
    try:
        a = codec.write_event(buf, 1, first)
        b = codec.write_event(buf, 2, second)
    except MemoryError:
        pass
    finally:
        micropython.heap_unlock()
    assert a > 0 and b > 0, (a, b)
