"""Every mjctl command of docs/technician.md's table, typed under `--lang zh`
against a served virtual table: each prints Chinese, with no English word
but what a technician types or reads as a name (commands, config keys,
the link's codes and a fault's English name, units). The refusals
(test_refusals_zh.py), argparse's words (test_argparse_words.py), the
guide's mistakes (test_guide_samples.py) and `selftest` (test_texts.py)
are checked beside it."""

import re

import pytest

from host_tools.cli import mjctl

from host_tools import texts
from host_tools.tests.mjctl_cli_helpers import (  # noqa: F401  (table: a fixture)
    run, still, table)
from host_tools.tests.test_texts import english_words

# (the command's words, whether it needs the key); `selftest` in Chinese,
# with a fault, is test_texts.py's (11 s of the served table's time here)
COMMANDS = [
    (["status"], False), (["counters"], False), (["log"], False), (["hand"], False),
    (["sensors"], False), (["config", "get"], False), (["config", "get", "timings"], False),
    (["live", "--count", "1"], False), (["ports"], False),
    (["dice-test", "60"], True), (["jog", "plate", "300"], True),
    (["jog", "lane", "1", "200"], True), (["jog", "lift_up", "2", "300"], True),
    (["jog", "lift_down", "2", "300"], True), (["rfid", "audit"], True),
    (["new-game"], True), (["clear"], False),
    (["config", "validate", "firmware/config.json"], False),
]
# Names, not words: what `config get` lists are the config's own keys, as
# `config set` takes them; `status` names MicroPython's port it runs on.
KEYS = {"format", "module", "pins", "ruleset", "tile_sets", "timings", "unix", "esp32"}


def _english(text):
    text = re.sub(r"mjctl(?: [a-z_]+)*|[a-z_]+\.[\w.\[\]]+|（[a-z_]+）|/dev/\S+|image-\w+", " ",
                  text)
    return english_words(text) - KEYS


@pytest.mark.parametrize("words, keyed", COMMANDS, ids=[" ".join(w) for w, _ in COMMANDS])
def test_each_command_speaks_chinese(words, keyed, table, capsys):
    link, key = table
    argv = ["--lang", "zh", "--port", link] + (["--key", key] if keyed else []) + words
    try:
        code, out, err = run(capsys, *argv)
    finally:
        texts.set_lang("en")
    printed = out + "\n".join(err)
    assert code == 0, (words, code, printed)
    # `config get` prints keys, `ports` a port and "-" where no controller answers.
    assert texts.CJK.search(printed) or words[0] in ("config", "ports"), printed
    assert _english(printed) == set(), (words, _english(printed), printed)
    if words[0] in ("jog", "selftest", "dice-test") and words[1:2] != ["lift_up"]:
        still(link)            # lift_up leaves lifter 2 between its switches: lift_down next


HELPS = ["status", "counters", "log", "hand", "clear", "start", "new-game", "sensors", "live",
         "monitor", "ports", "dice-test", "config", "jog", "selftest", "rfid", "cycle", "serve",
         "fleet"]


@pytest.mark.parametrize("command", HELPS)
def test_each_commands_help_speaks_chinese(command, capsys):
    capsys.readouterr()
    try:
        with pytest.raises(SystemExit) as stop:
            mjctl.main(["--lang", "zh", command, "--help"])
    finally:
        texts.set_lang("en")
    out = capsys.readouterr().out
    assert stop.value.code == 0 and texts.CJK.search(out), out
    # Options, metavariables and the examples' commands are what is typed.
    typed = re.sub(r"--?[a-z][\w-]*|\b[A-Z][A-Z_|:-]+\b|\{[^}]*\}|  mjctl .*|docs/\S+|build/\S+",
                   " ", out)
    commands = set(HELPS) | {"get", "set", "validate", "audit", "learn", "new", "game", "dice",
                             "plate", "lane", "make"}   # the words of a command to type
    assert _english(typed) - commands == set(), (command, _english(typed), out)
