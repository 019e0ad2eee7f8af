"""The link fuzz (host_tools/qa/linkfuzz/) in small: the controller's own
LinkServer, frame reader and request decoder on CPython, fed FRAMES
mutated, truncated, oversized and random frames in bursts; after every
burst nothing crashed or hung, the next valid request was answered at once,
and every byte fed is a good frame's or counted as garbage. `make soak`
runs 1,000,000 (docs/reliability.md); hw_tests/test_link.py does the live
link."""

from firmware import frame
from firmware.link import codec
from host_tools.link import codec as link_codec
from host_tools.qa import linkfuzz

FRAMES = 50000


def test_the_link_server_survives_fuzzed_frames_and_counts_them():
    out = linkfuzz.inprocess(FRAMES, seed=1)
    assert out["ok"], out["failures"][:3]
    assert out["frames"] == sum(out["by_kind"].values()) == FRAMES
    assert all(out["by_kind"][k] for k, _ in linkfuzz.KINDS), out["by_kind"]
    assert out["valid_answered"] == out["bursts"] == FRAMES // 50
    link = out["link"]
    assert link["garbage"] > 0 and link["bad_crc"] > 0 and link["errors"] > 0, link
    assert out["answered"] + out["valid_answered"] == out["good_frames"]   # each answered once


def test_the_checks_see_a_crash_and_an_unanswered_request(monkeypatch):
    def broken(reader):
        raise KeyError("a bug")
    monkeypatch.setattr(codec, "decode_request", broken)
    out = linkfuzz.inprocess(200, seed=2)
    assert not out["ok"]
    assert any("crash: KeyError" in p for f in out["failures"] for p in f["problems"]), out


def test_mutants_keep_the_seq_and_each_kind_is_what_it_says():
    import random
    rng = random.Random(5)
    kinds = {}
    frames = linkfuzz.mutants(rng, 2000, 100, kinds)
    assert sum(kinds.values()) == len(frames) == 2000
    for f in frames:
        if len(f) > 3 and f[:2] == b"\xa5\x5a" and f[2] == link_codec.REQUEST:
            assert 100 <= f[3] < 164
    big = [f for f in frames if len(f) > frame.OVERHEAD + 160 and f[:2] == b"\xa5\x5a"]
    assert big                                  # over the controller's request buffer
