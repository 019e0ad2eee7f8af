"""The soak's players, and the paces `--pace` chooses between."""

from host_tools.sim.hand_players import HandPlayers


class BriskPlayers(HandPlayers):
    """The soak's players: brisk ones. The firmware ticks every 10 ms of
    virtual time whatever happens, so a soak hand's wall time follows its
    virtual time, and most of a hand at `make run`'s pace is players
    thinking (1.5-4 s before each draw) while nothing moves. Brisk players
    draw 0.5-1 s after the previous event's last tile and deal a tile every
    100 ms (a dealer taking blocks of four in 0.4 s): a hand takes about
    half the virtual time. What they exercise is the same:
    * the events that come from a key or from no rule keep the parlour's
      1.5-4 s before them: a kong's key, a win's key, a stray take. The
      firmware applies a key press when it sees it, but a draw only when
      the reader has seen its tile gone in two reads of its side (0.6 s
      to over 1.5 s while the builder also reads the platform): a kong
      key pressed 0.7 s after a draw can be applied before that draw, and
      the hand then differs from its replay (found with a brisk kong; see
      docs/reliability.md). Brisk draws cannot overtake one another: a
      head tile seen gone before the previous draw's waits, and is
      explained, at the latest, in the read that would call it irregular;
    * the other pauses the firmware's timing needs are the parlour's: a
      kong's key press to its replacement (`press_ms`), a stray take to the
      next event (`after_take_ms`: the table publishes it within 1.5 s),
      the flowers and the gold from the tail (`tail_ms`, `gold_ms`), the
      deal's start after the dice, a win's key hold, a draw's grace time;
    * the next set is still built during the hand: a build takes about
      28 s from the walls up, a brisk hand 36-57 s in play (mean 50 s,
      seed 9; a win after a few events would end before its build, and the
      table would finish the build first, as at any pace after an early
      win);
    * faults still land at a random moment of the minute after the walls
      are up: during the build (its first ~28 s), during the play, and
      some after the hand, in the lift or the dice (`landed` in the
      summary counts where)."""
    deal_ms = 100
    think_ms = (500, 1000)
    key_think_ms = HandPlayers.think_ms


PACES = {"brisk": BriskPlayers, "parlour": HandPlayers}
