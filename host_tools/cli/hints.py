"""What to do next, said after a refusal or a mistyped word.

A refusal's code alone does not say what works next: `auth_failed` is a
wrong key, a lockout that passes by itself, or a challenge that expired;
`refused` is a table that is moving, or a reference set with a slot
empty. The firmware's message tells them apart (firmware/link/session.py,
service.py, controller/service_work.py), so the hint is chosen by both;
a message this table does not know gets its code's hint.
"""

import difflib
import json
import math
import re
from pathlib import Path

from host_tools.texts import LANGS, lang, t

_LOCKED = re.compile(r"locked after \d+ wrong answers? in a row: try again in (\d+) ms")
_AT_SWITCH = re.compile(r"lifter (\d) is already at its (up|down) switch")
_NO_KEY = re.compile(r"has no '?([\w.]+)'?")

# (code, what the firmware's message says, hint key): the first match wins.
_BY_MESSAGE = (
    ("auth_failed", re.compile(r"challenge"), "hint.auth_retry"),
    ("auth_failed", re.compile(r"has no service key"), "hint.auth_no_key"),
    ("busy", re.compile(r"refused during a hand"), "hint.busy_hand"),
    ("refused", re.compile(r"only when idle or stopped by a fault"), "hint.refused_still"),
    ("refused", re.compile(r"scan the walls first"), "hint.refused_scan"),
    ("refused", re.compile(r"has no tag"), "hint.refused_no_tag"),
    ("refused", re.compile(r"read the same tag"), "hint.refused_same_tag"),
)


def refusal_hint(e, command=None):
    """The next step that works after the table's refusal `e` (a
    LinkError), in the chosen language; None when there is none to say."""
    if e.code == "auth_failed":
        m = _LOCKED.search(e.message)
        if m:   # the right key too is refused until then: wait, the key is not wrong
            return t("hint.locked", s=max(1, math.ceil(int(m.group(1)) / 1000)))
    m = _AT_SWITCH.search(e.message)
    if e.code == "refused" and m:
        other = "lift_down" if m.group(2) == "up" else "lift_up"
        return t("hint.refused_at_switch", n=m.group(1), other=other)
    for code, pattern, key in _BY_MESSAGE:
        if e.code == code and pattern.search(e.message):
            return t(key)
    if e.code in ("not_found", "config_invalid"):
        m = _NO_KEY.search(e.message)
        near = m and did_you_mean(m.group(1), config_keys())
        if near:
            return near
    key = "hint." + e.code
    if key in LANGS[lang()].TEXTS:
        return t(key, command=command or "COMMAND")
    return None


def did_you_mean(word, choices):
    """'did you mean X?' for the nearest of `choices`, or None."""
    near = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return t("hint.did_you_mean", word=near[0]) if near else None


def config_keys():
    """{key as `config set` takes it: the default's value} of the
    firmware's config file and its telemetry settings (their kinds:
    firmware/link/mqttconf.py)."""
    from firmware.link import mqttconf
    from host_tools.image.mpenv import ROOT
    data = json.loads(Path(ROOT, "firmware", "config.json").read_text(encoding="utf-8"))
    keys = {}
    for head, value in data.items():
        keys[head] = value
        if isinstance(value, dict):
            keys.update(("%s.%s" % (head, leaf), v) for leaf, v in value.items())
    for leaf in mqttconf.KEYS:
        keys["mqtt." + leaf] = 1 if leaf == "port" else True if leaf in ("tls", "clear") else ""
    return keys


def unquoted_text(key, value):
    """True when `value` (json.loads of what was typed) is a number, true,
    false or null where `key` takes a text: the shell took the quotes
    away, or none were typed (`config set mqtt.password 1234`)."""
    return isinstance(config_keys().get(key), str) and not isinstance(value, str)
