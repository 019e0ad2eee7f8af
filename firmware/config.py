"""The table's one configuration file (config.json): pin map, ruleset,
tile sets, timings. Validated as a whole: the first wrong field is named
with what was expected, and a table with a bad config does not move.
"""

import json

from engine_core.check import is_int
from engine_core.rulesets import RulesetError, load as load_ruleset

FORMAT = 1
# Tables are string and bytes constants: on a board they stay in flash
# (ROMFS), where tuples and dicts would take heap.

# ESP32-S3 GPIOs a module without PSRAM exposes (19/20 are USB).
# A bytes literal, 0-18, 21, 33-48.
GPIOS = (b"\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x15"
         b"\x21\x22\x23\x24\x25\x26\x27\x28\x29\x2a\x2b\x2c\x2d\x2e\x2f\x30")
SINGLE_PINS = "plate_motor plate_rotation buzzer display_tx display_rx rfid_tx rfid_rx"
QUAD_PINS = "lane_feed lane_count lift_up lift_down lift_top lift_bottom keys"
# name, low, high: every timing is a whole number of ms (or a duty).
TIMINGS = """tick_ms 1 100
plate_duty 1 1023
plate_rev_ms 100 10000
lane_idle_ms 500 60000
build_max_ms 10000 600000
lift_up_ms 500 20000
lift_down_ms 500 20000
dice_roll_ms 0 10000
key_debounce_ms 5 500
rfid_reply_ms 50 5000
display_ack_ms 20 5000"""


def timings():
    """[(name, low, high)] of every timing."""
    out = []
    for line in TIMINGS.split("\n"):
        name, low, high = line.split()
        out.append((name, int(low), int(high)))
    return out


class ConfigError(ValueError):
    pass


class Config:
    """Checked configuration; attributes mirror the JSON."""

    def __init__(self, data, path=None):
        self.path = path                       # `config_get` reads the file again
        self.ruleset = load_ruleset(data.get("ruleset"))
        self.tile_sets = data["tile_sets"]
        self.pins = data["pins"]
        for key, _, _ in timings():
            setattr(self, key, data["timings"][key])


def _need(cond, field, text):
    if not cond:
        raise ConfigError("config: %s %s" % (field, text))


def check(data, path=None):
    """A Config from parsed JSON, or ConfigError naming the first bad field."""
    _need(isinstance(data, dict), "(top level)", "must be an object")
    _need(data.get("format") == FORMAT, "format", "must be %d" % FORMAT)
    try:
        load_ruleset(data.get("ruleset"))
    except RulesetError as e:
        raise ConfigError("config: %s" % e)
    _need(is_int(data.get("tile_sets"), 1, 2), "tile_sets", "must be 1 or 2")
    pins = data.get("pins")
    _need(isinstance(pins, dict), "pins", "must be an object")
    used = {}
    singles = SINGLE_PINS.split()
    quads = QUAD_PINS.split()
    for name in singles + quads:
        _need(name in pins, "pins." + name, "is missing")
        value = pins[name]
        if name in quads:
            _need(isinstance(value, list) and len(value) == 4, "pins." + name,
                  "must be a list of 4 GPIO numbers (sides/seats 0..3)")
            fields = ["pins.%s[%d]" % (name, i) for i in range(4)]
        else:
            value = [value]
            fields = ["pins." + name]
        for field, gpio in zip(fields, value):
            _need(is_int(gpio, 0, 48) and gpio in GPIOS, field,
                  "must be a usable ESP32-S3 GPIO, not %r" % (gpio,))
            _need(gpio not in used, field, "GPIO %d is also %s" % (gpio, used.get(gpio)))
            used[gpio] = field
    for name in pins:
        _need(name in singles or name in quads, "pins." + name, "is not a known pin")
    given = data.get("timings")
    _need(isinstance(given, dict), "timings", "must be an object")
    known = timings()
    for name, low, high in known:
        _need(is_int(given.get(name), low, high), "timings." + name,
              "must be a whole number %d..%d, not %r" % (low, high, given.get(name)))
    for name in given:
        _need(name in [k[0] for k in known], "timings." + name, "is not a known timing")
    return Config(data, path)


def load(path):
    """Read and check a config file; ConfigError says what is wrong."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise ConfigError("config: cannot read %s (%s)" % (path, e))
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ConfigError("config: %s is not valid JSON (%s)" % (path, e))
    return check(data, path)


def read(path):
    """The config file as parsed JSON (for `config_get`; already checked)."""
    with open(path) as f:
        return json.loads(f.read())
