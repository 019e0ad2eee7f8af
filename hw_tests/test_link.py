"""The link itself: handshake, errors, damaged bytes, retries (docs/protocol.md)."""

import re

import pytest

from firmware import frame
from firmware.link import codec
from host_tools.link import codec as link_codec
from host_tools.qa import linkfuzz
from host_tools.link.client import LinkError
from hw_tests.harness import raw_request


def test_hello_names_firmware_protocol_and_build(target):
    info = target.hello_info
    assert info["ok"] is True and info["op"] == "hello"
    assert info["proto"] == codec.PROTO_VERSION
    assert re.fullmatch(r"\d+\.\d+\.\d+", info["fw"]), info
    assert isinstance(info["build"], str) and info["build"], info
    assert isinstance(info["table"], str) and info["table"], info
    assert target.link.hello() == info          # asking again: the same answer


@pytest.mark.parametrize("proto", [0, codec.PROTO_VERSION + 1])
def test_another_protocol_version_gets_proto_mismatch(target, proto):
    with pytest.raises(LinkError) as e:
        target.request("hello", proto=proto)
    err = e.value
    assert err.code == "proto_mismatch"
    assert err.info["proto"] == codec.PROTO_VERSION          # the controller's version
    assert str(codec.PROTO_VERSION) in err.message and str(proto) in err.message, err.message
    assert target.link.hello()["proto"] == codec.PROTO_VERSION   # the link goes on


def test_unknown_op_and_malformed_requests_get_their_error(target):
    with pytest.raises(LinkError) as e:
        target.link.request_raw(b'{"op":"dance"}')
    assert e.value.code == "unknown_op" and "dance" in e.value.message
    with pytest.raises(LinkError) as e:
        target.link.request_raw(b'{"op":"status"')
    assert e.value.code == "bad_json"
    with pytest.raises(LinkError) as e:
        target.link.request_raw(b'{"op":"status","colour":1}')
    assert e.value.code == "bad_request" and "colour" in e.value.message
    assert target.status()["ok"] is True


def test_garbage_bytes_on_the_link_are_survived(target):
    link = target.link
    noise = (b"boot log: rst:0x1 (POWERON)\r\n" + bytes(range(256))
             + b"\xa5\x5a\x10\x01\xff\xff"        # a header claiming 65535 bytes
             + b"\xa5\xa5\x5a" + bytes(10))        # A5 A5 5A: a frame of zeros, bad CRC
    link._send(noise)
    st = target.status()
    assert st["ok"] is True and st["state"] == "idle"
    assert target.link.hello()["proto"] == codec.PROTO_VERSION


def test_a_corrupted_frame_is_dropped_and_the_next_request_answered(target):
    link = target.link
    seq = (link._seq + 100) & 0xFF                # a seq the client is not using
    bad = bytearray(raw_request(seq, {"op": "start"}))
    bad[frame.HEADER + 3] ^= 0x20                 # a flipped bit in the payload: bad CRC
    link._send(bytes(bad))
    assert target.status()["state"] == "idle"     # answered; the damaged start did nothing
    # A truncated frame: the next request's bytes complete its length, the
    # CRC fails, and the rescan finds the request inside it.
    cut = raw_request((seq + 1) & 0xFF, {"op": "start"})[:9]
    link._send(cut)
    assert target.status()["state"] == "idle"
    assert not [r for r in link.rejected if r[2] in (seq, (seq + 1) & 0xFF)], link.rejected
    assert target.request("status")["ok"] is True


def test_a_frame_with_a_corrupted_length_does_not_swallow_the_next_request(target):
    """A bit flipped in a request's length: the controller waits for bytes
    that never come. Once the line has been quiet a while (the host waits
    for its answer) it must give the frame up, so the host's next request
    (or its retry) is answered (docs/protocol.md, "Garbage and damaged
    frames")."""
    link = target.link
    bad = bytearray(raw_request((link._seq + 100) & 0xFF, {"op": "start"}))
    bad[4] ^= 0x40                     # 64 more bytes than the frame has
    link._send(bytes(bad))
    target.wait_table_time(500)        # half a virtual second of quiet line
    st = target.status()               # LinkError("timeout") if swallowed twice
    assert st["state"] == "idle"       # the damaged start did nothing


