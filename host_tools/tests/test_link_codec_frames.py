"""The link's framing (firmware/frame.py): the CRC, and the reader finding
every good frame in any stream of garbage, truncated or damaged frames.
See docs/protocol.md."""

import binascii

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from firmware import frame
from host_tools.tests.link_codec_helpers import frames_of


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
