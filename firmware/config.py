"""The table's one configuration file (config.json): the board's ESP32-S3
module, pin map, ruleset, tile sets, timings. Validated as a whole, the pin
map against the module (docs/hardware.md, The board): the first wrong field
is named with what was expected, and a table with a bad config does not move.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

import json

from engine_core.tiles import is_int
from engine_core import rulesets
from engine_core.rulesets import SettingError

_FORMAT = const(1)
# The tables are tuples of constants: frozen into the image they stay in
# flash whole, so reading them takes no heap (docs/firmware.md, Memory).

# The ESP32-S3 modules a board may carry, by the name printed on the can,
# and what each takes from the pin map, as the sum of: 1 octal PSRAM on
# GPIO33-37; 2 the WROOM pinout, which leads out no GPIO33-34; 4 flash and
# PSRAM at 1.8 V, which puts GPIO47-48 at 1.8 V too. Every module keeps
# GPIO26-32 for its flash and PSRAM, and the link keeps USB (GPIO19-20).
# docs/hardware.md gives the rules and their sources.
MODULES = (("ESP32-S3-MINI-1-N8", 0),
           ("ESP32-S3-MINI-1-N4R2", 0),
           ("ESP32-S3-MINI-1-H4R2", 0),
           ("ESP32-S3-MINI-1U-N8", 0),
           ("ESP32-S3-MINI-1U-N4R2", 0),
           ("ESP32-S3-MINI-1U-H4R2", 0),
           ("ESP32-S3-WROOM-1-N4", 2),
           ("ESP32-S3-WROOM-1-H4", 2),
           ("ESP32-S3-WROOM-1-N8", 2),
           ("ESP32-S3-WROOM-1-N16", 2),
           ("ESP32-S3-WROOM-1-N4R2", 2),
           ("ESP32-S3-WROOM-1-N8R2", 2),
           ("ESP32-S3-WROOM-1-N16R2", 2),
           ("ESP32-S3-WROOM-1-N4R8", 3),
           ("ESP32-S3-WROOM-1-N8R8", 3),
           ("ESP32-S3-WROOM-1-N16R8", 3),
           ("ESP32-S3-WROOM-1-N16R16V", 7),
           ("ESP32-S3-WROOM-1U-N4", 2),
           ("ESP32-S3-WROOM-1U-H4", 2),
           ("ESP32-S3-WROOM-1U-N8", 2),
           ("ESP32-S3-WROOM-1U-N16", 2),
           ("ESP32-S3-WROOM-1U-N4R2", 2),
           ("ESP32-S3-WROOM-1U-N8R2", 2),
           ("ESP32-S3-WROOM-1U-N16R2", 2),
           ("ESP32-S3-WROOM-1U-N4R8", 3),
           ("ESP32-S3-WROOM-1U-N8R8", 3),
           ("ESP32-S3-WROOM-1U-N16R8", 3),
           ("ESP32-S3-WROOM-1U-N16R16V", 7),
           ("ESP32-S3-WROOM-2-N16R8V", 7),
           ("ESP32-S3-WROOM-2-N32R8V", 7),
           ("ESP32-S3-WROOM-2-N32R16V", 7))
SINGLE_PINS = ("plate_motor", "plate_rotation", "buzzer", "display_tx", "display_rx", "rfid_tx",
               "rfid_rx")
QUAD_PINS = ("lane_feed", "lane_count", "lift_up", "lift_down", "lift_top", "lift_bottom", "keys")
# The motor and buzzer outputs, as bits of their index in the pin names
# (SINGLE_PINS then QUAD_PINS): plate_motor 0, buzzer 2, lane_feed 7,
# lift_up 9, lift_down 10. The board holds each of them off, low, from
# power-up until the firmware drives it, so on GPIO45 or 46 one gives the
# strap the level it wants, and on GPIO3 (read only where an eFuse says
# so) always the same one; no other signal's level at reset is the
# board's to promise (docs/hardware.md, Strapping pins).
_DRIVES = const(0b11010000101)
# name, low, high: every timing is a whole number of ms (or a duty).
TIMINGS = (("tick_ms", 1, 100),
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
           ("display_ack_ms", 20, 5000))


class Config:
    """The checked values as plain attributes: the ruleset's as the firmware
    needs them (`ruleset` keeps the spec as written, for whoever needs the
    whole ruleset later), the pins, the tile sets; `timings` is the file's
    object as checked, {name: ms} (its names are not attribute names: on
    the board each name an attribute would be costs an interned name for
    good, docs/firmware.md, Memory). (The annotations are for the type
    checker; MicroPython keeps nothing of them.)"""
    path: str
    rules: "Rules"
    ruleset: object
    ruleset_name: str
    stacks: int
    n_tiles: int
    tile_counts: bytearray
    tile_sets: int
    pins: dict | None
    timings: dict


class Rules:
    """The ruleset's parameters engine_core.hand reads, as plain data."""


def _error(why, **facts):
    """The error to raise (`raise _error(...)`: the checker then knows the
    check stops there): the reason's word `why` and its facts, the field
    named as `key`, from which a host says it in the technician's
    language (SettingError)."""
    facts["why"] = why
    return SettingError(facts, "config")


def _field(name, i):
    return "pins.%s[%d]" % (name, i) if i >= 0 else "pins." + name


