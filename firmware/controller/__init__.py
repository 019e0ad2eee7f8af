"""The machine's cycle and its faults: one explicit state machine
(table.py) over the drivers, with the wall builder (builder.py) as the part
that can run in the background while a hand is played (double tile sets).

The controller by concern, a module each:

    the cycle          table.py: the state machine, its commands and its
                       tick; states.py: the states' numbers and names, the
                       flags kept across power cuts
    the seat keys      keys.py: what a press or a gesture means in each
                       state (resident functions, called by the tick)
    faults             safe_stop.py: raised at the tick, by main.run for a bug,
                       and cleared by the `clear` request (resident functions)
    a technician's     service_work.py: started for a service request (a jog,
      work             a scan), a `Work` the tick steps while it runs;
                       imported with the service requests (link/service.py)
    what survives      saved_state.py: the counters and the dealer read at boot,
      a power cut      the counters, the fault log and the hand's record
                       (hand_record.py) written between ticks (the tick only
                       notes what changed)
    a hand the power   resume.py: at boot, the walls read (`resuming`), the
      cut, back        hand rebuilt from them and its record (rebuild.py;
                       record_check.py reads the record back), or
                       power_lost and the reason; a lift or a build cut,
                       read and resumed on the technician's clear
    building a set     builder.py; following a hand: follower.py, its
                       published states hand_events.py
"""
