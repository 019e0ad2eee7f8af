"""The parlour page in a real browser (docs/fleet.md, The page): `python
-m host_tools.fleet` (what `make fleet` runs) with the project's broker
and three virtual tables, the page opened in Debian's headless Chromium
(selenium, the driver's path given: nothing downloaded). A fault injected
into one table's virtual table shows on the page with its fix, in English
and in Chinese, then clears after the technician's repair; a table whose
process stops (silent, its connection open) and one killed (its
connection gone) turn offline within 10 s. Screenshots are kept in
artifacts/ (git-ignored)."""

import os
import re
import subprocess
import sys
import time

import pytest

from host_tools.fleet import browser
from host_tools.image.mpenv import ROOT
from host_tools.texts import faults as fault_table
from host_tools.texts import zh

pytestmark = pytest.mark.needs_sim

ARTIFACTS = ROOT / "artifacts"
SPEED = 5.0                # virtual seconds per wall second: health every 2 s
FIX_AFTER = 40.0           # virtual seconds the fault stays: 8 s on the page
OFFLINE_S = 10.0           # a silent or disconnected table shows offline within this


class FleetProc:
    """`python -m host_tools.fleet` in its own process: its URL, its
    commands on stdin, its log."""

    def __init__(self, store):
        # A store of its own: the parlour's (build/fleet/) is not a test's.
        self.p = subprocess.Popen(
            [sys.executable, "-m", "host_tools.fleet", "--tables", "3", "--speed", repr(SPEED),
             "--fault-rate", "0", "--fix-after", repr(FIX_AFTER), "--http-port", "0",
             "--store", store],
            cwd=str(ROOT), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.lines = []
        self.url = None
        end = time.monotonic() + 60
        while self.url is None and time.monotonic() < end:
            line = self.p.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            m = re.search(r"the parlour page: (http://\S+)", line)
            if m:
                self.url = m.group(1)
        if self.url is None:
            self.stop()
            raise AssertionError("the fleet printed no URL: %s" % "".join(self.lines))

    def say(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def stop(self):
        """Ctrl-C's signal, as a terminal sends it; the fleet stops its
        tables, the page and the broker, and exits 0."""
        import signal
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
        try:
            out, _ = self.p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, _ = self.p.communicate()
        self.lines.append(out)
        return self.p.returncode


@pytest.fixture
def page(tmp_path):
    browser.install()
    fleet = FleetProc(str(tmp_path / "days.sqlite"))
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        with browser.chromium(str(tmp_path / "profile")) as drv:
            drv.get(fleet.url)
            yield fleet, drv
    finally:
        code = fleet.stop()
        assert code == 0, "".join(fleet.lines)
        assert "stopping the tables, the page and the broker" in "".join(fleet.lines)


# The page renders each push anew (up to 5 a second): what a check reads
# of a card is read in one script, never through elements kept between
# two renders.
CARD_JS = """
const c = document.getElementById(arguments[0]);
if (!c) return null;
const q = s => { const e = c.querySelector(s); return e ? e.textContent : null; };
return {online: c.dataset.online, fault: c.dataset.fault, stale: c.dataset.stale,
        text: c.textContent, fix: q(".fix"), cause: q(".cause"), name: q(".fault-name"),
        box: q(".faultbox")};
"""
HISTORY_JS = """
return [...document.querySelectorAll("tr.hist-row")].map(
    r => ({table: r.dataset.table, code: r.dataset.code, text: r.textContent}));
"""


class Card:
    def __init__(self, info):
        self.__dict__.update(info)


def card(drv, tid):
    info = drv.execute_script(CARD_JS, "table-hall-%s" % tid)
    if info is None:
        raise LookupError("no card for table %s" % tid)
    return Card(info)


def wait_for(drv, what, pred, timeout):
    """Polls the page (the browser renders each push) until pred(drv)."""
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        try:
            if pred(drv):
                return time.monotonic()
        except Exception as e:        # an element between two renders
            last = e
        time.sleep(0.1)               # the browser's own time to render, in wall time
    drv.save_screenshot(str(ARTIFACTS / "parlour-timeout.png"))
    raise AssertionError("the page never showed %s in %.0f s (%r); body: %s" % (
        what, timeout, last, drv.find_element("tag name", "body").text[:2000]))


def online(tid, value="true"):
    return lambda drv: card(drv, tid).online == value


def test_a_fault_shows_with_its_fix_in_both_languages_then_clears(page):
    fleet, drv = page
    for tid in ("t1", "t2", "t3"):
        wait_for(drv, "table %s online" % tid, online(tid), 30)
    drv.find_element("id", "lang-en").click()
    fleet.say("t2 fault lane_jam:1")
    # The jam stops lane 1: the controller reports a lane_jam, or, when
    # the jam comes just before the other lanes filled, the audit's
    # missing_tile. Whichever it reports, the page shows it.
    wait_for(drv, "t2's fault", lambda d: card(d, "t2").fault != "", 60)
    c = card(drv, "t2")
    code = int(c.fault)
    assert code in (10, 20), code
    name, cause, fix = fault_table.describe(code)
    assert fix in c.fix and cause in c.cause and name in c.box, c.box
    assert card(drv, "t1").fault == ""
    drv.save_screenshot(str(ARTIFACTS / "parlour-fault.png"))
    drv.find_element("id", "lang-zh").click()
    zname, _, zfix = zh.FAULTS[code]
    wait_for(drv, "the fix in Chinese", lambda d: zfix in (card(d, "t2").fix or ""), 5)
    assert zname in card(drv, "t2").name
    drv.save_screenshot(str(ARTIFACTS / "parlour-fault-zh.png"))
    drv.find_element("id", "lang-en").click()
    # The technician repairs it FIX_AFTER virtual seconds on; the page
    # clears it, and its history keeps it, cleared.
    wait_for(drv, "t2's fault cleared",
             lambda d: card(d, "t2").fault == "" and card(d, "t2").online == "true", 60)
    rows = [r for r in drv.execute_script(HISTORY_JS)
            if r["table"] == "t2" and r["code"] == str(code)]
    assert rows and "cleared" in rows[0]["text"], rows
    drv.save_screenshot(str(ARTIFACTS / "parlour-cleared.png"))


def test_a_silent_table_and_a_killed_one_turn_offline_within_10_s(page):
    fleet, drv = page
    for tid in ("t1", "t2", "t3"):
        wait_for(drv, "table %s online" % tid, online(tid), 30)
    # Its process stopped: the firmware waits for the table's next tick,
    # its connection open and silent (no last-will): the page's timeout,
    # 8 s once the page knows the table's pace (health every 2 s).
    wait_for(drv, "t1's pace known", lambda d: card(d, "t1").stale == "8", 30)
    t0 = time.monotonic()
    fleet.say("t1 pause")
    t1 = wait_for(drv, "t1 offline (silent)", online("t1", "false"), OFFLINE_S + 5)
    assert t1 - t0 <= OFFLINE_S, t1 - t0
    assert "silent" in card(drv, "t1").text
    assert card(drv, "t2").online == "true"
    drv.save_screenshot(str(ARTIFACTS / "parlour-silent.png"))
    fleet.say("t1 resume")
    wait_for(drv, "t1 online again", online("t1"), 30)
    # Killed: the firmware ends with its bus, the connection closes with
    # no DISCONNECT, and the broker publishes the table's last-will.
    t0 = time.monotonic()
    fleet.say("t3 kill")
    t1 = wait_for(drv, "t3 offline (last-will)", online("t3", "false"), OFFLINE_S + 5)
    assert t1 - t0 <= OFFLINE_S, t1 - t0
    assert "last will" in card(drv, "t3").text, card(drv, "t3").text
    drv.save_screenshot(str(ARTIFACTS / "parlour-offline.png"))
