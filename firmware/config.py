"""The table's one configuration file (config.json): pin map, ruleset,
tile sets, timings. Validated as a whole: the first wrong field is named
with what was expected, and a table with a bad config does not move.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

import json

from engine_core.tiles import is_int
from engine_core import rulesets

_FORMAT = const(1)
# Tables are string and bytes constants: on a board they stay in flash
# (ROMFS), where tuples and dicts would take heap.

# ESP32-S3 GPIOs a module without PSRAM exposes (19/20 are USB).
# A bytes literal, 0-18, 21, 33-48.
_GPIOS = const(b"\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x15"
         b"\x21\x22\x23\x24\x25\x26\x27\x28\x29\x2a\x2b\x2c\x2d\x2e\x2f\x30")
_SINGLE_PINS = const("plate_motor plate_rotation buzzer display_tx display_rx rfid_tx rfid_rx")
_QUAD_PINS = const("lane_feed lane_count lift_up lift_down lift_top lift_bottom keys")
# name, low, high: every timing is a whole number of ms (or a duty).
_TIMINGS = const("""tick_ms 1 100
plate_duty 1 1023
plate_rev_ms 100 10000
lane_idle_ms 500 60000
build_max_ms 10000 600000
lift_up_ms 500 20000
lift_down_ms 500 20000
dice_roll_ms 0 10000
key_debounce_ms 5 500
key_double_ms 150 2000
key_hold_ms 500 5000
draw_grace_ms 0 60000
rfid_reply_ms 50 5000
display_ack_ms 20 5000""")


def timings():
    """[(name, low, high)] of every timing."""
    out = []
    for line in _TIMINGS.split("\n"):
        name, low, high = line.split()
        out.append((name, int(low), int(high)))
    return out


class Config:
    """The checked values as plain attributes: the ruleset's as the firmware
    needs them (`ruleset` keeps the spec as written, for whoever needs the
    whole ruleset later), the pins, the tile sets; `timings` is the file's
    object as checked, {name: ms} (its names are not attribute names: on
    the board each name an attribute would be costs an interned name for
    good, docs/firmware.md, Memory). No methods
    on purpose: nothing then ties the object to this module, which the
    firmware drops from its heap after boot. (The annotations are for the
    type checker; MicroPython keeps nothing of them.)"""
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
    """The ruleset's parameters engine_core.hand reads, as plain data (the
    Ruleset class lives in a module the firmware drops after boot)."""


def _error(text):
    """The error to raise (`raise _error(...)`: the checker then knows the
    check stops there). `text` names the field: whole messages as long
    literals, not a field and a short text (each literal of ten characters
    or fewer is an interned name, for good: docs/firmware.md, Memory)."""
    return ValueError("config: %s" % text)


def _field(name, i):
    return "pins.%s[%d]" % (name, i) if i >= 0 else "pins." + name


def check(data, path=None):
    """A Config from parsed JSON, or ValueError ("config: ...") naming the first bad field.
    Checks first and builds a message only on failure: at boot the heap is
    at its fullest, and garbage strings fragment it."""
    if not isinstance(data, dict):
        raise _error("(top level) must be an object")
    if data.get("format") != _FORMAT:
        raise _error("format must be %d" % _FORMAT)
    try:
        rules = rulesets.load(data.get("ruleset"))
    except ValueError as e:        # the ruleset's: it names what is wrong
        raise ValueError("config: %s" % e)
    if not is_int(data.get("tile_sets"), 1, 2):
        raise _error("tile_sets must be 1 or 2")
    pins = data.get("pins")
    if not isinstance(pins, dict):
        raise _error("pins must be an object")
    names = (_SINGLE_PINS + " " + _QUAD_PINS).split()
    n_single = len(_SINGLE_PINS.split())
    owner = bytearray(b"\xff" * 49)       # GPIO -> 4 x name index + list position
    for k in range(len(names)):
        name = names[k]
        if name not in pins:
            raise _error("pins.%s is missing" % name)
        quad = k >= n_single
        if quad and not (isinstance(pins[name], list) and len(pins[name]) == 4):
            raise _error("pins.%s must be a list of 4 GPIO numbers (sides/seats 0..3)" % name)
        gpios = pins[name] if quad else [pins[name]]
        for i in range(len(gpios)):
            gpio = gpios[i]
            if not (is_int(gpio, 0, 48) and gpio in _GPIOS):
                raise _error("%s must be a usable ESP32-S3 GPIO, not %r"
                             % (_field(name, i if quad else -1), gpio))
            if owner[gpio] != 0xFF:
                o = owner[gpio]
                other = _field(names[o >> 2], (o & 3) if (o >> 2) >= n_single else -1)
                raise _error("%s GPIO %d is also %s" % (_field(name, i if quad else -1), gpio, other))
            owner[gpio] = 4 * k + i
    for name in pins:
        if name not in names:
            raise _error("pins.%s is not a known pin" % name)
    given = data.get("timings")
    if not isinstance(given, dict):
        raise _error("timings must be an object")
    known = timings()
    for name, low, high in known:
        if not is_int(given.get(name), low, high):
            raise _error("timings.%s must be a whole number %d..%d, not %r"
                         % (name, low, high, given.get(name)))
    known_names = [k[0] for k in known]
    for name in given:
        if name not in known_names:
            raise _error("timings.%s is not a known timing" % name)
    # Good: the values as plain attributes.
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
    cfg.pins = pins
    cfg.timings = given            # every known timing, checked; nothing else
    return cfg


def load(path):
    """Read and check a config file; ValueError ("config: ...") says what is wrong."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise ValueError("config: cannot read %s (%s)" % (path, e))
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ValueError("config: %s is not valid JSON (%s)" % (path, e))
    return check(data, path)
