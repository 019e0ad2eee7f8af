"""The telemetry's stand-in while the heap is at its fullest: a
technician's visit (a service session open), or a hand coming back after
a power cut (the controller `resuming`, at the boot).

The telemetry (link/telemetry.py) leaves the heap then (docs/fleet.md). It
ends its connection, hands its counters to `waiting` and forgets its
module and this one; what stays is the closure `waiting` returns, in the
controller's `write`: the controller's own write, then, once neither has
been the case for `_QUIET_MS` (a visit is often several sessions, one per
command: the telemetry comes back after the last), the telemetry started
again with those counters, its settings read again (a change made in the
visit applies from then). One tuple in one cell, and the time in another:
each value a closure holds costs a cell on the heap."""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from firmware.hal import ticks_diff

_QUIET_MS = const(10000)
_RESUMING = const(8)           # = the controller's (table.py)


def waiting(kept):
    """The controller's `write` during a visit. `kept`: the link, the
    function that starts the telemetry (main._telemetry: this module
    imports none, so no import cycle), then the telemetry's counters
    (telemetry.start)."""
    ended = None                           # since when neither (ticks)

    def write(more=0):
        nonlocal ended
        link = kept[0]
        ctl = link.controller
        type(ctl).write(ctl, more)         # the controller's own
        if link.session_state or ctl.state == _RESUMING:
            ended = None
            return
        now = link.hal.ticks_ms()
        if ended is None:
            ended = now
        if ticks_diff(now, ended) < _QUIET_MS:
            return
        del ctl.write                      # its own again (the slot stays for the next hook)
        kept[1](link, ctl, kept)           # main._telemetry: it never raises
    return write
