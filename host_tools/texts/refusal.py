"""A refusal's reason in the technician's language, said from its facts.

The controller refuses with a code, an English text and the facts of its
reason: `why`, a word, and the fields that word takes (docs/protocol.md,
Errors). The words are said here from the language's table (`why.WORD`,
its fields filled in from the facts); a refusal without a word the table
knows is shown with the controller's English text, as it came. The same
words come from the firmware's config checker run on this PC (`mjctl
config validate`, `make flash CONFIG=...`: engine_core.rulesets.
SettingError) and in a boot fault's detail (config_invalid).
"""

import json

from host_tools.texts import LANGS, lang, t, word


def said(message, facts):
    """The reason of a refusal in the chosen language: from its facts when
    the language's table has its word, else `message` as it came."""
    why = (facts or {}).get("why")
    table = LANGS[lang()].TEXTS
    if not isinstance(why, str) or "why." + why not in table:
        return message
    fields = {k: _shown(k, v) for k, v in facts.items()}
    fields.setdefault("key", "")
    fields["names"] = ", ".join(_ruleset_names())
    try:
        if why == "pin_strap":        # which reset function the pin straps
            fields["strap"] = t("strap.%s" % facts.get("gpio"))
        if why == "proto":            # the side to update, in words
            fields["other"] = t("side.%s" % facts.get("other"))
        if why == "at_switch":
            fields["switch"] = t("label.top" if facts.get("switch") == "up" else "label.bottom")
        return table["why." + why].format(**fields)
    except (KeyError, IndexError, ValueError):   # a fact this word needs is absent
        return message


def _shown(name, value):
    """A fact as a sentence shows it: a table state or a request in the
    table's words, a value as JSON (a text in quotes, so "18" and 18
    differ)."""
    if name == "state":
        return word("state", value)
    if name == "op":
        return word("request", value)
    if name == "got":
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _ruleset_names():
    from engine_core.rulesets import names
    return names()
