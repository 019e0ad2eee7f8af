"""The bench's MicroPython scripts run and report what the bench reads
(host_tools/bench/mp_ticks.py, mp_dice.py). No figure is asserted: the
targets are the bench's report, the zero-allocation proof is
firmware/tests/test_mpy_loop_alloc.py's."""

from host_tools.bench import alloc, dice


def test_mp_ticks_reports_every_phase():
    figures, details = alloc.measure()
    assert set(details["phases"]) == {"idle", "building", "hand_unchanged_wall",
                                      "idle_telemetry_connected", "idle_telemetry_aside"}
    for ph in details["phases"].values():
        assert ph["ticks_measured"] > 0 and ph["bytes"] >= 0
        assert 0 <= ph["ticks_under_heap_lock"] <= ph["ticks"]
    assert figures["alloc_per_tick_bytes"] >= 0
    assert details["hand_event"]["events"] == 1 and details["hand_event"]["bytes"] > 0


def test_mp_dice_rolls_the_firmware_dice():
    figures, details = dice.measure(rolls=600)
    assert sum(details["faces"]) == 1200
    assert 0 <= figures["dice_chi2_p"] <= 1
