"""The table's states (the state machine of table.py), by number, and
their names on the link (`status`, the `state` event, the telemetry).
A module of their own, with no imports: the controller's modules, the
link and the telemetry all read them, and none of them has to import
another for them."""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

BOOT = const(0)
IDLE = const(1)
BUILDING = const(2)
LIFTING = const(3)
DEALER = const(4)
ROLLING = const(5)
IN_HAND = const(6)
FAULT = const(7)
RESUMING = const(8)      # a hand the power cut, coming back (controller/resume.py)

NAMES = ("boot", "idle", "building", "lifting", "dealer", "rolling", "in_hand", "fault",
         "resuming")

# Flags kept in the flash across a power cut (hal.flag), read at boot.
CYCLE_FLAG = "cycle"     # set while a cycle runs: found at boot, the power was lost
HAND_FLAG = "hand"       # set from the walls coming up to the hand's end
GAVE_UP_FLAG = "gave_up"  # the hand cut could not come back: no second try (resume.py)
