"""`make bench`: every performance figure next to its target.

    python -m host_tools.bench [--only GROUP[,GROUP]] [--source]
                               [--runs-cpython N] [--runs-micropython N] [--no-gantt]

One module per group of figures, each a few small measuring functions:

    cycle.py    cycle_overhead, virtual_speedup (one cycle on five seeds
                against the virtual table's lower bound) and the Gantt of one
                cycle (gantt.py); wait_between_hands_s, lift_plus_dice_s
                (hands played by virtual players on a two-set table)
    heap.py     image_heap_cycle_bytes, image_heap_hand_bytes,
                image_heap_resume_bytes, image_heap_service_bytes (the
                smallest heap in which a cycle, a hand, a hand cut by the
                power and resumed, a technician's visit complete on the twin),
                mpy_deploy_heap_cycle_bytes (the cycle from .mpy files);
                image_heap_*_telemetry_bytes, the four with the telemetry
                on and a real broker (telemetry_heap.py)
    fragmentation.py  image_soak_min_free_block_bytes (50 hands with faults
                and a service visit in a 64 KB heap on the twin)
    alloc.py    alloc_per_tick_bytes (mp_ticks.py under MicroPython:
                control ticks under heap_lock and counted with the GC off)
    link.py     link_rtt_p50_ms, link_rtt_p99_ms, link_requests_per_s,
                image_boot_to_ready_ms (the virtual table in real time)
    sizes.py    image_frozen_bytes (the firmware frozen into the twin),
                mpy_total_bytes (what make deploy puts on a board)
    replay.py   replay_ms_cpython, replay_ms_micropython,
                micropython_hand_heap_bytes (engine_core/tests/bench_replay)
    dice.py     dice_chi2_p (mp_dice.py: the firmware's dice, 600,000 rolls)
    esp32.py    esp32_app_bytes, esp32_heap_boot_used_bytes,
                esp32_heap_{cycle,hand,resume}_peak_bytes,
                esp32_heap_total_bytes, esp32_cycle_wall_s (the board's
                QEMU image on a virtual table, heap.py's runs), and from
                esp32_cpu.py (mp_cpu.py under QEMU's -icount)
                esp32_{tick,status,hand_event}_instructions; only where
                the vendored ESP32-S3 kit is

targets.py holds every figure's label, unit and target; stats.py the pure
helpers (percentile, chi-square, the searches). docs/performance.md says
what each figure means, how it is measured and what bounds it.

Prints a table, figures next to targets with PASS or OVER (or "-" for a
figure reported without a target), a few lines on how each came about and
the timeline of one cycle, and writes bench.json in the project root
(figures, targets, verdicts, and each group's details and runtime). It is a
report: the exit code is 0 even when a figure is over its target; it is 1
only when a run failed (a group could not measure its figures).
"""


def main(argv=None):
    from host_tools.bench.cli import main as run
    return run(argv, description=__doc__.split("\n")[0])
