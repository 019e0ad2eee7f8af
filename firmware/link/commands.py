"""The requests that command the table, anyone's to send: start a cycle,
clear a fault, end a hand, declare a kong (docs/protocol.md, Requests).
Each is declared on its line of the codec's table (protocol.REQUESTS) and
answered by the function named after it, called by the server's
dispatcher as handler(link, ctl, now, args): the arguments are checked
against the table by then. Each asks the controller through its
methods.
"""

from firmware.controller.states import IN_HAND, NAMES
from firmware.link.codec import LinkError


def start(link, ctl, now, args):
    why = ctl.start(now)
    if why:
        raise LinkError("busy", why, {"why": "not_idle", "state": NAMES[ctl.state]})
    return {"ok": True, "state": "building"}


def clear(link, ctl, now, args):
    code = ctl.fault
    ctl.clear(now)
    return {"ok": True, "cleared": code or None}


def hand_end(link, ctl, now, args):
    why = ctl.hand_end(now, args.get("winner"))
    if why:
        raise LinkError("busy", why, _not_in_hand(ctl) or {"why": "range", "key": "winner", "lo": 0,
                                                           "hi": 3, "got": args.get("winner")})
    ctl.write()                # the new dealer on the flash before the answer
    return {"ok": True, "state": "next"}


def kong(link, ctl, now, args):
    kind = args["kind"]
    if kind != "exposed" and kind != "concealed":
        raise LinkError("bad_request", "kind must be exposed or concealed",
                        {"why": "kong_kind", "got": kind})
    seat = args["seat"]
    if seat < 0 or seat > 3:
        raise LinkError("bad_request", "seat must be 0..3",
                        {"why": "range", "key": "seat", "lo": 0, "hi": 3, "got": seat})
    why = ctl.kong(now, seat, kind == "concealed")
    if why:
        raise LinkError("refused", why, _not_in_hand(ctl))
    ctl.write()                # the reserve change into the hand's record
    return {"ok": True, "state": "in_hand"}


def _not_in_hand(ctl):
    """The facts of a refusal for want of a hand, or None (the hand's own
    reasons go as the controller's English text)."""
    if ctl.state != IN_HAND:
        return {"why": "no_hand", "state": NAMES[ctl.state]}
    return None
