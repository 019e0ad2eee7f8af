"""config.json (firmware/config.py): the shipped file loads, and every kind
of mistake is refused with the field named. Configs are written to a file in
the current directory (no tempfile module on MicroPython) and removed."""

import json

from engine_core.rulesets import SettingError
from firmware import config
from firmware.fakes.hal import FIRMWARE_DIR, remove_temp, write_temp

PATH = FIRMWARE_DIR + "/config.json"
# Every timing and its allowed range (both ends included), as config.py has them.
RANGES = (
    ("tick_ms", 1, 100),
    ("plate_duty", 1, 1023),
    ("plate_rev_ms", 100, 10000),
    ("lane_idle_ms", 500, 60000),
    ("build_max_ms", 10000, 600000),
    ("lift_up_ms", 500, 20000),
    ("lift_down_ms", 500, 20000),
    ("dice_roll_ms", 0, 10000),
    ("key_debounce_ms", 5, 500),
    ("key_double_ms", 150, 2000),
    ("key_hold_ms", 500, 5000),
    ("draw_grace_ms", 0, 60000),
    ("rfid_reply_ms", 50, 5000),
    ("display_ack_ms", 20, 5000),
)


def shipped():
    with open(PATH) as f:
        return json.loads(f.read())


def load_text(text):
    name = write_temp(text)
    try:
        return config.load(name)
    finally:
        remove_temp(name)


def refused(data):
    """The error message of loading `data` (a dict) from a file."""
    return str(refusal(data))


def refusal(data):
    """The SettingError of loading `data` (a dict) from a file: its text
    says the key and the reason's word, a host says its facts in words."""
    try:
        load_text(json.dumps(data))
    except SettingError as e:
        f = e.facts
        assert str(e).startswith("config: %s %s" % (f.get("key", "-"), f["why"])), (str(e), f)
        return e
    raise AssertionError("accepted: %r" % (data,))


def facts(data):
    return refusal(data).facts


def test_the_shipped_config_loads():
    cfg = config.load(PATH)
    assert cfg.ruleset == "fuzhou144" and cfg.ruleset_name == "fuzhou144"
    assert (cfg.stacks, cfg.n_tiles, sum(cfg.tile_counts)) == (18, 144, 144)
    assert cfg.tile_sets == 2
    assert cfg.pins["plate_motor"] == 4
    assert cfg.pins["lane_feed"] == [6, 7, 15, 16]
    assert cfg.pins["keys"] == [1, 2, 41, 42]
    assert cfg.timings["tick_ms"] == 10
    assert cfg.timings["lane_idle_ms"] == 6000
    assert cfg.timings["display_ack_ms"] == 200
    for name, low, high in RANGES:
        assert low <= cfg.timings[name] <= high


def test_the_shipped_map_is_for_the_shipped_module():
    data = shipped()
    assert data["module"] == "ESP32-S3-MINI-1-N8"
    cfg = load_text(json.dumps(data))
    assert cfg.pins["buzzer"] == 45 and cfg.pins["lift_down"] == [14, 21, 3, 46]
    assert (cfg.pins["rfid_tx"], cfg.pins["rfid_rx"]) == (47, 48)
    assert (cfg.pins["display_tx"], cfg.pins["display_rx"]) == (43, 44)


def test_the_same_config_through_a_file_of_our_own():
    cfg = load_text(json.dumps(shipped()))
    assert cfg.timings["rfid_reply_ms"] == 400


def test_a_gpio_used_twice_names_both_fields():
    data = shipped()
    data["pins"]["buzzer"] = 4           # the plate motor's
    msg = refused(data)
    assert "pins.buzzer" in msg and "pins.plate_motor" in msg, msg
    data = shipped()
    data["pins"]["lift_down"][2] = 33    # lift_top[0]'s
    msg = refused(data)
    assert "pins.lift_top[0]" in msg and "pins.lift_down[2]" in msg, msg
    data = shipped()
    data["pins"]["keys"] = [1, 2, 41, 1]
    msg = refused(data)
    assert "pins.keys[0]" in msg and "pins.keys[3]" in msg, msg


