"""A power cut as the players of a hand (hand_players.HandPlayers) live it.

The table's `power_off`, and its `power_on` at the firmware's boot, pause
the players: nothing is taken or pressed while the power is off, and what
was planned goes on that much later; a roll the cut stopped (the break's
dice, the gold's) is rolled again: the dealer presses once the table shows
the dealer again, or, for the gold, when no roll is shown a while after
the boot (a roll the table kept before the cut is shown again); a kong's key or a win's the controller cannot have read
whole before the cut is pressed again after it. `cut_after_ms`: the
players cut the power themselves that long after the deal began (`mjctl
hand --power-cut`); `cut_on(players)`: the time of the cut from the plan
(called each time the plan grows; None: not yet). `off_take`: one of them
takes a tile from the middle of a wall while the power is off (what a
resume must not guess).

`PowerCutPlayers` is a part of `HandPlayers`, which holds its state.
"""


class PowerCutPlayers:
    """The players' side of a power cut: paused, then on again."""

    def power_off(self, now):
        self._off_at = now
        self._lost_press = self._press_in_flight(now)
        # The room goes dark: every finger leaves its key (a gesture cut
        # short is pressed again whole after the boot, below).
        keys = self.table.players
        del keys.queue[:]
        for pin in keys.pins:
            if self.table.physical.get(pin):
                self.table.emit(pin, 0)
        if self.off_take and self.hand is not None and not self.done:
            slot = self._stray_slot_on_table()
            if slot is not None:
                self.off_taken.append((now, slot))
                self.taken.append((now, slot, self.table.players_take(slot)))
                self.table.log_event("hand players", None, "taken while the power is off", slot)

    def power_on(self, now):
        """The firmware boots again: what was planned goes on `now - off`
        later; a roll the cut stopped is rolled again."""
        off = self._off_at
        if off is None:
            return
        self._off_at = None
        self.cuts.append((off, now))
        dt = now - off
        self.timeline[self._next:] = [(t + dt, i, slot, kind)
                                      for t, i, slot, kind in self.timeline[self._next:]]
        if self.scenario is not None:
            self._t += dt
        keys = self.table.players
        lost = self._lost_press
        self._lost_press = None
        if lost is not None and not self.abandoned and lost[2] == "win":
            # Still holding the key to win when the power went: again.
            keys.press(self.result["winner"], at=now, hold_ms=self.table.config.key_hold_ms + 300)
        elif lost is not None and not self.abandoned:
            # The kong's key was still being read when the power went: the
            # player sees no kong taken and presses again, then takes the
            # replacement no sooner than a press's time after.
            index = lost[1]
            self._press_kong(index, now)
            self.timeline[self._next:] = [
                (max(t, now + self.press_ms) if i == index else t, i, slot, kind)
                for t, i, slot, kind in self.timeline[self._next:]]
            self.timeline[self._next:] = sorted(self.timeline[self._next:], key=lambda e: e[0])
        if self.walls_up_at is not None and self.scenario is None and not self.abandoned:
            keys.armed_at = now         # the break's dice again, once the lamp shows
        elif self.awaiting_gold and not self.abandoned:
            # The gold's roll shown after the boot was kept before the cut
            # (dice_shown takes it); none shown by then: roll again.
            self.gold_again_at = now + self.reroll_ms

    def _press_in_flight(self, now):
        """The last kong key pressed before `now` if the controller cannot
        have read its gesture whole yet, else None: it reads one
        key_double_ms after the last release as the firmware debounces it
        (30 ms) at its ticks (10 ms: within 30 ms either way, where a cut
        may find the press read or not)."""
        presses = [e for e in self.timeline[:self._next] if e[3] in ("press", "win")]
        if not presses:
            return None
        t, index, _slot, kind = presses[-1]
        if kind == "win":                  # read once held key_hold_ms
            done = t + self.table.config.key_hold_ms + 50
            return (t, index, kind) if now < done else None
        ev = self.scenario["events"][index]
        last_release = t + self.tap_ms + (self.tap_ms + self.tap_gap_ms
                                          if ev["kind"] == "concealed" else 0)
        done = last_release + self.table.config.key_double_ms + 50
        return (t, index, kind) if now < done else None

    def _place_cut(self):
        if self.cut_on is not None and self.cut_at is None and not self.cuts:
            self.cut_at = self.cut_on(self)

    def _stray_slot_on_table(self):
        """A slot still on the table top far from the head and the tail."""
        wall = self.hand.wall
        geo = wall.geo
        present = [p for p in range(len(wall.how))
                   if geo.slot_of_pos[p] in self.table.top_walls[geo.slot_of_pos[p]
                                                                  // (2 * self.table.stacks)]]
        if len(present) < 12:
            return None
        return geo.slot_of_pos[present[len(present) // 2]]
