"""RFID reader driver (firmware/drivers/rfid.py) on the fake HAL's UART2.
Requests and replies are built here from docs/hardware.md, not from the driver:

    0x02 | cmd | len | data | xor | 0x03,   xor = cmd ^ len ^ data[0] ^ ...
    SCAN_SIDE 0x10: side, level -> 0x90: side, count, count x (slot, uid BE)
"""

from firmware.drivers import rfid as rf
from firmware.drivers.rfid import Rfid
from firmware.tags import UNKNOWN, TagTable
from firmware.fakes.hal import FakeHal, shipped_pins

PINS = shipped_pins()
REPLY_MS = 400
N_SLOTS = 144
PER_SIDE = 36


def doc_frame(cmd, data):
    x = cmd ^ len(data)
    for b in data:
        x ^= b
    return bytes([0x02, cmd, len(data)] + list(data) + [x, 0x03])


def doc_reply(side, tags, count=None):
    """tags: (slot, uid) in slot order."""
    data = [side, len(tags) if count is None else count]
    for slot, uid in tags:
        data += [slot, (uid >> 24) & 0xFF, (uid >> 16) & 0xFF, (uid >> 8) & 0xFF, uid & 0xFF]
    return doc_frame(0x90, data)


KNOWN = 0x4D4A0000                 # the tag table knows KNOWN + k as tile k % 34


def make(raw=True):
    """The driver on UART2 with a tag table of KNOWN..KNOWN + 143; `raw`:
    it keeps the UIDs too (a technician's learn scan)."""
    hal = FakeHal()
    uart = hal.uart(2, PINS["rfid_tx"], PINS["rfid_rx"])
    table = TagTable(N_SLOTS)
    for k in range(N_SLOTS):
        table.add(KNOWN + k, k % 34)
    r = Rfid(uart, N_SLOTS, REPLY_MS, table)
    if raw:
        r.raw = bytearray(4 * N_SLOTS)
    return uart, r


def test_the_request_bytes():
    uart, r = make()
    r.scan(0, 2, 0)
    assert uart.take() == doc_frame(0x10, [2, 0])
    r.scan(0, 3, 1)
    assert uart.take() == doc_frame(0x10, [3, 1])
    # written out once: 02 10 02 side level xor 03
    r.scan(0, 1, 0)
    assert uart.take() == bytes([0x02, 0x10, 0x02, 0x01, 0x00, 0x10 ^ 0x02 ^ 0x01, 0x03])
    assert r.state == 1              # waiting (a private constant of rfid.py)


def test_a_reply_fills_uids_and_seen_of_that_side():
    uart, r = make()
    r.seen[0] = 1                        # another side's earlier result stays
    r.raw[0:4] = b"\x11\x11\x11\x11"
    r.seen[PER_SIDE + 5] = 1             # this side's earlier result is replaced
    r.scan(0, 1, 0)
    tags = [(PER_SIDE + 0, 0x4D4A0000), (PER_SIDE + 1, 0x4D4A1B02), (PER_SIDE + 35, 0xFF020302)]
    uart.feed(b"\x00\x55")               # noise before the frame
    uart.feed(doc_reply(1, tags))
    r.poll(150)
    assert r.state == rf.DONE and r.fault == 0
    assert r.uid(PER_SIDE + 0) == 0x4D4A0000
    assert r.uid(PER_SIDE + 1) == 0x4D4A1B02
    assert r.uid(PER_SIDE + 35) == 0xFF020302
    for slot in range(PER_SIDE, 2 * PER_SIDE):
        assert r.seen[slot] == (1 if slot in (PER_SIDE, PER_SIDE + 1, PER_SIDE + 35) else 0), slot
    assert r.seen[0] == 1 and r.uid(0) == 0x11111111
    r.poll(10000)                        # done: no timeout later
    assert r.fault == 0


def test_each_tag_read_is_looked_up_as_it_comes_and_its_uid_kept_only_when_asked():
    uart, r = make(raw=False)
    r.scan(0, 2, 0)
    tags = [(2 * PER_SIDE, KNOWN + 5), (2 * PER_SIDE + 3, 0x01020304), (2 * PER_SIDE + 7, 0x0A0B0C0D),
            (2 * PER_SIDE + 9, KNOWN + 40)]
    uart.feed(doc_reply(2, tags))
    r.poll(150)
    assert r.state == rf.DONE and r.fault == 0 and r.raw is None
    assert r.ids[2 * PER_SIDE] == 5 and r.ids[2 * PER_SIDE + 9] == 40 % 34
    assert r.ids[2 * PER_SIDE + 3] == UNKNOWN and r.ids[2 * PER_SIDE + 7] == UNKNOWN
    # the scan's first unknown tag, whole, for the fault that names it
    assert r.unknown_slot == 2 * PER_SIDE + 3 and bytes(r.unknown_uid) == b"\x01\x02\x03\x04"
    r.release()
    r.scan(0, 0, 0)                      # a new scan of the walls forgets it
    assert r.unknown_slot == -1