def test_an_unusable_gpio_is_named():
    for bad in (19, 20, 22, 26, 32, 49, -1, 100):
        data = shipped()
        data["pins"]["rfid_rx"] = bad
        f = facts(data)
        assert f["key"] == "pins.rfid_rx" and bad in (f.get("gpio"), f.get("got")), f
    data = shipped()
    data["pins"]["lane_count"][3] = 20   # USB
    assert "pins.lane_count[3]" in refused(data)


def test_a_pin_that_is_not_a_number_is_named():
    for bad in ("4", 4.0, None, True, [4]):
        data = shipped()
        data["pins"]["plate_motor"] = bad
        assert "pins.plate_motor" in refused(data)


def test_a_missing_pin_is_named():
    data = shipped()
    del data["pins"]["display_rx"]
    msg = refused(data)
    assert "pins.display_rx" in msg and "missing" in msg, msg


def test_a_list_of_3_is_named():
    data = shipped()
    data["pins"]["lift_top"] = [33, 34, 35]
    assert facts(data) == {"why": "four_gpios", "key": "pins.lift_top"}
    data = shipped()
    data["pins"]["keys"] = 1             # a quad pin given as one number
    assert "pins.keys" in refused(data)


def test_an_unknown_pin_key_is_named():
    data = shipped()
    data["pins"]["fan"] = 30
    assert facts(data) == {"why": "unknown_key", "key": "pins.fan"}


def test_a_missing_timing_is_named():
    data = shipped()
    del data["timings"]["lane_idle_ms"]
    msg = refused(data)
    assert "timings.lane_idle_ms" in msg, msg


def test_a_timing_out_of_range_is_named():
    for name, low, high in RANGES:
        for bad in (low - 1, high + 1):
            data = shipped()
            data["timings"][name] = bad
            msg = refused(data)
            assert "timings." + name in msg, msg
        for ok in (low, high):           # both ends are allowed
            data = shipped()
            data["timings"][name] = ok
            assert load_text(json.dumps(data)).timings[name] == ok


def test_a_timing_that_is_not_a_whole_number_is_named():
    for bad in (10.0, "10", None, [10]):
        data = shipped()
        data["timings"]["tick_ms"] = bad
        assert "timings.tick_ms" in refused(data)


def test_an_unknown_timing_is_named():
    data = shipped()
    data["timings"]["lid_close_ms"] = 100
    assert facts(data) == {"why": "unknown_key", "key": "timings.lid_close_ms"}


def test_tile_sets_3_is_refused():
    for bad in (3, 0, "2", 2.0):
        data = shipped()
        data["tile_sets"] = bad
        assert "tile_sets" in refused(data)
    data = shipped()
    data["tile_sets"] = 1
    assert load_text(json.dumps(data)).tile_sets == 1


def test_true_is_not_a_number():
    data = shipped()
    data["tile_sets"] = True             # True == 1 in Python: still refused
    assert "tile_sets" in refused(data)
    data = shipped()
    data["timings"]["tick_ms"] = True
    assert "timings.tick_ms" in refused(data)
    data = shipped()
    data["pins"]["buzzer"] = True
    assert "pins.buzzer" in refused(data)


def test_a_bad_ruleset_is_named():
    data = shipped()
    data["ruleset"] = "fuzhou999"
    msg = refused(data)
    assert "ruleset" in msg and "fuzhou999" in msg, msg
    data = shipped()
    data["ruleset"] = {"base": "fuzhou144", "quad": -1}
    msg = refused(data)
    assert "quad" in msg, msg
    data = shipped()
    data["ruleset"] = {"base": "luoyuan144", "gold_method": "tail"}
    cfg = load_text(json.dumps(data))
    assert cfg.ruleset == {"base": "luoyuan144", "gold_method": "tail"}
    assert cfg.ruleset_name == "luoyuan144" and cfg.stacks == 18


