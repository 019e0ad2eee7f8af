"""The technician's guides, English and Chinese, section for section, and
showing what mjctl prints: each sample block marked
`<!-- sample: NAME -->` in docs/technician.md and docs/zh/technician.md is
run as typed, in that guide's language (the Chinese one under a zh_CN
locale), and what mjctl prints is compared with the block, line by line.

The guides' names stand for this test's own: `/dev/ttyACM0` is a virtual
table served for the test, `keys/table-7.key` its key, `keys/table-9.key`
another table's key, `/dev/ttyS0` a port that answers nothing.
"""

import re
import shlex
from pathlib import Path

import pytest

from host_tools import texts
from host_tools.image.mpenv import ROOT
from host_tools.tests.mjctl_cli_helpers import (  # noqa: F401  (fixtures)
    run, silent_pty, still, table)

GUIDES = {"en": Path(ROOT, "docs", "technician.md"), "zh": Path(ROOT, "docs", "zh", "technician.md")}
MARK = re.compile(r"<!-- sample: ([\w-]+) -->\n\n((?:    .*\n|\n(?=    ))+)")


def samples(lang):
    """{name: [(command words, the lines printed after it)]} of a guide."""
    out = {}
    for name, block in MARK.findall(GUIDES[lang].read_text(encoding="utf-8")):
        steps = []
        for line in block.splitlines():
            line = line[4:]
            if line.startswith("$ "):
                steps.append((shlex.split(line[2:]), []))
            elif steps and line:
                steps[-1][1].append(line)
        out[name] = steps
    return out


def sections(lang):
    """[(heading level, the commands it names in backticks)] of a guide."""
    text = GUIDES[lang].read_text(encoding="utf-8")
    return [(len(hashes), re.findall(r"`([^`]+)`", title))
            for hashes, title in re.findall(r"^(#+) (.*)$", text, re.M)]


def test_the_chinese_guide_is_the_english_one_section_for_section():
    en, zh = sections("en"), sections("zh")
    assert len(en) > 20 and en == zh


def test_both_guides_mark_the_same_samples_with_the_same_commands():
    en, zh = samples("en"), samples("zh")
    assert en and sorted(en) == sorted(zh)
    for name in en:
        assert [words for words, _ in en[name]] == [words for words, _ in zh[name]], name


@pytest.mark.parametrize("lang", sorted(GUIDES))
def test_each_sample_is_what_mjctl_prints(lang, table, silent_pty, tmp_path, capsys,
                                         monkeypatch):
    link, key = table
    wrong = tmp_path / "table-9.key"
    wrong.write_bytes(bytes(range(1, 33)))
    ours = {"/dev/ttyACM0": link, "keys/table-7.key": key, "keys/table-9.key": str(wrong),
            "/dev/ttyS0": silent_pty}
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8" if lang == "zh" else "C.UTF-8")
    monkeypatch.delenv("MJCTL_PORT", raising=False)
    monkeypatch.setenv("COLUMNS", "200")           # the guide's lines unwrapped
    checked = 0
    try:
        for name, steps in samples(lang).items():
            for words, shown in steps:
                assert words[0] == "mjctl", (name, words)
                argv = [ours.get(w, w) for w in words[1:]]
                _, out, err = run(capsys, *argv)
                printed = [line.rstrip() for line in out.splitlines() if line.strip()] + err
                printed = [_ours_back(line, ours) for line in printed]
                assert printed == shown, (lang, name, words, printed)
                checked += 1
    finally:
        texts.set_lang("en")
    assert checked >= 6
    still(link)


def _ours_back(line, ours):
    """A printed line with this test's ports and files named as the guide names them."""
    for doc_name, here in ours.items():
        line = line.replace(here, doc_name)
    return line
