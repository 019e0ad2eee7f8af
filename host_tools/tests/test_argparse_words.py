"""argparse's own words (usage, its headings, its errors) in the chosen
language: mjctl as typed with --lang zh or a Chinese locale, help and
mistakes alike, has none of argparse's English left; English is argparse's
own again once chosen."""

import argparse
import os
import subprocess
import sys

from host_tools import texts

MJCTL = [sys.executable, "-m", "host_tools.cli.mjctl"]
ARGPARSE_ENGLISH = ("usage:", "positional arguments", "options:", "show this help",
                    "invalid choice", "unrecognized arguments", "choose from", "error:")


def _mjctl(*argv, env=None):
    p = subprocess.run(MJCTL + list(argv), capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout + p.stderr


def test_help_and_mistakes_under_lang_zh_have_no_argparse_english():
    cases = [(["--lang", "zh", "--help"], 0, "用法："),
             (["--lang", "zh", "jog", "--help"], 0, "显示本帮助并退出"),
             (["--lang", "zh", "status", "--bogus"], 1, "无法识别的参数：--bogus"),
             (["--lang", "zh", "stauts"], 1, "无效的选择：'stauts'"),
             (["--lang", "zh", "--tables", "x", "status"], 1, "无效的 int 值")]
    for argv, code, chinese in cases:
        got, out = _mjctl(*argv)
        assert got == code and chinese in out, (argv, got, out)
        assert not [w for w in ARGPARSE_ENGLISH if w in out], (argv, out)
    got, out = _mjctl("stauts")                    # the did-you-mean reads both languages
    assert got == 1 and "did you mean status?" in out, out


def test_a_chinese_locale_gives_argparse_chinese_too():
    got, out = _mjctl("status", "--bogus", env={"LANG": "zh_CN.UTF-8", "LC_ALL": ""})
    assert got == 1 and "无法识别的参数" in out and "unrecognized" not in out, out


def test_english_is_argparse_own_again():
    try:
        texts.set_lang("zh")
        assert argparse.ArgumentParser(prog="p").format_usage().startswith("用法：")
    finally:
        texts.set_lang("en")
    assert argparse.ArgumentParser(prog="p").format_usage().startswith("usage: p")
