"""The bench's MicroPython scripts run and report what the bench reads
(host_tools/bench/mp_ticks.py, mp_dice.py, mp_cpu.py). No figure is asserted: the
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


def test_mp_cpu_times_every_operation_on_the_twin():
    """mp_cpu.py (esp32_cpu.py runs it in QEMU) runs on the unix port too,
    from the same .mpy tree, and times each operation it names."""
    import json
    import subprocess

    from host_tools.bench import esp32_cpu
    from host_tools.image.mpenv import code_root, micropython_binary
    cwd, _code = code_root(False)
    p = subprocess.run([str(micropython_binary()), str(esp32_cpu.ROOT / "host_tools" / "bench"
                                                      / "mp_cpu.py"), str(cwd)],
                       cwd=str(cwd), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    line = [l for l in p.stdout.splitlines() if l.startswith("CPU {")]
    got = json.loads(line[0][4:])
    assert all(got[op] > 0 for op in esp32_cpu.OPS), got
    assert got["status"] > got["tick_idle"]      # an answer is JSON written; an idle tick little
