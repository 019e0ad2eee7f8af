"""`make run`: the table view (host_tools/view/tableview/) run as a person
runs it, its plain lines read back.

The runs are real: the firmware under the MicroPython unix port on the
virtual table, in real-time mode at a speed the two processes cannot reach
(200x: they run as fast as they can, about 2 s a run).
"""

import os
import re
import signal
import subprocess
import sys

import pytest

from host_tools.image.mpenv import ROOT
from host_tools.texts import faults as fault_table


FAST = ["--speed", "200"]
LINE = re.compile(r"^\s*(\d+\.\d{3})  (> )?(\S+)\s*(.*)$")


def run_view(*args, timeout=60):
    """The view as `make run` starts it, stdout a pipe (so: plain lines)."""
    p = subprocess.run([sys.executable, "-m", "host_tools.view.tableview"] + FAST + list(args),
                       cwd=str(ROOT), capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in p.stderr, p.stderr
    return p


def parse(stdout):
    """[(t_s, who, name, fields)] of the event lines; who: "link" or "host"."""
    out = []
    for line in stdout.splitlines():
        m = LINE.match(line)
        if m:
            out.append((float(m.group(1)), "host" if m.group(2) else "link", m.group(3),
                        m.group(4)))
    return out


def link_names(entries):
    """Link events, a state event named by its state."""
    return [f.split("=", 1)[1] if name == "state" else name
            for _, who, name, f in entries if who == "link"]


def in_order(seq, want):
    """Is `want` a subsequence of `seq`?"""
    it = iter(seq)
    return all(any(x == w for x in it) for w in want)


CYCLE = ["walls", "lifting", "dealer", "rolling", "dice", "in_hand"]


# -- plain runs --------------------------------------------------------------

@pytest.fixture(scope="module")
def two_cycles():
    """One run for the tests below: two cycles, the whole hand between them."""
    p = run_view("--cycles", "2")
    assert p.returncode == 0, p.stderr
    return p


def hand_lines(entries):
    """The `hand` events' fields as dicts (values as printed)."""
    out = []
    for t, _, name, f in entries:
        if name == "hand":
            fields = dict(kv.split("=", 1) for kv in f.split())
            fields["t"] = t
            out.append(fields)
    return out


def test_plain_mode_plays_two_cycles_in_order(two_cycles):
    p = two_cycles
    assert "\x1b[" not in p.stdout                       # no ANSI without a terminal
    entries = parse(p.stdout)
    names = link_names(entries)
    # the second set's walls come during the hand (the test below)
    assert in_order(names, ["building"] + CYCLE + ["hand", "result"] + CYCLE[1:]), names
    assert names.count("dice") == 2 and names.count("result") == 1 and "fault" not in names
    hosts = [n for _, who, n, _ in entries if who == "host"]
    assert hosts == ["start"]                           # the players end the hand, not the host
    assert p.stdout.splitlines()[-1].startswith("# stopped after 2 cycles")


def test_plain_mode_shows_a_whole_hand(two_cycles):
    entries = parse(two_cycles.stdout)
    hands = hand_lines(entries)
    ops = [h["op"] for h in hands]
    assert ops[:3] == ["deal", "replace_flowers", "reveal_gold"], ops
    assert ops.count("draw") >= 4, ops
    assert [int(h["n"]) for h in hands] == list(range(len(hands)))
    assert hands[0]["gold"] == hands[1]["gold"] == "null"
    gold = hands[2]["gold"]
    assert re.fullmatch(r"[1-9][mpsz]", gold), gold      # turned up, then kept all hand
    assert all(h["gold"] == gold for h in hands[2:])
    for a, b in zip(hands, hands[1:]):                 # only a put back returns a tile
        assert int(b["wall"]) <= int(a["wall"]) or b["op"] == "put_back", (a, b)
    assert int(hands[-1]["wall"]) < int(hands[0]["wall"])
    assert all("seat" in h for h in hands if h["op"] in ("draw", "kong"))
    # the result after the last hand event, then the next cycle by itself
    t_res, _, _, res = next(e for e in entries if e[2] == "result")
    assert hands[-1]["t"] <= t_res
    winner = re.search(r"\bwinner=(\S+)", res).group(1)
    assert (winner == "null") == (hands[-1]["phase"] == "draw"), (winner, hands[-1])
    dealer = re.search(r"\bdealer=(\d)", res).group(1)
    lines = two_cycles.stdout.splitlines()
    assert any(re.match(r"# hand 1: (a draw|seat %s won); next dealer seat %s, streak \d+$"
                        % (winner, dealer), line) for line in lines), lines
    after = [e for e in entries if e[0] >= t_res and e[2] != "lane"]
    assert link_names(after)[:5] == ["result", "lifting", "dealer", "rolling", "dice"]
    dice = next(f for _, _, n, f in after if n == "dice")
    assert dice.endswith("dealer=%s" % dealer)           # the dealer the result named


def test_the_next_set_built_during_the_hand_lifts_at_its_result(two_cycles):
    entries = parse(two_cycles.stdout)
    t_res = next(t for t, _, n, _ in entries if n == "result")
    nexts = [t for t, _, n, f in entries if n == "walls" and "next=True" in f]
    assert nexts and nexts[0] < t_res                     # built during the hand
    lifting = [t for t, _, n, f in entries if "state=lifting" in f.split()]
    assert lifting[-1] == t_res                           # lifted at once
    cycles = re.findall(r"^# cycle 2: .*table time ([\d.]+) s", two_cycles.stdout, re.M)
    assert cycles and float(cycles[0]) < 10.0             # lift, dealer, dice: no build


def test_a_lane_jam_shows_its_fix_then_the_cycles_go_on():
    p = run_view("--cycles", "1", "--fault", "lane_jam:1")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    i = next(i for i, line in enumerate(lines) if re.search(r"\bfault\s+code=10\b", line))
    assert "name=lane_jam" in lines[i] and '"lane":1' in lines[i]
    name, cause, fix = fault_table.describe(10)
    assert lines[i + 1].split() == ["cause:"] + cause.split()
    assert lines[i + 2].split() == ["fix:"] + fix.split()
    entries = parse(p.stdout)
    names = [n for _, _, n, _ in entries]
    assert in_order(names, ["fault", "technician", "clear", "cleared", "walls", "dice"]), names
    fixed = next(f for _, _, n, f in entries if n == "technician")
    assert "lane_jam:1" in fixed
    assert next(f for _, _, n, f in entries if n == "cleared") == "code=10 resume=building"


def test_a_display_unplugged_is_cleared_and_the_dealer_shown_again():
    # Firmware fix: the frame never ACKed raised the fault again right after
    # `clear`, and the replugged (blank) board never showed the dealer lamp.
    p = run_view("--cycles", "1", "--fault", "display_unplugged")
    assert p.returncode == 0, p.stderr
    entries = parse(p.stdout)
    assert [n for _, _, n, _ in entries].count("fault") == 1
    names = link_names(entries)
    assert in_order(names, ["dealer", "fault", "cleared", "dealer", "rolling", "dice"]), names


def _children(pid):
    out = []
    for task in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/children" % (pid, task)) as f:
            out += [int(c) for c in f.read().split()]
    return out


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")
def test_ctrl_c_stops_cleanly_and_stops_the_firmware():
    p = subprocess.Popen([sys.executable, "-m", "host_tools.view.tableview"] + FAST,
                         cwd=str(ROOT), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        seen = []
        for line in p.stdout:
            seen.append(line)
            if " dice " in line:
                break
        firmware = _children(p.pid)
        assert firmware, "no firmware process"
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert "# stopped after" in out
    for pid in firmware:
        assert not os.path.exists("/proc/%d" % pid)


def test_a_bad_fault_name_is_refused():
    p = run_view("--fault", "no_such_fault", timeout=20)
    assert p.returncode == 2 and "unknown fault" in p.stderr
