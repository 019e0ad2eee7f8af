"""The telemetry's settings (docs/fleet.md): `config_set mqtt.KEY VALUE`
in a service session checks the value and writes the secret `mqtt.json`
(hal.secret: encrypted NVS on a production board, with the service key),
which link/telemetry.py reads (`settings`) when the table starts and at
each connect."""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

import json

from engine_core.rulesets import SettingError

# The settings the telemetry needs, each a non-empty text.
_NEEDED = const(("host", "site", "table", "user", "password"))
# What `config_set mqtt.KEY VALUE` may set, each with its check (public:
# mjctl suggests one of them for a mistyped key).
KEYS = const(("host", "port", "site", "table", "user", "password", "wifi_ssid",
              "wifi_password", "tls", "clear"))


def configure(hal, key, value):
    """config_set of `mqtt.LEAF`: checked, written into the secret
    `mqtt.json` whole (hal.set_secret: atomic). `mqtt.clear true` empties
    it. A change applies when the telemetry next starts: when the session
    ends if it ran before it, else at the table's next start.
    SettingError if refused (a text's facts carry no value: some are secret)."""
    leaf = key[5:]
    if leaf not in KEYS:
        raise SettingError({"why": "unknown_key", "key": key}, "config")
    if leaf == "port":
        if type(value) is not int or not 0 < value < 65536:
            raise SettingError({"why": "range", "key": key, "lo": 1, "hi": 65535, "got": value},
                               "config")
    elif leaf in ("tls", "clear"):
        if type(value) is not bool:
            raise SettingError({"why": "bool", "key": key, "got": value}, "config")
    elif type(value) is not str or len(value) > 64:
        raise SettingError({"why": "text", "key": key, "hi": 64}, "config")
    elif leaf == "host" and not _ipv4(value):
        # An address, not a name: a lookup would stall the table.
        raise SettingError({"why": "ipv4", "key": key}, "config")
    elif leaf in ("site", "table") and not _name(value):
        raise SettingError({"why": "name", "key": key}, "config")
    conf = {}
    try:
        with hal.secret("mqtt.json") as f:
            conf = json.load(f)
    except (OSError, ValueError):
        pass
    if leaf == "clear":
        if value:
            conf = {}
    else:
        conf[leaf] = value
    hal.set_secret("mqtt.json", (json.dumps(conf),))
    if leaf.endswith("password"):
        value = "***"
    return {"ok": True, "key": key, "value": value, "restart": True}


def _ipv4(s):
    parts = s.split(".")
    if len(parts) != 4:
        return False
    for p in parts:
        if not p.isdigit() or len(p) > 3 or int(p) > 255:
            return False
    return True


def _name(s):
    if not 0 < len(s) <= 32:
        return False
    for ch in s:
        if not (ch.isalpha() or ch.isdigit() or ch in "_-") or ord(ch) > 127:
            return False
    return True


def settings(hal):
    """The settings as stored, or None when absent, not JSON or short of
    a needed key."""
    try:
        with hal.secret("mqtt.json") as f:
            conf = json.load(f)
    except (OSError, ValueError):
        return None
    for k in _NEEDED:
        if type(conf.get(k)) is not str or not conf[k]:
            return None
    return conf


def root(conf):
    """The table's topics' root: parlour/SITE/table/TABLE/."""
    return "parlour/%s/table/%s/" % (conf["site"], conf["table"])
