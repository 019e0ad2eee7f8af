"""The lower bound of a build, from the model's own physics.

What an ideal controller, reacting instantly, would achieve with the tile
flow this run produced:

1. Every lane feeds from the start time (the caller's `start_time`, else
   the moment the plate was first turned on for that build) with the plate
   turning and its feed never off. Each lane replays its own recorded gap
   sequence (the gaps that brought the 2S tiles of its wall): a gap runs
   while the chute is free, then the tile takes `stack_ms` to stack, so
   lane n is full at   start + sum over its 2S tiles of (gap_j + stack_ms).
2. The RFID audit reads each side once, one side at a time (one reader),
   a side as soon as its lane is full: sides in order of their lane's
   finish, each taking the reader's own scan time for 2S tags (request
   bytes + antenna read + reply bytes). With lanes finishing close together
   this is the latest lane's last stacking plus four scans.
3. All four walls lift at once when the audit ends: `up_ms` of travel.
4. The dealer presses `reaction_ms` after the walls are up and the lamp
   shows the dealer (the ideal controller shows it at once).
5. The dice roll for `dice_roll_ms` of the config.

It is computed from recorded physics only (gap draws, the model's
constants), never from what the firmware did: a slower controller gets the
same bound for the same seed and start time. It is a bound because every
real clock in the model can only pause relative to the ideal one.
"""


def lane_done_ms(gaps, stack_ms):
    return sum(g + stack_ms for g in gaps)


def lower_bound(gaps_per_lane, cap, stack_ms, scan_ms, lift_ms, reaction_ms, dice_ms):
    """The breakdown (ms from the start) or None when a wall is incomplete."""
    if any(len(g) < cap for g in gaps_per_lane):
        return None
    lanes = [lane_done_ms(g[:cap], stack_ms) for g in gaps_per_lane]
    audit_end = 0
    for done in sorted(lanes):
        audit_end = max(audit_end, done) + scan_ms
    walls_up = audit_end + lift_ms
    pressed = walls_up + reaction_ms
    total = pressed + dice_ms
    return {
        "lanes_ms": lanes,
        "last_stack_ms": max(lanes),
        "scan_ms": scan_ms,
        "audit_end_ms": audit_end,
        "lift_ms": lift_ms,
        "walls_up_ms": walls_up,
        "reaction_ms": reaction_ms,
        "pressed_ms": pressed,
        "dice_ms": dice_ms,
        "total_ms": total,
    }
