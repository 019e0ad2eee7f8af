"""The requests that command the table, anyone's to send: start a cycle,
clear a fault, end a hand, declare a kong (docs/protocol.md, Requests).
Each is declared on its line of the codec's table (codec._REQUESTS) and
answered by the function named after it, called by the server's
dispatcher as handler(link, ctl, now, args): the arguments are checked
against the table by then.

Memory: not resident. The link imports this module for one request and
forgets it after the answer (LinkServer._answer), so that a table in play
carries none of it.
"""

from firmware.hal import forget
from firmware.link.codec import LinkError


def start(link, ctl, now, args):
    why = ctl.start(now)
    if why:
        raise LinkError("busy", why)
    return {"ok": True, "state": "building"}


def clear(link, ctl, now, args):
    from firmware.controller import work      # loaded for this request
    code = ctl.fault
    try:
        work.clear(ctl, now)
    finally:
        forget("firmware.controller.work")
    return {"ok": True, "cleared": code or None}


def hand_end(link, ctl, now, args):
    why = ctl.hand_end(now, args.get("winner"))
    if why:
        raise LinkError("busy", why)
    ctl.write()                # the new dealer on the flash before the answer
    return {"ok": True, "state": "next"}


def kong(link, ctl, now, args):
    kind = args["kind"]
    if kind != "exposed" and kind != "concealed":
        raise LinkError("bad_request", "kind must be exposed or concealed")
    seat = args["seat"]
    if seat < 0 or seat > 3:
        raise LinkError("bad_request", "seat must be 0..3")
    from firmware.controller.table import NAMES
    state = NAMES[ctl.state]
    if state != "in_hand":
        why = "no hand is being played (state %s)" % state
    else:
        why = ctl.follower.kong(now, seat, kind == "concealed")
    if why:
        raise LinkError("refused", why)
    ctl.write()                # the reserve change into the hand's record
    return {"ok": True, "state": "in_hand"}


def new_game(link, ctl, now, args):
    """A new game: the first dealer drawn again, the streak 0 (docs/hand.md,
    A new game). Never during a hand, a cut one included: the parlour
    asks for it when new players sit down."""
    if ctl.in_hand():
        raise LinkError("busy", "a hand is on: a new game begins between hands")
    from engine_core.dice import random_seat
    ds = ctl.dealership
    ds.dealer = random_seat(ctl.hal.rand)
    ds.wins_in_row = 0
    ctl._save()                # the counters with the dealer, before the answer
    return {"dealer": ds.dealer, "ok": True}
