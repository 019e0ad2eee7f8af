"""The power cuts' summary: its figures, counted as the cuts go, and the
progress line logged every 50 cuts."""


def new_summary():
    """Every figure at zero, in the order the JSON output has them."""
    return {"cuts": 0, "wall_cuts": 0, "in_flight": 0, "failures": [], "by_state": {},
            "other_faults": {},
            "power_lost": 0,
            "no_power_lost": 0, "in_hand": 0, "moved_before_command": 0,
            "new_file_left": 0,
            # `counters` asked again: events the table sent after
            # its answer were taken off the link before the compare.
            "asked_again": 0,
            # Cuts with the walls of a hand up (the flag `hand`): the
            # hand resumed (in play, or the dealer's key again before
            # the dice), or power_lost and its reason.
            "hand_cuts": 0, "resumed": 0, "dice_again": 0, "fallbacks": {},
            "replay_checked": 0, "replay_states": 0, "replay_mismatches": 0,
            "dealer_kept": 0,
            # Cycles the power cut while lifting or building: resumed
            # on the technician's clear (by reason; `lanes_emptied`
            # one by one, a wall with a gap), or the lanes tipped
            # and the sets sorted (`cycles_tipped`); a lift resumed
            # that then fell back (`lift_fallbacks`); the hands
            # played after a resumed lift or build checked against
            # their replay from their first state (`replay_after_clear`).
            "cycles_resumed": {}, "lanes_emptied": 0, "cycles_tipped": 0,
            "lift_fallbacks": {}, "replay_after_clear": 0}


def progress_line(cuts, o):
    """After `cuts` cuts: the failures, the states cut in, and what became
    of the hands and cycles cut."""
    return ("%d cuts, %d failures, %s; hand cuts %d: %d resumed, %d dice again, "
            "fallbacks %s; cycles resumed %s, tipped %d; replay: %d hands, "
            "%d states, %d differing"
            % (cuts, len(o["failures"]), o["by_state"], o["hand_cuts"],
               o["resumed"], o["dice_again"], o["fallbacks"],
               o["cycles_resumed"], o["cycles_tipped"],
               o["replay_checked"], o["replay_states"], o["replay_mismatches"]))