def test_a_retried_request_is_answered_again_without_acting_twice(target):
    """The same seq and payload again (the host lost the answer): the stored
    answer is sent again and the table starts once."""
    link = target.link
    before = target.status()["link"]["requests"]
    target.drain()
    seq = (link._seq + 128) & 0xFF
    start = raw_request(seq, {"op": "start"})
    link._send(start)
    link._send(start)
    target.status()        # answered after both: their answers have been read
    answers = [r for r in link.rejected if r[2] == seq]
    assert len(answers) == 2, list(link.rejected)
    assert answers[0][1] == link_codec.RESPONSE and answers[0][3] == answers[1][3], answers
    assert link_codec.decode(answers[0][1], answers[0][3], "start")["state"] == "building"
    st = target.status()
    assert st["state"] == "building"
    assert st["link"]["requests"] - before == 3, st["link"]   # start, status, status: the retry is not a request
    with pytest.raises(LinkError) as e:        # a new start (another seq) acts: busy
        target.request("start")
    assert e.value.code == "busy"
    target.wait_virtual(st["uptime"] + 1000)
    building = [ev for ev in target.drain() if ev["ev"] == "state" and ev["state"] == "building"]
    assert len(building) == 1, target.history
    if target.table is not None:               # the plate was switched on once
        plate_on = [c for c in target.output_changes() if c[1] == "plate_motor" and c[2]]
        assert len(plate_on) == 1, plate_on


@pytest.mark.needs_sim
def test_a_flood_of_requests_is_answered_in_order_and_the_loop_goes_on(target):
    """40 status requests in one write (a host that never waits): every one
    is answered, in order (two a poll: firmware/tests/test_link_server.py),
    and the controller answers on as before."""
    link = target.link
    target.drain()
    first = (link._seq + 64) & 0xFF
    seqs = [(first + i) & 0xFF for i in range(40)]
    link._send(b"".join(raw_request(seq, {"op": "status"}) for seq in seqs))
    target.status()                    # after all 40: their answers are in
    answers = {r[2]: link_codec.decode(r[1], r[3], "status") for r in link.rejected
               if r[2] in seqs}
    assert sorted(answers) == sorted(seqs), len(answers)
    uptimes = [answers[seq]["uptime"] for seq in seqs]
    assert uptimes == sorted(uptimes)
    st = target.status()
    assert st["uptime"] >= uptimes[-1] and st["link"]["errors"] == 0, st


@pytest.mark.needs_sim
def test_the_live_link_survives_mutated_truncated_and_random_frames(target):
    """The target's live_fuzz_frames damaged frames and noise
    (host_tools/qa/linkfuzz/mutants.py: every kind of KINDS), in bursts
    of 50: after every burst the next valid request is answered; the
    controller never crashes nor restarts, and the garbage is counted
    (status.link)."""
    import random
    rng = random.Random(11)
    link = target.link
    before = target.status()["link"]
    kinds = {}
    sent = 0
    frames = target.live_fuzz_frames
    while sent < frames:
        link._send(b"".join(linkfuzz.mutants(rng, 50, link._seq + 128, kinds)))
        sent += 50
        st = target.status()                           # the next valid request
        assert st["ok"] is True and st["state"] == "idle", st
    assert sent == sum(kinds.values()) == frames
    assert all(kinds[k] for k, _ in linkfuzz.KINDS), kinds
    after = st["link"]
    assert after["garbage"] > before["garbage"] and after["bad_crc"] > before["bad_crc"], after
    assert after["errors"] > before["errors"]          # bad JSON, bad kinds: answered, counted
    assert after["requests"] - before["requests"] >= frames // 50
    assert target.sim.restarts == 0
    assert "Traceback" not in target.sim.firmware_log()
    assert link.hello()["proto"] == codec.PROTO_VERSION
