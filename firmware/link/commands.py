"""The requests that command the table, anyone's to send: start a cycle,
clear a fault, end a hand, declare a kong (docs/protocol.md, Requests).
Each is declared on its line of the codec's table (protocol.REQUESTS) and
answered by the function named after it, called by the server's
dispatcher as handler(link, ctl, now, args): the arguments are checked
against the table by then. Each asks the controller through its
methods.
"""

from firmware.link.codec import LinkError


def start(link, ctl, now, args):
    why = ctl.start(now)
    if why:
        raise LinkError("busy", why)
    return {"ok": True, "state": "building"}


def clear(link, ctl, now, args):
    code = ctl.fault
    ctl.clear(now)
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
    why = ctl.kong(now, seat, kind == "concealed")
    if why:
        raise LinkError("refused", why)
    ctl.write()                # the reserve change into the hand's record
    return {"ok": True, "state": "in_hand"}