def test_a_wrong_format_or_shape_is_named():
    data = shipped()
    data["format"] = 2
    assert "format" in refused(data)
    data = shipped()
    data["pins"] = []
    assert "pins" in refused(data)
    data = shipped()
    data["timings"] = None
    assert "timings" in refused(data)
    assert "top level" in refused([1, 2])


def test_bad_json_text_is_refused():
    text = json.dumps(shipped())[:-10]   # cut short
    try:
        load_text(text)
    except SettingError as e:
        assert e.facts["why"] == "not_json" and e.facts["other"], e.facts   # the parser's words
    else:
        raise AssertionError("accepted")


def test_a_missing_file_is_refused():
    remove_temp("_fw_no_such_config.json")
    try:
        config.load("_fw_no_such_config.json")
    except SettingError as e:
        assert e.facts["why"] == "unreadable", e.facts
        assert e.facts["key"] == "_fw_no_such_config.json", e.facts
    else:
        raise AssertionError("accepted")


# -- the pin map against the module (docs/hardware.md, The board) ------------

OCTAL = ("ESP32-S3-WROOM-1-N16R8", "ESP32-S3-WROOM-1-N8R8", "ESP32-S3-WROOM-1U-N16R8",
         "ESP32-S3-WROOM-2-N32R8V")
# The motor and buzzer outputs: the only signals a strapping pin may take.
DRIVES = ("plate_motor", "buzzer", "lane_feed", "lift_up", "lift_down")


def fields(data):
    """Every pin entry of `data` as (name, index or -1)."""
    out = []
    for name in sorted(data["pins"]):
        if isinstance(data["pins"][name], list):
            out += [(name, i) for i in range(4)]
        else:
            out.append((name, -1))
    return out


def label(field):
    name, i = field
    return "pins.%s[%d]" % (name, i) if i >= 0 else "pins." + name


def get(data, field):
    name, i = field
    return data["pins"][name][i] if i >= 0 else data["pins"][name]


def put(data, field, gpio):
    name, i = field
    if i >= 0:
        data["pins"][name][i] = gpio
    else:
        data["pins"][name] = gpio


def with_module(module, field=None, gpio=None):
    """The shipped config for `module`, with `field` moved to `gpio`."""
    data = shipped()
    data["module"] = module
    if field is not None:
        put(data, field, gpio)
    return data


def swapped(field, gpio):
    """The shipped config with `field` on `gpio` and the entry that had
    `gpio` on `field`'s old one: every GPIO still used once."""
    data = shipped()
    for other in fields(data):
        if get(data, other) == gpio:
            put(data, other, get(data, field))
    put(data, field, gpio)
    return data


def pin(why, key, gpio, module):
    """The facts of a pin refused by a rule of the module's."""
    return {"why": why, "key": key, "gpio": gpio, "got": module}


def test_a_missing_module_is_named():
    data = shipped()
    del data["module"]
    assert facts(data) == {"why": "missing", "key": "module"}


def test_an_unknown_module_is_named():
    for bad in ("ESP32-S3-WROOM-1-N99", "ESP32-S3-MINI-1-N", "MINI-1-N8", "ESP32-S3-MINI-1",
                "ESP32-S3-MINI-1-N8 0", "ESP32-S3-MINI-1-N8\nESP32-S3-MINI-1-N8", "", 8,
                True, ["ESP32-S3-MINI-1-N8"]):
        assert facts(with_module(bad)) == {"why": "module", "key": "module", "got": bad}


def test_a_module_is_its_printed_name_in_either_case():
    for name in ("ESP32-S3-MINI-1-N8", "esp32-s3-mini-1-n8", "ESP32-S3-MINI-1U-N8",
                 "ESP32-S3-MINI-1-N4R2", "ESP32-S3-MINI-1U-H4R2"):
        assert load_text(json.dumps(with_module(name))).pins["lift_top"] == [33, 34, 35, 36]


