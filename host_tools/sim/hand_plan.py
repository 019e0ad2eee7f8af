"""The plan of a hand that `HandPlayers` (hand_players.py) play: the §13
scenario and the timeline of what the players do, chosen as
host_tools/sim/hand_script.random_hand does and applied to an engine_core
`Hand` event by event, so the rules core says which draw-order positions
each event takes and the geometry turns them into physical slots.

`HandPlan` is a part of `HandPlayers`, which holds its state (the table,
the rng, the paces, `scenario`, `timeline`, `hand`, `result`).
"""

from engine_core import tiles
from engine_core.hand import DRAW, FINAL, PLAY, Hand, Refused
from engine_core.replay import apply


class HandPlan:
    """The scenario and its timeline, planned on the walls in play."""

    def _read_walls(self):
        """Tile code per physical slot, from the walls in play (None if a
        slot is empty)."""
        codes = []
        per_side = 2 * self.table.stacks
        for slot in range(self.rules.n_tiles):
            tile = self.table.top_walls[slot // per_side].get(slot)
            if tile is None:
                return None
            codes.append(tile.code)
        return codes

    def _plan(self, codes, t0):
        """The opening now; the play too, unless the gold waits for the
        table's dice (then dice_shown plans the rest)."""
        hand = Hand(self.rules, self.dealer, self.dice[0] + self.dice[1],
                    bytearray(tiles.tile_id(c) for c in codes))
        self._took = []             # positions the current event removed
        remove = hand.wall.remove

        def logged_remove(p, how):
            self._took.append(p)
            remove(p, how)
        hand.wall.remove = logged_remove
        self.scenario = {"ruleset": self.ruleset, "dealer": self.dealer,
                         "dice": list(self.dice), "tiles": codes, "events": []}
        self.hand = hand
        self._t = t0
        if self.cut_after_ms is not None:
            self.cut_at = t0 + self.cut_after_ms
        self._play({"op": "deal"}, 0, self.deal_ms)
        self._play({"op": "replace_flowers"}, self.gold_ms, self.tail_ms)
        if self.rules.gold_method == "dice" and self.gold_dice is None:
            # The dealer presses the dice key; the rest waits for the roll.
            self.timeline.append((self._t + self.gold_ms, len(self.scenario["events"]) - 1,
                                  None, "roll"))
            return
        gold = {"op": "reveal_gold"}
        if self.rules.gold_method == "dice":
            gold["dice"] = list(self.gold_dice)
        self._play(gold, self.gold_ms, self.tail_ms)
        self._plan_play()

    def _play(self, ev, first_gap, gap):
        """Apply `ev` to the plan's Hand and schedule its tiles; False if
        the rules refuse it."""
        hand, events = self.hand, self.scenario["events"]
        del self._took[:]
        try:
            apply(hand, ev)
        except Refused:
            return False
        index = len(events)
        events.append(ev)
        self._t += first_gap
        if ev["op"] == "kong":
            self.timeline.append((self._t, index, None, "press"))
            self._t += self.press_ms
        slots = [hand.wall.geo.slot_of_pos[p] for p in self._took] or [None]
        for j, slot in enumerate(slots):
            if j:
                self._t += gap
            self.timeline.append((self._t, index, slot, ev["op"]))
        return True

    def _plan_play(self):
        """Draws in turn, kongs, stray takes, to a win or a draw."""
        rng, hand, events = self.rng, self.hand, self.scenario["events"]
        seat = (self.dealer + 1) % 4          # the dealer discards first
        while hand.phase != DRAW:
            think = rng.randint(*self.think_ms)
            if events[-1]["op"] == "take":
                think += self.after_take_ms
            r = rng.random()
            if hand.drawable <= 0:
                # Nothing left to draw: nobody wins, the table calls the draw
                # (和局) after its grace time; the players only wait.
                self._play({"op": "draw", "seat": seat}, self.table.config.draw_grace_ms, 0)
                self.result = {"draw": True}
                break
            if events[-1]["op"] == "draw" and rng.random() < self.win_rate:
                self.result = {"winner": events[-1]["seat"]}
                self.timeline.append((self._t + self._key_think(think, events), len(events) - 1,
                                      None, "win"))
                break
            if hand.phase == PLAY and r < self.kong_rate:
                who = rng.randrange(4)
                ev = {"op": "kong", "seat": who,
                      "kind": "concealed" if rng.random() < 0.4 else "exposed"}
                nxt = (who + 1) % 4
            elif hand.phase in (PLAY, FINAL) and r < self.kong_rate + self.take_rate:
                slot = self._stray_slot(hand)
                if slot is None:
                    continue
                ev = {"op": "take", "slot": slot}
                nxt = seat
            else:
                ev = {"op": "draw", "seat": seat}
                nxt = (seat + 1) % 4
            if ev["op"] != "draw":
                think = self._key_think(think, events)
            if self._play(ev, think, self.tail_ms):
                seat = nxt

    def _key_think(self, think, events):
        """The pause before a kong's key, a win's key or a stray take:
        `think` unless `key_think_ms` is set (one more draw of the rng only
        then, so the parlour's hands stay what they were)."""
        if self.key_think_ms is None:
            return think
        think = self.rng.randint(*self.key_think_ms)
        if events[-1]["op"] == "take":
            think += self.after_take_ms
        return think

    def _stray_slot(self, hand):
        """A slot still in the wall that is neither the head nor the tail,
        so the reader sees a take the rules did not ask for (§11)."""
        wall = hand.wall
        rules_next = (wall.head_pos(), wall.tail_pos())
        free = [p for p in range(len(wall.how)) if not wall.how[p] and p not in rules_next]
        if not free:
            return None
        return wall.geo.slot_of_pos[self.rng.choice(free)]
