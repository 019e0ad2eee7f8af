"""The bench's pure helpers (host_tools/bench: stats, targets, gantt): no
table, no subprocess, no timing."""

import math

import pytest

from host_tools.bench import gantt
from host_tools.bench import targets as tg
from host_tools.bench.stats import (bisect_min, chi2_faces, gallop_min, median,
                                    percentile)


# -- order statistics ----------------------------------------------------------

def test_percentile_interpolates_between_ranks():
    xs = [4, 1, 3, 2]                       # unsorted on purpose
    assert percentile(xs, 0) == 1
    assert percentile(xs, 100) == 4
    assert percentile(xs, 50) == 2.5
    assert percentile(list(range(101)), 99) == 99
    assert percentile([7], 99) == 7
    assert percentile([0, 10], 25) == 2.5


def test_median_and_bad_input():
    assert median([3, 1, 2]) == 2
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile([1], 101)


# -- chi-square ----------------------------------------------------------------

def test_chi2_of_even_faces_is_zero_with_p_one():
    chi2, p = chi2_faces([100] * 6)
    assert chi2 == 0 and p == pytest.approx(1.0)


def test_chi2_p_matches_the_table_of_5_degrees_of_freedom():
    # chi-square critical values for 5 dof: 11.0705 at p = 0.05, 15.0863 at 0.01
    for x, p_want in ((11.0705, 0.05), (15.0863, 0.01), (4.35146, 0.5)):
        # counts with that chi-square: one face off by d, another by -d
        n = 6000
        want = n / 6
        d = math.sqrt(x * want / 2)
        chi2, p = chi2_faces([want + d, want - d, want, want, want, want])
        assert chi2 == pytest.approx(x)
        assert p == pytest.approx(p_want, rel=1e-3)


def test_chi2_flags_a_loaded_die():
    _, p = chi2_faces([100500, 99900, 99900, 99900, 99900, 99900])
    assert p > 0.01
    _, p = chi2_faces([101500, 99700, 99700, 99700, 99700, 99700])
    assert p < 0.01
    with pytest.raises(ValueError):
        chi2_faces([1, 2, 3])


# -- searches ------------------------------------------------------------------

def counting(threshold):
    calls = []

    def passes(v):
        calls.append(v)
        return v >= threshold
    return passes, calls


@pytest.mark.parametrize("search", [bisect_min, gallop_min])
@pytest.mark.parametrize("threshold", [48, 49, 60, 85, 111, 112])
def test_searches_find_the_smallest_passing_value(search, threshold):
    passes, calls = counting(threshold * 1024)
    v, tried = search(48 * 1024, 112 * 1024, passes, 1024)
    assert v == threshold * 1024
    assert [t for t, _ in tried] == calls
    assert all(ok == (t >= threshold * 1024) for t, ok in tried)
    assert len(calls) <= 16


@pytest.mark.parametrize("search", [bisect_min, gallop_min])
def test_searches_report_none_when_nothing_passes(search):
    passes, _ = counting(10 ** 9)
    v, tried = search(0, 100, passes, 10)
    assert v is None and tried[-1] == (100, False)


def test_gallop_is_cheap_just_above_lo():
    passes, calls = counting(82)
    v, _ = gallop_min(80, 160, passes, 1)
    assert v == 82 and calls == [80, 81, 83, 82]


# -- targets -------------------------------------------------------------------

def test_verdicts():
    le = {"op": "<=", "value": 0.03}
    assert tg.verdict(0.02, le) == "PASS" and tg.verdict(0.031, le) == "OVER"
    assert tg.verdict(60, {"op": ">=", "value": 50}) == "PASS"
    assert tg.verdict(False, {"op": "==", "value": True}) == "OVER"
    assert tg.verdict(None, le) == "n/a"
    assert tg.verdict(5, None) == "-"


def test_the_wait_target_follows_lift_plus_dice():
    t = tg.targets({"lift_plus_dice_s": 4.0})
    assert t["wait_between_hands_s"] == {"op": "<=", "value": 4.5}
    assert tg.targets({})["wait_between_hands_s"]["value"] is None
    assert "lift_plus_dice_s" not in t and "image_boot_to_ready_ms" not in t
    for run in ("cycle", "hand", "resume", "recut", "service"):   # with the telemetry too
        assert t["image_heap_%s_bytes" % run] == {"op": "<=", "value": 48 * 1024}
        assert t["image_heap_%s_telemetry_bytes" % run] == {"op": "<=", "value": 48 * 1024}
    assert t["mpy_deploy_heap_cycle_bytes"] == {"op": "<=", "value": 128 * 1024}
    assert t["image_soak_min_free_block_bytes"] == {"op": ">=", "value": 16 * 1024}
    assert "image_soak_heap_bytes" not in t


