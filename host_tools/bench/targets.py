"""Every figure of `make bench`: its label, unit and target, and the
verdict of a value against it. Pure. "twin": the firmware frozen into the
unix port built 32-bit, as the board's image has it (docs/performance.md)."""

KB = 1024

# (key in bench.json, group, label, unit, op, target); op None: reported,
# no target. The target of wait_between_hands_s is lift_plus_dice_s + 0.5,
# set once lift_plus_dice_s is known (with_derived).
FIGURES = (
    ("cycle_overhead", "cycle", "cycle time / lower bound - 1, median", "ratio", "<=", 0.03),
    ("wait_between_hands_s", "hands", "wait between hands (2 sets), worst", "s", "<=", None),
    ("lift_plus_dice_s", "hands", "mechanical minimum: lift + dice", "s", None, None),
    ("alloc_per_tick_bytes", "alloc", "heap allocated per control tick", "B/tick", "<=", 0),
    ("link_rtt_p50_ms", "link", "link round trip (status), p50", "ms", None, None),
    ("link_rtt_p99_ms", "link", "link round trip (status), p99", "ms", "<=", 5.0),
    ("link_requests_per_s", "link", "link requests per second (one host)", "/s", None, None),
    ("mpy_total_bytes", "size", ".mpy files of a development deploy", "B", "<=", 120 * KB),
    ("image_frozen_bytes", "size", "twin: the frozen firmware's code and data", "B", None, None),
    ("virtual_speedup", "cycle", "virtual s per wall s (a full cycle)", "x", ">=", 50.0),
    ("replay_ms_cpython", "replay", "CPython: replay one hand, median", "ms", "<=", 5.0),
    ("replay_ms_micropython", "replay", "MicroPython: replay one hand, median", "ms", "<=", 50.0),
    ("micropython_hand_heap_bytes", "replay", "MicroPython: heap of one hand's state", "B",
     "<=", 4096),
    ("image_boot_to_ready_ms", "link", "twin: boot to hello answered", "ms", None, None),
    ("dice_chi2_p", "dice", "dice chi-square p (600k rolls)", "p", ">=", 0.01),
    ("image_heap_cycle_bytes", "heap", "twin: smallest heap for a cycle", "B", "<=", 48 * KB),
    ("image_heap_hand_bytes", "heap", "twin: smallest heap for a whole hand", "B", "<=", 48 * KB),
    ("image_heap_resume_bytes", "heap", "twin: smallest heap for a hand cut and resumed", "B",
     "<=", 48 * KB),
    ("image_heap_recut_bytes", "heap", "twin: smallest heap for a build and a lift cut, resumed",
     "B", "<=", 48 * KB),
    ("image_heap_service_bytes", "heap", "twin: smallest heap for a service visit", "B",
     "<=", 48 * KB),
    ("mpy_deploy_heap_cycle_bytes", "heap", ".mpy deploy, 32-bit: heap for a cycle", "B",
     "<=", 128 * KB),
    ("image_heap_cycle_telemetry_bytes", "heap", "twin, telemetry on: heap for a cycle", "B",
     "<=", 48 * KB),
    ("image_heap_hand_telemetry_bytes", "heap", "twin, telemetry on: heap for a whole hand",
     "B", "<=", 48 * KB),
    ("image_heap_resume_telemetry_bytes", "heap", "twin, telemetry on: heap for a hand resumed",
     "B", "<=", 48 * KB),
    ("image_heap_recut_telemetry_bytes", "heap",
     "twin, telemetry on: heap for a build and a lift cut, resumed", "B", "<=", 48 * KB),
    ("image_heap_service_telemetry_bytes", "heap", "twin, telemetry on: heap for a service visit",
     "B", "<=", 48 * KB),
    ("image_soak_heap_bytes", "frag", "twin: the soak's heap", "B", None, None),
    ("image_soak_min_free_block_bytes", "frag", "twin, 50 hands: least free block",
     "B", ">=", 16 * KB),
    ("esp32_app_bytes", "esp32", "esp32 port: the app against its 3 MB partition", "B",
     "<=", 3 * KB * KB),
    ("esp32_heap_boot_used_bytes", "esp32", "esp32 port (QEMU): heap used after the boot", "B",
     None, None),
    ("esp32_heap_cycle_peak_bytes", "esp32", "esp32 port (QEMU): heap in use, a cycle's peak",
     "B", None, None),
    ("esp32_heap_hand_peak_bytes", "esp32", "esp32 port (QEMU): heap in use, a hand's peak",
     "B", None, None),
    ("esp32_heap_resume_peak_bytes", "esp32",
     "esp32 port (QEMU): heap in use, a resumed hand's peak", "B", None, None),
    ("esp32_heap_service_peak_bytes", "esp32",
     "esp32 port (QEMU): heap in use, a service visit's peak", "B", None, None),
    ("esp32_heap_total_bytes", "esp32", "esp32 port (QEMU): the heap's largest size in the runs",
     "B", "<=", 64000),
    ("esp32_cycle_wall_s", "esp32", "esp32 port: a cycle's wall time in QEMU", "s", None, None),
    ("esp32_tick_instructions", "esp32", "esp32 port (QEMU -icount): a build's control tick",
     "instr", None, None),
    ("esp32_status_instructions", "esp32", "esp32 port (QEMU -icount): one status answered",
     "instr", None, None),
    ("esp32_hand_event_instructions", "esp32", "esp32 port (QEMU -icount): one hand event",
     "instr", None, None),
)
GROUPS = tuple(dict.fromkeys(f[1] for f in FIGURES))
WAIT_MARGIN_S = 0.5