def check(data, path=None):
    """A Config from parsed JSON, or SettingError ("config: ...") naming the first bad field.
    Checks first and builds a message only on failure."""
    if not isinstance(data, dict):
        raise _error("not_object", key="(top level)")
    if data.get("format") != _FORMAT:
        raise _error("range", key="format", lo=_FORMAT, hi=_FORMAT, got=data.get("format"))
    try:
        rules = rulesets.load(data.get("ruleset"))
    except SettingError as e:      # the ruleset's: it names what is wrong
        raise SettingError(e.facts, "config")
    if not is_int(data.get("tile_sets"), 1, 2):
        raise _error("range", key="tile_sets", lo=1, hi=2, got=data.get("tile_sets"))
    module = data.get("module")
    pins = data.get("pins")
    _check_pins(pins, module, _module_flags(module))
    timings = data.get("timings")
    _check_timings(timings)
    return _config(data, rules, path)


def _module_flags(module):
    """The MODULES flags of the board's module, named in the config."""
    if module is None:
        raise _error("missing", key="module")
    if isinstance(module, str):
        key = module.upper()
        for name, bits in MODULES:
            if name == key:
                return bits
    raise _error("module", key="module", got=module)


def _check_pins(pins, module, flags):
    """Every pin named, each a GPIO the module leads out and may drive,
    none twice, no unknown name."""
    if not isinstance(pins, dict):
        raise _error("not_object", key="pins")
    names = SINGLE_PINS + QUAD_PINS
    n_single = len(SINGLE_PINS)
    owner = bytearray(b"\xff" * 49)       # GPIO -> 4 x name index + list position
    for k in range(len(names)):
        name = names[k]
        if name not in pins:
            raise _error("missing", key="pins." + name)
        quad = k >= n_single
        if quad and not (isinstance(pins[name], list) and len(pins[name]) == 4):
            raise _error("four_gpios", key="pins." + name)
        gpios = pins[name] if quad else [pins[name]]
        for i in range(len(gpios)):
            gpio = gpios[i]
            field = _field(name, i if quad else -1)
            if not is_int(gpio, 0, 48) or 22 <= gpio <= 25:
                raise _error("not_gpio", key=field, got=gpio)
            rule = _pin_rule(gpio, module, flags, (_DRIVES >> k) & 1)
            if rule is not None:
                raise _error(rule, key=field, gpio=gpio, got=module)
            if owner[gpio] != 0xFF:
                o = owner[gpio]
                other = _field(names[o >> 2], (o & 3) if (o >> 2) >= n_single else -1)
                raise _error("pin_twice", key=field, gpio=gpio, other=other)
            owner[gpio] = 4 * k + i
    for name in pins:
        if name not in names:
            raise _error("unknown_key", key="pins." + name)


def _pin_rule(gpio, module, flags, drives):
    """The word of the rule GPIO `gpio` breaks on this module
    (docs/hardware.md, The board, gives each), or None; `drives`: the pin
    drives a motor or the buzzer."""
    if 26 <= gpio <= 32:
        return "pin_flash"             # wired to the module's flash and PSRAM
    if gpio == 19 or gpio == 20:
        return "pin_usb"               # USB, which carries the link
    if 33 <= gpio <= 37 and flags & 1:
        return "pin_psram"             # the octal PSRAM's
    if 33 <= gpio <= 34 and flags & 2:
        return "pin_absent"            # a WROOM module leads out no GPIO33-34
    if gpio >= 47 and flags & 4:
        return "pin_1v8"               # at 1.8 V, as the module's flash and PSRAM are
    if gpio == 0:
        return "pin_boot"              # strapping: low at reset starts the download mode
    if (gpio == 3 or gpio == 45 or gpio == 46) and not drives:
        return "pin_strap"             # strapping: for motor or buzzer outputs only
    return None


def _check_timings(given):
    """Every known timing a whole number in its range; nothing else."""
    if not isinstance(given, dict):
        raise _error("not_object", key="timings")
    for name, low, high in TIMINGS:
        if not is_int(given.get(name), low, high):
            raise _error("range", key="timings." + name, lo=low, hi=high, got=given.get(name))
    for name in given:
        if not any(row[0] == name for row in TIMINGS):
            raise _error("unknown_key", key="timings." + name)


def _config(data, rules, path):
    """The checked values as a Config."""
    cfg = Config()
    cfg.rules = r = Rules()
    for key in ("name", "stacks", "n_tiles", "reserve_base", "gold_method", "final_group",
                "set_is_quad", "gold_in_reserve", "kong_exposed", "kong_concealed", "quad"):
        setattr(r, key, getattr(rules, key))
    cfg.path = path or ""                  # `config_get` reads the file again
    cfg.ruleset = data.get("ruleset")
    cfg.ruleset_name = rules.name
    cfg.stacks = rules.stacks
    cfg.n_tiles = rules.n_tiles
    cfg.tile_counts = rules.tile_counts()
    cfg.tile_sets = data["tile_sets"]
    cfg.pins = data["pins"]
    cfg.timings = data["timings"]          # every known timing, checked; nothing else
    return cfg


def load(path):
    """Read and check a config file; SettingError ("config: ...") says what is wrong."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise _error("unreadable", key=path, other=str(e))
    try:
        data = json.loads(text)
    except ValueError as e:
        raise _error("not_json", key=path, other=str(e))
    return check(data, path)
