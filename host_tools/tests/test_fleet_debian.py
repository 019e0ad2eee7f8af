"""The fleet's tools install their Debian packages through one helper
(host_tools/fleet/debian.py): nothing done when the files are there, the
command to run said when root cannot, apt-get run as root, a file still
missing after it named; `--install` exits 0 or says the error (exit 2).
apt-get, the user id and the files are stand-ins: nothing is installed."""

import subprocess

import pytest

from host_tools.fleet import broker, browser, debian


class Machine:
    """The files there, who runs, and the commands run (none for real)."""

    def __init__(self, monkeypatch, there=(), root=True, apt_adds=()):
        self.there = set(there)
        self.runs = []
        self.apt_adds = set(apt_adds)
        monkeypatch.setattr(debian.os, "geteuid", lambda: 0 if root else 1000)
        monkeypatch.setattr(debian.shutil, "which", lambda name: "/usr/bin/" + name)
        monkeypatch.setattr(debian.os.path, "exists", lambda p: p in self.there)
        monkeypatch.setattr(debian.subprocess, "run", self.run)

    def run(self, cmd, **kw):
        self.runs.append((cmd, kw.get("env", {}).get("DEBIAN_FRONTEND")))
        if cmd[1] == "install":
            self.there |= self.apt_adds
        return subprocess.CompletedProcess(cmd, 0)


BROKER_FILES = (broker.MOSQUITTO, broker.PASSWD)
BROWSER_FILES = (browser.CHROMIUM, browser.CHROMEDRIVER)


def test_listed_names_as_a_sentence():
    assert debian.listed(["a"]) == "a"
    assert debian.listed(["a", "b"]) == "a and b"
    assert debian.listed(["a", "b", "c"]) == "a, b and c"


def test_nothing_runs_when_the_files_are_there(monkeypatch):
    m = Machine(monkeypatch, there=BROKER_FILES + BROWSER_FILES + (browser.CJK_FONT,))
    broker.install()
    browser.install()
    assert m.runs == []


def test_without_root_the_command_to_run_is_said(monkeypatch):
    m = Machine(monkeypatch, root=False)
    with pytest.raises(broker.BrokerError) as e:
        broker.install()
    assert str(e.value) == ("the broker needs Debian's mosquitto: run  "
                            "sudo apt-get install mosquitto")
    with pytest.raises(browser.BrowserError) as e:
        browser.install()
    assert str(e.value) == ("the browser test needs Debian's chromium: run  "
                            "sudo apt-get install chromium chromium-driver fonts-wqy-microhei")
    assert m.runs == []


def test_without_root_a_missing_optional_font_is_left(monkeypatch):
    m = Machine(monkeypatch, there=BROWSER_FILES, root=False)
    browser.install()
    assert m.runs == []


def test_as_root_apt_get_installs_what_is_missing(monkeypatch, capsys):
    m = Machine(monkeypatch, apt_adds=BROKER_FILES)
    broker.install()
    assert m.runs == [(["apt-get", "update", "-qq"], None),
                      (["apt-get", "install", "-y", "-qq", "mosquitto"], "noninteractive")]
    assert capsys.readouterr().out == "installing mosquitto (the telemetry's broker)\n"


def test_as_root_the_optional_font_is_installed(monkeypatch, capsys):
    m = Machine(monkeypatch, there=BROWSER_FILES, apt_adds=(browser.CJK_FONT,))
    browser.install()
    assert m.runs[-1] == (["apt-get", "install", "-y", "-qq", "chromium", "chromium-driver",
                           "fonts-wqy-microhei"], "noninteractive")
    assert capsys.readouterr().out == ("installing chromium, chromium-driver and "
                                       "fonts-wqy-microhei (the page's browser test)\n")


def test_a_file_still_missing_after_apt_get_is_named(monkeypatch):
    Machine(monkeypatch)
    with pytest.raises(broker.BrokerError) as e:
        broker.install()
    assert str(e.value) == "apt-get installed mosquitto, but /usr/sbin/mosquitto is not there"
    with pytest.raises(browser.BrowserError) as e:
        browser.install()
    assert str(e.value) == ("apt-get installed chromium, but /usr/bin/chromium or "
                            "/usr/bin/chromedriver is not there")


@pytest.mark.parametrize("tool", [broker, browser])
def test_the_install_command_exits_0_or_says_the_error(monkeypatch, capsys, tool):
    Machine(monkeypatch, there=BROKER_FILES + BROWSER_FILES + (browser.CJK_FONT,))
    assert tool.main(["--install"]) == 0
    Machine(monkeypatch, root=False)
    assert tool.main(["--install"]) == 2
    assert "needs Debian's" in capsys.readouterr().err
    assert tool.main([]) == 2
    assert capsys.readouterr().err == "usage: python -m %s --install\n" % tool.__name__


def test_a_failing_apt_get_is_said_not_raised(monkeypatch, capsys):
    Machine(monkeypatch)

    def fails(cmd, **kw):
        raise subprocess.CalledProcessError(100, cmd)
    monkeypatch.setattr(debian.subprocess, "run", fails)
    assert broker.main(["--install"]) == 2
    assert "apt-get" in capsys.readouterr().err