def test_the_flash_pins_are_refused_on_every_module():
    for module in ("ESP32-S3-MINI-1-N8", "ESP32-S3-WROOM-1-N4", OCTAL[0]):
        for gpio in range(26, 33):
            assert facts(with_module(module, ("plate_motor", -1), gpio)) == pin(
                "pin_flash", "pins.plate_motor", gpio, module)


def test_the_octal_psram_pins_are_refused_on_an_octal_module():
    for module in OCTAL:
        for gpio in range(33, 38):
            assert facts(with_module(module, ("plate_motor", -1), gpio)) == pin(
                "pin_psram", "pins.plate_motor", gpio, module)


def test_the_octal_psram_pins_are_taken_without_octal_psram():
    # No PSRAM (N8) and quad PSRAM (N4R2): GPIO33-37 carry lift_top and lift_bottom[0].
    for module in ("ESP32-S3-MINI-1-N8", "ESP32-S3-MINI-1-N4R2"):
        cfg = load_text(json.dumps(with_module(module)))
        assert cfg.pins["lift_top"] == [33, 34, 35, 36] and cfg.pins["lift_bottom"][0] == 37
    # A WROOM with quad or no PSRAM takes GPIO35 for the plate motor (checked
    # first); what it refuses is GPIO33, which it does not lead out.
    for module in ("ESP32-S3-WROOM-1-N8R2", "ESP32-S3-WROOM-1-N16"):
        assert facts(with_module(module, ("plate_motor", -1), 35)) == pin(
            "pin_absent", "pins.lift_top[0]", 33, module)


def test_a_wroom_module_has_no_gpio33_34():
    for gpio in (33, 34):
        assert facts(with_module("ESP32-S3-WROOM-1U-N8R2", ("plate_motor", -1), gpio)) == pin(
            "pin_absent", "pins.plate_motor", gpio, "ESP32-S3-WROOM-1U-N8R2")


def test_gpio47_48_are_refused_where_the_flash_runs_at_1v8():
    assert facts(with_module("ESP32-S3-WROOM-1-N16R16V")) == pin(
        "pin_1v8", "pins.rfid_tx", 47, "ESP32-S3-WROOM-1-N16R16V")
    assert facts(with_module("ESP32-S3-WROOM-2-N16R8V", ("plate_motor", -1), 48)) == pin(
        "pin_1v8", "pins.plate_motor", 48, "ESP32-S3-WROOM-2-N16R8V")
    # At 3.3 V they pass: N16R8 refuses the map only later, at GPIO33.
    assert facts(with_module("ESP32-S3-WROOM-1-N16R8")) == pin(
        "pin_psram", "pins.lift_top[0]", 33, "ESP32-S3-WROOM-1-N16R8")


def test_the_usb_pins_are_refused():
    for gpio in (19, 20):
        for field in (("plate_motor", -1), ("rfid_rx", -1), ("keys", 3)):
            assert facts(with_module("ESP32-S3-MINI-1-N8", field, gpio)) == pin(
                "pin_usb", label(field), gpio, "ESP32-S3-MINI-1-N8")


def test_a_gpio_the_chip_does_not_have_is_named():
    for gpio in (22, 23, 24, 25, 49, -1):
        assert facts(with_module("ESP32-S3-MINI-1-N8", ("lift_top", 2), gpio)) == {
            "why": "not_gpio", "key": "pins.lift_top[2]", "got": gpio}


def test_gpio0_is_refused_for_every_signal():
    data = shipped()
    for field in fields(data):
        assert facts(with_module(data["module"], field, 0)) == pin(
            "pin_boot", label(field), 0, data["module"])


def test_gpio3_45_46_take_only_motor_and_buzzer_outputs():
    taken = 0
    for gpio in (3, 45, 46):
        for field in fields(shipped()):
            data = swapped(field, gpio)
            if field[0] in DRIVES:
                assert get({"pins": load_text(json.dumps(data)).pins}, field) == gpio
                taken += 1
            else:
                assert facts(data) == pin("pin_strap", label(field), gpio, data["module"])
    assert taken == 3 * 14                 # 14 motor and buzzer outputs on each