def targets(figures):
    """{key: {"op", "value"}} for every figure with a target; the wait's
    follows lift_plus_dice_s (None while that is unknown)."""
    out = {}
    for key, _group, _label, _unit, op, target in FIGURES:
        if op is None:
            continue
        if key == "wait_between_hands_s":
            lift = figures.get("lift_plus_dice_s")
            target = None if lift is None else round(lift + WAIT_MARGIN_S, 3)
        out[key] = {"op": op, "value": target}
    return out


def verdict(value, target):
    """"PASS" / "OVER" against {"op", "value"}; "-" without a target,
    "n/a" when the value (or the target) is missing."""
    if target is None:
        return "-"
    if value is None or target["value"] is None:
        return "n/a"
    op, t = target["op"], target["value"]
    if value != value:                     # NaN
        return "n/a"
    ok = {"<=": value <= t, ">=": value >= t, "==": value == t}[op]
    return "PASS" if ok else "OVER"


_FORMATS = {"B/tick": "%g B", "ratio": "%.4f", "s": "%.2f s", "ms": "%.3f ms",
            "x": "%.0fx", "/s": "%.0f /s", "p": "%.3f"}


def fmt(value, unit):
    if value is None:
        return "-"
    if unit == "bool":
        return "yes" if value else "no"
    if unit == "B":
        return "%d B" % value if value < 10 * KB else "%d B (%.1f KB)" % (value, value / KB)
    if unit == "instr":
        return "{:,} instr".format(value)
    return _FORMATS[unit] % value if unit in _FORMATS else str(value)


def fmt_target(target, unit):
    if target is None:
        return "(report)"
    if target["value"] is None:
        return "n/a"
    op = {"<=": "<=", ">=": ">=", "==": ""}[target["op"]]
    v = target["value"]
    if unit == "B" and v >= 10 * KB:
        text = "%d KB" % (v // KB)
    elif unit in ("ratio", "p", "s", "ms", "x"):
        text = "%g%s" % (v, {"s": " s", "ms": " ms", "x": "x"}.get(unit, ""))
    else:
        text = fmt(v, unit)
    return (op + " " + text).strip()
