"""Link framing (firmware/frame.py), a few plain cases that MicroPython
runs too; the property tests are host_tools/tests/test_link_codec_frames.py.

    0xA5 0x5A | kind | seq | len u16 LE | payload | crc u16 LE
    crc: CRC-16/CCITT-FALSE over kind, seq, len and payload
"""

from firmware import frame


def frames_of(reader, data):
    """Every (kind, seq, payload) a reader finds in `data`."""
    out = []
    i = 0
    while True:
        i = reader.feed(data, i)
        if not reader.ready:
            break
        out.append((reader.kind, reader.seq, reader.payload()))
    return out


def test_crc16_check_value():
    # the catalogue's check value of CRC-16/CCITT-FALSE
    assert frame.crc16(b"123456789") == 0x29B1
    assert frame.crc16(b"") == 0xFFFF


def test_seal_writes_the_documented_layout():
    buf = bytearray(frame.OVERHEAD + 3)
    buf[frame.HEADER:frame.HEADER + 3] = b"\x01\x02\x03"
    n = frame.seal(buf, 0x42, 0x107, 3)  # seq keeps its low byte
    assert n == 11
    assert bytes(buf[:6]) == bytes([0xA5, 0x5A, 0x42, 0x07, 3, 0])
    crc = frame.crc16(bytes([0x42, 0x07, 3, 0, 1, 2, 3]))
    assert buf[9] == crc & 0xFF and buf[10] == crc >> 8
    assert frame.encode(0x42, 7, b"\x01\x02\x03") == bytes(buf)


def test_seal_refuses_a_payload_that_does_not_fit():
    for n, size in ((5, frame.OVERHEAD + 4), (frame.MAX_PAYLOAD + 1, frame.OVERHEAD + 600)):
        try:
            frame.seal(bytearray(size), 1, 0, n)
        except ValueError:
            continue
        raise AssertionError("sealed %d bytes into %d" % (n, size))


def test_round_trip_of_several_frames_in_one_chunk():
    payloads = [b"", b"x", bytes(range(256)), b"\xa5\x5a\xa5\x5a" * 10]
    data = b""
    for k, p in enumerate(payloads):
        data += frame.encode(0x10 + k, k, p)
    r = frame.FrameReader()
    got = frames_of(r, data)
    assert got == [(0x10 + k, k, payloads[k]) for k in range(len(payloads))]
    assert r.frames == 4 and r.dropped == 0 and r.bad_crc == 0


def test_a_frame_fed_one_byte_at_a_time():
    data = frame.encode(3, 9, b"hello")
    r = frame.FrameReader()
    got = []
    for b in data:
        got += frames_of(r, bytes([b]))
    assert got == [(3, 9, b"hello")]


def test_resync_after_garbage():
    good = frame.encode(0x81, 1, b"\x05\x01\x00\x00\x00\x00")
    data = b"\x00\xff\xa5\x13\x5a\xa5" + good + b"\xa5" + frame.encode(0x83, 2, b"\x10\x27\x00\x00")
    r = frame.FrameReader()
    got = frames_of(r, data)
    assert got == [(0x81, 1, b"\x05\x01\x00\x00\x00\x00"), (0x83, 2, b"\x10\x27\x00\x00")]
    assert r.dropped == 6 + 1
    # every byte accounted for
    assert r.dropped + len(good) + 12 + r.n + r.backlog() == len(data)


def test_resync_after_a_bad_crc_and_a_truncated_frame():
    bad = bytearray(frame.encode(1, 1, b"abcd"))
    bad[7] ^= 0x20
    cut = frame.encode(2, 2, b"0123456789")[:9]          # the line dropped the rest
    good = frame.encode(4, 4, b"ok")
    r = frame.FrameReader()
    got = frames_of(r, bytes(bad) + cut + good)
    assert got == [(4, 4, b"ok")]
    assert r.bad_crc >= 1


def test_a_length_over_the_maximum_is_garbage():
    r = frame.FrameReader(16)
    big = frame.encode(1, 1, bytes(17))
    small = frame.encode(2, 2, b"fits")
    assert frames_of(r, big + small) == [(2, 2, b"fits")]
