"""Every text a technician or a parlour owner reads, in each language.

One table per language: `en.TEXTS` and `zh.TEXTS` map a key to a format
string (`str.format` fields by name). The fault names, causes and fixes in
English are the firmware's own table (firmware/faults.py); their Simplified
Chinese is `zh.FAULTS`, by code. A test checks that both languages have
every key and every fault code.

    from host_tools.texts import t, set_lang
    set_lang("zh")
    t("state.idle")            # -> "空闲"
    t("part.lane", n=2)        # -> "2号牌道"

The language comes from `--lang`, else from `LANG`/`LC_ALL`/`LC_MESSAGES`
(a zh_* locale gives Chinese), else English.

What the link names (states, phases, a lifter's motion, a hand's ops) is
shown through `word(kind, name)`: the table's words for it, or the link's
own name when a newer firmware sends one the table does not know.
"""

import os
import re

from host_tools.texts import en, zh

CJK = re.compile("[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")   # Chinese characters and punctuation

LANGS = {"en": en, "zh": zh}
_lang = ["en"]


def lang_from_env(environ=None):
    """'zh' when the locale asks for Chinese (zh_CN.UTF-8, zh_TW, zh), else 'en'."""
    environ = os.environ if environ is None else environ
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def set_lang(lang):
    """Choose the language of every later `t()`; None means from the locale."""
    if lang is None:
        lang = lang_from_env()
    if lang not in LANGS:
        raise ValueError("unknown language %r (choose from: %s)" % (lang, ", ".join(sorted(LANGS))))
    _lang[0] = lang
    _argparse_words(LANGS[lang])


def _argparse_words(table):
    """argparse's own words (usage, its headings, its errors) from the
    language's table (`ARGPARSE`, by argparse's English; English has none).
    argparse looks each up through its module's `_` and `ngettext` at the
    moment it needs it, and CPython ships no catalogue of them, so those
    two names are pointed at the table (they go back to gettext's for
    English)."""
    import argparse
    import gettext
    words = getattr(table, "ARGPARSE", None)
    if not words:
        argparse._, argparse.ngettext = gettext.gettext, gettext.ngettext
        return
    argparse._ = lambda text: words.get(text, text)
    argparse.ngettext = lambda one, many, n: words.get(one if n == 1 else many,
                                                       one if n == 1 else many)


def lang():
    return _lang[0]


def t(key, /, **fields):
    """The text for `key` in the chosen language, its fields filled in.
    A key missing from the table is a programming error (KeyError); the
    completeness test keeps both tables whole."""
    return LANGS[_lang[0]].TEXTS[key].format(**fields)


def word(kind, name):
    """A name the link sends (`kind` "state", "build", "phase", "lift",
    "op", "alert", "view.phase") in the chosen language; a name the tables
    do not know is shown as the link sent it."""
    text = LANGS[_lang[0]].TEXTS.get("%s.%s" % (kind, name))
    return str(name) if text is None else text


def pad(text, width):
    """`text` left-aligned in `width` terminal cells: a Chinese character
    takes two cells (str's own padding counts characters)."""
    from rich.cells import cell_len
    return text + " " * max(0, width - cell_len(text))


def reason_texts(reason):
    """(cause, fix) of a power_lost `reason` (firmware/controller/resume.py)
    in the chosen language: fix None where the fault's own fix says it
    (a hand lost), cause None for a reason the tables do not know."""
    table = LANGS[_lang[0]].TEXTS
    return table.get("resume.%s" % reason), table.get("resume_fix.%s" % reason)


def fault_texts(code):
    """(name, cause, fix) of a fault code in the chosen language; the
    English ones are the firmware's table. The Chinese name keeps the
    firmware's name after it: it is what `--fault`, the logs and
    docs/faults.md say."""
    from host_tools.texts import faults as fault_table
    if code not in fault_table.codes():
        return (t("fault.unknown.name"), t("fault.unknown.cause", code=code),
                t("fault.unknown.fix"))
    name, cause, fix = fault_table.describe(code)
    if _lang[0] == "zh":
        zname, cause, fix = zh.FAULTS[code]
        name = "%s %s" % (zname, name)
    return name, cause, fix


def duration(seconds, hours=False):
    """A span of time in words of the chosen language, to the unit that
    matters at its size: 45 s, 3 min, 2 h 14 min, 1 d 3 h (hours: in
    hours however long, as a day's total is read). The page's page.js
    says them the same way."""
    s = max(0, int(seconds or 0))
    if s < 60:
        return t("fleet.dur.s", s=s)
    if s < 3600:
        return t("fleet.dur.m", m=s // 60)
    if s < 86400 or hours:
        return t("fleet.dur.hm", h=s // 3600, m=s % 3600 // 60)
    return t("fleet.dur.dh", d=s // 86400, h=s % 86400 // 3600)


def fault_short(code):
    """A fault's name as the parlour's owner reads it, in the chosen
    language alone: the Chinese name, or the firmware's with spaces."""
    from host_tools.texts import faults as fault_table
    if code not in fault_table.codes():
        return t("fault.unknown.name")
    if _lang[0] == "zh":
        return zh.FAULTS[code][0]
    return fault_table.describe(code)[0].replace("_", " ")