def test_a_full_side_in_several_reads():
    uart, r = make()
    r.scan(0, 3, 0)
    tags = [(3 * PER_SIDE + k, 0x4D4A0000 + k) for k in range(PER_SIDE)]
    reply = doc_reply(3, tags)
    assert len(reply) == 187             # the doc's figure for a 36-slot side
    uart.feed(reply)
    r.poll(130)                          # the driver reads in chunks
    r.poll(140)
    r.poll(150)
    r.poll(160)
    assert r.state == rf.DONE and r.fault == 0
    for k in range(PER_SIDE):
        assert r.seen[3 * PER_SIDE + k] == 1
        assert r.uid(3 * PER_SIDE + k) == 0x4D4A0000 + k


def test_an_empty_side():
    uart, r = make()
    for s in range(N_SLOTS):
        r.seen[s] = 1
    r.scan(0, 0, 0)
    uart.feed(doc_reply(0, []))
    r.poll(150)
    assert r.state == rf.DONE
    assert sum(r.seen[0:PER_SIDE]) == 0
    assert sum(r.seen[PER_SIDE:]) == N_SLOTS - PER_SIDE


def test_a_bad_xor_with_no_good_reply_by_the_deadline_is_fault_24():
    uart, r = make()
    r.scan(0, 0, 0)
    bad = bytearray(doc_reply(0, [(3, 0x4D4A0102)]))
    bad[-2] ^= 0x40
    uart.feed(bad)
    r.poll(150)
    assert r.fault == 0 and r.state == 1   # a good reply may still come
    r.poll(REPLY_MS + 1)
    assert r.fault == 24                             # none did: the line, not the reader
    assert r.state != rf.DONE
    assert r.seen[3] == 0
    assert r.bad_frames == 1


def test_a_stray_start_byte_before_a_reply_does_not_lose_it():
    uart, r = make()
    r.scan(0, 0, 0)
    tags = [(k, 0x4D4A0000 + k) for k in range(PER_SIDE)]     # a full side: 187 bytes
    uart.feed(b"\x02" + doc_reply(0, tags))
    for t in range(10, 100, 10):
        r.poll(t)
    assert r.state == rf.DONE and r.fault == 0
    assert sum(r.seen[0:PER_SIDE]) == PER_SIDE and r.uid(5) == 0x4D4A0005
    assert r.bad_frames == 1


def test_no_reply_is_fault_23():
    uart, r = make()
    r.scan(1000, 2, 0)
    r.poll(1000 + REPLY_MS)
    assert r.fault == 0 and r.state == 1
    r.poll(1000 + REPLY_MS + 1)
    assert r.fault == 23
    assert r.detail == {"side": 2, "ms": REPLY_MS}
    uart.feed(doc_reply(2, [(72, 0x4D4A0000)]))    # too late: not taken
    r.poll(2000)
    assert r.seen[72] == 0


def test_a_reply_for_another_side_is_refused():
    uart, r = make()
    r.scan(0, 1, 0)
    uart.feed(doc_reply(2, [(2 * PER_SIDE, 0x4D4A0000)]))
    r.poll(150)
    assert r.state != rf.DONE
    assert r.seen[2 * PER_SIDE] == 0
    assert r.fault == 24           # well formed but not what was asked: at once


def test_a_count_that_disagrees_with_the_length_is_refused():
    uart, r = make()
    r.scan(0, 0, 0)
    uart.feed(doc_reply(0, [(0, 0x4D4A0000), (1, 0x4D4A0001)], count=3))
    r.poll(150)
    assert r.state != rf.DONE
    assert r.seen[0] == 0 and r.seen[1] == 0
    assert r.fault == 24


def test_a_reply_when_none_was_asked_is_ignored():
    uart, r = make()
    uart.feed(doc_reply(0, [(0, 0x4D4A0000)]))
    r.poll(10)
    assert r.state == rf.IDLE and r.fault == 0 and r.seen[0] == 0