def test_every_documented_figure_has_a_row_and_the_64_bit_ones_are_gone():
    keys = {f[0] for f in tg.FIGURES}
    assert {"cycle_overhead", "wait_between_hands_s", "lift_plus_dice_s",
            "alloc_per_tick_bytes", "link_rtt_p50_ms", "link_rtt_p99_ms",
            "link_requests_per_s", "mpy_total_bytes", "virtual_speedup", "replay_ms_cpython",
            "replay_ms_micropython", "image_boot_to_ready_ms", "dice_chi2_p",
            "image_heap_cycle_bytes", "image_heap_hand_bytes", "image_heap_service_bytes",
            "image_heap_resume_bytes", "mpy_deploy_heap_cycle_bytes", "image_soak_min_free_block_bytes",
            "image_frozen_bytes"} <= keys
    assert not keys & {"peak_heap_bytes", "hand_passes_64k", "peak_heap_bytes_esp32_est"}


def test_formats():
    assert tg.fmt(84992, "B") == "84992 B (83.0 KB)"
    assert tg.fmt(True, "bool") == "yes"
    assert tg.fmt_target({"op": "<=", "value": 48 * 1024}, "B") == "<= 48 KB"
    assert tg.fmt_target({"op": ">=", "value": 50.0}, "x") == ">= 50x"
    assert tg.fmt_target(None, "ms") == "(report)"


# -- the Gantt -----------------------------------------------------------------

def cycle_log():
    """A two-lane-short log of one cycle, as VirtualTable.log holds it."""
    log = [(10, "out", None, "plate_motor", 800)]
    for n in range(4):
        log.append((10, "out", None, "lane_feed:%d" % n, 1))
    for n, done in enumerate((20000, 21000, 22000, 23000)):
        log.append((done - 300, "lane", n, "stacked", "1m", 35))
        log.append((done, "lane", n, "stacked", "2m", 36))
        log.append((done + 10, "out", None, "lane_feed:%d" % n, 0))
    log.append((23010, "out", None, "plate_motor", 0))
    for k, side in enumerate((0, 1, 2, 3)):
        log.append((23020 + 150 * k, "rfid", side, "scan", 0))
        log.append((23140 + 150 * k, "rfid", None, "reply", 0x90))
    for n in range(4):
        log.append((23700, "out", None, "lift_up:%d" % n, 1))
    for n in range(4):
        log.append((26200, "lifter", n, "top"))
    return log


EVENTS = [{"ev": "state", "state": "building", "t": 10},
          {"ev": "walls", "t": 23700},
          {"ev": "state", "state": "dealer", "t": 26200},
          {"ev": "state", "state": "rolling", "t": 26540},
          {"ev": "dice", "t": 28040}]


def test_cycle_spans_from_the_log():
    rows = gantt.cycle_spans(cycle_log(), EVENTS, cap=36)
    got = {}
    for name, a, b in rows:
        got.setdefault(name, []).append((a, b))
    assert got["plate"] == [(10, 23010)]
    assert got["lane 3"] == [(10, 23000)]
    assert got["audit"] == [(23020 + 150 * k, 23140 + 150 * k) for k in range(4)]
    assert got["lift"] == [(23700, 26200)]
    assert got["dealer key"] == [(26200, 26540)]
    assert got["dice"] == [(26540, 28040)]


def test_without_rfid_entries_the_audit_is_last_lane_to_walls():
    log = [e for e in cycle_log() if e[1] != "rfid"]
    rows = gantt.cycle_spans(log, EVENTS, cap=36)
    assert [(a, b) for n, a, b in rows if n == "audit"] == [(23000, 23700)]


def test_render_draws_rows_in_order_with_their_times():
    rows = gantt.cycle_spans(cycle_log(), EVENTS, cap=36)
    text = gantt.render(rows, 10, 28040, width=56, bound_end=27500)
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["0s", "5s"]
    names = [ln.split("  ")[0].strip() for ln in lines[1:]]
    assert names == list(gantt.ROWS) + ["bound"]
    plate = lines[1]
    assert plate.count("#") >= 44 and plate.rstrip().endswith("0.00- 23.00 s")
    assert "|" in lines[-1] and lines[-1].rstrip().endswith("27.49 s")
    with pytest.raises(ValueError):
        gantt.render(rows, 10, 10)


def test_no_cycle_in_the_events():
    with pytest.raises(ValueError):
        gantt.cycle_spans(cycle_log(), EVENTS[:-1], cap=36)
