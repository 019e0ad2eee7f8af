"""What stays of the telemetry between its turns: the controller's emit
and write hooks, and `kept`, the telemetry's state (link/telemetry.py's
`FIELDS`: its counters, its socket, what waits to be published, and the
two functions the hooks use, so that this module's globals hold nothing
but `hooked`).

The telemetry's module is imported for a turn when there is something to
do (an event to publish, the health due, a connect or a ping due, a queue
to drain, a visit or a resume to step aside for) and forgotten after it:
resident, its code and its object would keep about 1.1 KB of the heap for
good (docs/heap-idioms.md, 16). Between turns a tick costs a comparison
and allocates nothing.

The heap's fullest times, a technician's visit (a service session open)
and a hand coming back after a power cut (the controller `resuming`):
one turn steps aside (the connection ended, what waits dropped and
counted, the emit hook gone), and none comes until `_QUIET_MS` after the
last of them (a visit is often several sessions, one per command).

Where what stays lands matters as much as its size: made at the boot or
amid a visit's garbage, it lands in the middle of the heap's largest free
block and splits it. So once the table is quiet after the boot or a step
aside, the hooks, `kept` and this module are made again (`_PLACED`),
right after a collection: they land in the small holes of the heap's
settled layout, and so does the room kept for the next connect's socket
(`_SPARE`). This module is forgotten once the hooks are made
(telemetry.start): the closures hold what they need."""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

_QUIET_MS = const(10000)
_RESUMING = const(8)           # = the controller's (table.py)
_QUEUE = const(12)             # = telemetry.py's: events waiting for their turn, at most
_PUBLISHED = const(("state", "fault", "cleared", "result"))
_SPARE_ITEMS = const(8)        # a tuple of 40 B: a socket object is 16 B on the twin, 16-24 on an ESP32
# kept's slots (= telemetry.FIELDS' order: a test checks them)
_LINK = const(0)
_AGAIN = const(1)              # main._telemetry: a turn of the telemetry
_EVENTS = const(2)             # (name, fields) waiting for the next turn, or None
_DUE = const(3)                # ticks: the next turn, events or not
_ASIDE = const(4)              # None; -1: aside, full now; else quiet since (ticks)
_DROPPED = const(5)
_PLACED = const(6)             # the hooks made again since the boot or the last step aside
_SPARE = const(7)              # room for the next connect's socket (telemetry._connect)
_CLIENT = const(8)
_TICKS_DIFF = const(9)         # firmware.hal.ticks_diff


def hooked(kept):
    """(emit, write): the controller's emit and write with the telemetry."""

    def emit(name, fields):
        link = kept[_LINK]
        link.emit(name, fields)            # the link's first, always
        if name in _PUBLISHED and not link.session_state:
            events = kept[_EVENTS]
            if events is None:
                events = kept[_EVENTS] = []
            elif len(events) >= _QUEUE:
                del events[0]
                kept[_DROPPED] += 1
            events.append((name, fields))

    def write(more=0):
        link = kept[_LINK]
        ctl = link.controller
        type(ctl).write(ctl, more)         # the controller's own
        now = link.hal.ticks_ms()
        ticks_diff = kept[_TICKS_DIFF]
        aside = kept[_ASIDE]
        if link.session_state or ctl.state == _RESUMING:
            if aside is None:
                kept[_AGAIN](link, ctl, kept)      # the turn that steps aside
            kept[_ASIDE] = -1
            return
        if aside is not None:
            if aside < 0:
                kept[_ASIDE] = now
            if ticks_diff(now, kept[_ASIDE]) < _QUIET_MS:
                return
            kept[_ASIDE] = None
            kept[_DUE] = now                       # back: a connect at once
        if not kept[_PLACED]:                      # made again, once the garbage is gone
            import gc
            gc.collect()
            new = kept[:]
            new[_PLACED] = True
            if new[_CLIENT] is None:
                new[_SPARE] = tuple(range(_SPARE_ITEMS))
            from firmware.hal import forget
            from firmware.link import mqtthook     # this module made again too
            forget("firmware.link.mqtthook")
            ctl.emit, ctl.write = mqtthook.hooked(new)
        elif kept[_EVENTS] or ticks_diff(now, kept[_DUE]) >= 0:
            kept[_AGAIN](link, ctl, kept)

    return emit, write
