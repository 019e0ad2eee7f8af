"""A refusal of the table's as mjctl prints it: what was refused and why,
in the technician's language (host_tools/texts/refusal.py says it from
its facts), its code, and the next step that works.
"""

import math

from host_tools.texts import LANGS, lang, t
from host_tools.texts.refusal import said


def line(e, command=None):
    """A LinkError refused by the table, as mjctl prints it: what was
    refused and why, its code, and the next step that works."""
    text = t("refusal.line", what=said(e.message, e.info), code=e.code)
    h = hint(e, command)
    return text + (t("punct.semicolon") + h if h else "")


# The next step that works, by the reason's word (the hint's text key);
# a word not here gets its code's (hint.CODE).
_HINTS = {
    "challenge": "hint.auth_retry",
    "keyless": "hint.auth_no_key",
    "wrong_key": "hint.auth_failed",
    "in_hand": "hint.busy_hand",
    "not_still": "hint.refused_still",
    "scan_first": "hint.refused_scan",
    "no_tag": "hint.refused_no_tag",
    "same_tag": "hint.refused_same_tag",
    "working": "hint.busy",
    "not_idle": "hint.not_idle",
    "no_hand": "hint.no_hand",
    "expired": "hint.session_expired",
    "bad_mac": "hint.auth_retry",
    "replay": "hint.auth_retry",
}


def hint(e, command=None):
    """The next step that works after the table's refusal `e` (a
    LinkError), in the chosen language; None when there is none to say."""
    from host_tools.cli.hints import config_keys, did_you_mean
    facts = e.info or {}
    why = facts.get("why")
    if why == "locked":           # the right key too is refused until then: wait, it is not wrong
        return t("hint.locked", s=max(1, math.ceil(int(facts.get("retry_ms", 1000)) / 1000)))
    if why == "at_switch":
        other = "lift_down" if facts.get("switch") == "up" else "lift_up"
        return t("hint.refused_at_switch", n=facts.get("n"), other=other)
    if why == "unknown_key" and isinstance(facts.get("key"), str):
        near = did_you_mean(facts["key"], config_keys())
        if near:
            return near
    table = LANGS[lang()].TEXTS
    key = _HINTS.get(why) if isinstance(why, str) else None
    if key is None:
        key = "hint." + e.code
    if key in table:
        return t(key, command=command or "COMMAND")
    return None
