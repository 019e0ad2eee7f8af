"""docs/security.md, Requests open to anyone: every request a host may
send without a service session is listed there with why it is safe to
leave open, and nothing else is; a request that changes the game
(new_game) is a session's."""

import re
from pathlib import Path

from firmware.link.codec import route
from firmware.link.protocol import REQUESTS

DOC = Path(__file__).resolve().parents[2] / "docs" / "security.md"


def _listed():
    """The requests of the section's table, each with its reason."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Requests open to anyone\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z_]+)` \| (.+) \|$", section, re.M)
    return dict(rows)


def test_the_documented_open_requests_are_the_protocols():
    declared = [line.split(" ")[0] for line in REQUESTS.strip().split("\n")]
    open_ = {op for op in declared if route(op)[0] != "session"}
    listed = _listed()
    assert set(listed) == open_, (sorted(set(listed) - open_), sorted(open_ - set(listed)))
    for op, why in listed.items():
        assert len(why) > 30, (op, why)              # a reason, not a word


def test_what_changes_the_game_or_reads_a_tag_needs_a_session():
    for op in ("new_game", "jog", "config_set", "dice_test", "rfid_scan", "rfid_audit",
               "rfid_learn"):
        assert route(op)[0] == "session", op
