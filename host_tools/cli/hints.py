"""What to do next after a mistyped word: "did you mean" among the
commands and the config's keys, and a text the shell took the quotes
from. (The next step after a refusal of the table's: refusals.py.)
"""

import difflib
import json
from pathlib import Path

from host_tools.texts import t


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
