"""`status`, `faults` and `config_get` of an idle controller."""

import pytest

LIFTER_STATES = ("bottom", "rising", "top", "lowering", "unknown")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def test_status_in_idle_has_every_field_with_its_type(target):
    st = target.status()
    assert st["ok"] is True and st["op"] == "status"
    assert st["state"] == "idle"
    assert isinstance(st["phase"], str) and st["phase"]
    assert _is_int(st["cycles"]) and st["cycles"] == 0
    assert st["fault"] is None
    assert _is_int(st["uptime"]) and st["uptime"] >= 0
    assert st["dealer"] is None or (_is_int(st["dealer"]) and 0 <= st["dealer"] <= 3)
    assert st["dice"] is None                           # no roll since boot
    assert st["tiles_per_side"] == [0, 0, 0, 0]
    assert st["lanes"] == [0, 0, 0, 0]
    assert isinstance(st["lifters"], list) and len(st["lifters"]) == 4
    assert all(l in LIFTER_STATES for l in st["lifters"]), st["lifters"]
    link = st["link"]
    assert set(link) == {"requests", "errors", "dropped", "overruns", "garbage", "bad_crc"}, link
    assert all(_is_int(v) and v >= 0 for v in link.values()), link
    heap = st["heap"]
    assert set(heap) == {"alloc", "free"} and all(_is_int(v) and v > 0 for v in heap.values())
    rt = target.link.hello()["runtime"]          # what it runs on: hello's, not status's
    assert rt["bits"] == 32 and isinstance(rt["frozen"], bool), rt      # an ESP32, or its twin
    assert isinstance(rt["micropython"], str) and rt["micropython"].count(".") == 2, rt
    assert rt["port"] in ("esp32", "unix") and rt["entropy"] in ("rf", "no_rf", "seeded", "host")
    extra = set(st) - {"ok", "op", "state", "phase", "cycles", "fault", "uptime", "dealer",
                       "dice", "tiles_per_side", "lanes", "lifters", "link", "heap"}
    assert not extra, extra


@pytest.mark.needs_table
def test_the_virtual_table_runs_the_firmware_frozen_as_the_board_has_it(target):
    """What the firmware reports of itself in `hello`:
    the image's build, frozen code, 32-bit objects, the pinned MicroPython,
    the port it runs on (the 32-bit twin's unix port, or the esp32 port in
    QEMU with --qemu) and the virtual table's seeded generator."""
    hello = target.link.hello()
    assert hello["build"].startswith("image-"), hello
    want = {"bits": 32, "frozen": True, "micropython": "1.28.0", "entropy": "seeded"}
    want.update({"port": "esp32", "chip": "ESP32S3"} if target.kind == "qemu"
                else {"port": "unix", "chip": None})
    assert hello["runtime"] == want


@pytest.mark.needs_table
def test_idle_status_agrees_with_the_virtual_table(target):
    st = target.status()
    assert st["lifters"] == ["bottom"] * 4
    later = target.wait_virtual(st["uptime"] + 500)      # the clock is the table's
    assert later["uptime"] >= st["uptime"] + 500
    assert later["uptime"] <= target.table.now
    assert target.output_changes() == []          # nothing moves in idle
    assert all(v == 0 for v in target.table.outputs.values())


def test_faults_and_config_get_in_idle(target):
    f = target.request("faults")
    assert f["faults"] == [] and f["total"] == 0
    keys = target.request("config_get")["keys"]
    assert {"pins", "timings", "ruleset", "tile_sets"} <= set(keys), keys
    tick = dict(target.request("config_get", key="timings")["value"])["tick_ms"]
    assert _is_int(tick) and tick > 0


@pytest.mark.needs_table
@pytest.mark.table(seed=2, faults=["sensor_stuck:lift_top0:1"])
def test_status_shows_the_active_fault_with_the_documented_fields(target):
    """docs/protocol.md: `fault` is the active fault {"code", "name", "t", "detail"}."""
    st = target.wait_status(lambda st: st["fault"], "a fault found at boot", 5000)
    assert st["state"] == "fault"
    assert set(st["fault"]) == {"code", "name", "t", "detail"}, st["fault"]
    newest = target.request("faults", n=1)["faults"][0]
    assert st["fault"] == newest, (st["fault"], newest)
