"""The bench's fragmentation figure (host_tools/bench/fragmentation.py): a
short run on the twin at the bench's heap, a heap too small to boot in, and
what makes a run fail."""

import pytest

from host_tools.bench import fragmentation


def test_a_short_fragmentation_run_gives_a_figure():
    figures, d = fragmentation.measure(hands=3)
    figure = figures["image_soak_min_free_block_bytes"]
    assert 0 < figure <= d["max_free_max"] < 64 * 1024 == figures["image_soak_heap_bytes"]
    assert figure == min(s[2] for _w, s in d["first"] + d["last"])
    assert not d["memory_errors"] and d["soak"]["ok"] and d["soak"]["dropped"] == 0
    assert d["soak"]["hands"] == 3 and d["samples"] == 2 + 3     # boot, visit, each hand
    assert [s[0] for s in d["first"][:3]] == ["boot", "visit before the first start", "hand 1"]
    assert d["visits"][0]["ok"] and not d["missed_reports"]


def test_a_heap_the_firmware_cannot_boot_in_fails_the_measurement():
    with pytest.raises(fragmentation.FragmentationFailed) as e:
        fragmentation.measure(hands=1, heap=20 * 1024)
    assert "the soak ended" in str(e.value) and "no answer to hello" in str(e.value)
    assert e.value.figures == {"image_soak_heap_bytes": 20 * 1024,
                               "image_soak_min_free_block_bytes": None}
    assert e.value.details["samples"] == 0


def test_what_fails_a_run():
    ok = {"soak": {"dropped": 0, "error": None, "ok": True}, "memory_errors": [],
          "visits": [{"ok": True}], "samples": 5, "missed_reports": []}
    assert fragmentation.failure(ok) == ""
    starved = dict(ok, memory_errors=[{"reason": "MemoryError: allocating 96 bytes"}],
                   soak=dict(ok["soak"], dropped=25))
    why = fragmentation.failure(starved)
    assert "MemoryError" in why and "25 events or answers dropped" in why
    assert fragmentation.failure(dict(ok, visits=[{"ok": False}])) == "a service visit failed"
    assert "missing" in fragmentation.failure(dict(ok, missed_reports=["hand 3: no report"]))
