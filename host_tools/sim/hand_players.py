"""Virtual players who play one hand on the walls in play.

Once four new walls are up and the table's dice have settled on the
display, `HandPlayers` reads the tile at every slot of the table top (the
tiles the RFID reader's level 1 sees) and takes the dealer and dice the
table shows, so the §13 scenario it writes is the real one, not an
invented shuffle. It then
chooses what the players do the way host_tools/sim/hand_script.random_hand
does (deal, flower rounds, the gold, draws in turn, an occasional kong or
stray tile), and applies every event to an engine_core `Hand` as it is
chosen: the rules core says which draw-order positions each event takes,
and the geometry turns them into physical slots. Those removals are then
scheduled on the virtual clock and done with `table.players_take(slot)`.

    hp = HandPlayers(table, seed=5)     # attaches itself to the table
    ... build, lift, dice: then the hand is planned ...
    table.advance_to(hp.end_time)       # every tile taken on time

`scenario` is the §13 object (replay it with engine_core.replay.replay);
`timeline` lists (virtual ms, event index, slot or None, kind), kind being
the event's op, "press" for the kong key a seat presses before a kong's
replacement (one tap: exposed, two: concealed), "roll" for the dealer's
press that rolls the table's dice for the gold (the `dice` method: the rest
of the hand is planned when that roll settles), or "win" for a seat holding
its key to claim the hand. An event that takes no tile (an empty flower
round, the draw called when nothing is left to draw) has one entry with
slot None. `result` is {"winner": seat} or {"draw": True}: the hand ends as
a draw (§8) when nothing is left to draw (the table calls it after its
grace time), or earlier when a player wins (`win_rate` per draw).

The gold indicator leaves its slot too (§7: it leaves play, face up on the
marker), so the reader no longer sees it there.

A power cut pauses the players (hand_power_cut.py says how, and what
`cut_after_ms`, `cut_on` and `off_take` do).
"""

import random

from engine_core.dice import roll
from engine_core.rulesets import load

from .hand_plan import HandPlan
from .hand_power_cut import PowerCutPlayers


class HandPlayers(HandPlan, PowerCutPlayers):
    deal_ms = 150           # between tiles while dealing
    tail_ms = 400           # between tiles taken from the tail (flowers, gold)
    think_ms = (1500, 4000)  # before each draw, kong or stray take
    key_think_ms = None     # before a kong's key, a win's key or a stray take, if
                            # not think_ms (a brisker pace's draws: host_tools/qa/soak/players.py)
    press_ms = 1200         # kong: key press to the replacement taken
    tap_ms = 120            # a short press; a double's second starts tap + gap later
    tap_gap_ms = 150
    after_take_ms = 2500    # a stray take: the table publishes it within 1.5 s
    gold_ms = 1000          # the flower rounds done to the gold turned up
    start_ms = 1000         # after the dice: the deal starts
    reroll_ms = 3000        # after a boot: the dealer rolls for the gold again

    def __init__(self, table, seed, ruleset=None, dealer=None, dice=None,
                 gold_dice=None, kong_rate=0.04, take_rate=0.01, win_rate=0.012,
                 skip_hands=0, attach=True, cut_after_ms=None, off_take=False, cut_on=None):
        """`skip_hands`: sets of walls to let go by before this hand (the
        players of a later hand can be attached before the table starts).
        `attach`: hook onto the table (else an owner, a Parlour, forwards
        the table's calls)."""
        self.table = table
        self.seed = seed
        self.rng = random.Random("hand_players:%s" % (seed,))
        self.ruleset = ruleset if ruleset is not None else table.rules.name
        self.rules = load(self.ruleset)
        if (self.rules.n_tiles, self.rules.stacks) != (table.rules.n_tiles, table.stacks):
            raise ValueError("%s does not fit this table's walls" % self.rules.name)
        rand = self.rng.randbytes
        self.fixed_dealer, self.fixed_dice = dealer, dice   # None: the table's
        self.dealer = dealer
        self.dice = list(dice) if dice is not None else None
        self.gold_dice = gold_dice
        self.watching = dealer is None or dice is None   # the table's dealer and dice
        if self.rules.gold_method == "dice" and gold_dice is None and not self.watching:
            self.gold_dice = list(roll(rand))   # no table to roll them (host tests)
        self.awaiting_gold = False  # the dealer has pressed for the gold dice (§7 dice)
        self.gold_again_at = None   # after a cut: roll for the gold again then, unless shown
        self.kong_rate = kong_rate
        self.take_rate = take_rate
        self.win_rate = win_rate
        self.result = None          # {"winner": seat} or {"draw": True}, once planned
        self.skip_hands = skip_hands
        self.scenario = None        # the §13 object, once the walls are up
        self.timeline = []          # (t, event index, slot or None, kind)
        self.hand = None            # the engine's Hand at the end of the plan
                                    # (its wall.remove is wrapped by the plan)
        self.walls_up_at = None
        self.taken = []             # (t, slot, tile): what was really removed
        self.skipped = []           # (t, slot): planned, but the slot was empty
        self.abandoned = False      # new walls came up during the hand
        self._next = 0
        self.cut_after_ms = cut_after_ms
        self.cut_on = cut_on        # cut_on(players): the cut's time from the plan, or None
        self.cut_at = None          # when the players cut the power (virtual ms)
        self.cuts = []              # (off, on): the power cuts seen during the hand
        self.off_take = off_take
        self.off_taken = []         # (t, slot): taken while the power was off
        self._off_at = None
        self._lost_press = None     # (t, event index, kind): a key the cut cut short
        if attach:
            table.attach(self)

    # -- the table's hooks -------------------------------------------------

    def walls_up(self, now):
        if self.skip_hands:
            self.skip_hands -= 1
        elif self.walls_up_at is None:
            self.walls_up_at = now
            if self.fixed_dealer is not None and self.fixed_dice is not None:
                self.start(now)     # told the dealer and dice: no need to watch the table
        elif not self.done:
            self.abandoned = True   # the old walls went to the tray
            self.table.log_event("hand players", None, "abandoned: new walls")

    def dice_shown(self, now, a, b):
        """The table's dice settled: the hand starts, with the dealer its
        lamp shows and these dice (unless the players were given others);
        or, the gold by the dice, the dealer's second roll turns the gold."""
        if self.awaiting_gold and not self.abandoned:
            self.awaiting_gold = False
            self.gold_again_at = None
            self.gold_dice = [a, b]
            self._t = max(self._t, now)
            self._play({"op": "reveal_gold", "dice": [a, b]}, self.gold_ms, self.tail_ms)
            self._plan_play()
            self._place_cut()
            return
        if self.walls_up_at is not None and self.scenario is None and not self.abandoned:
            if self.fixed_dealer is None:
                self.dealer = self.table.display.dealer_seat
            if self.fixed_dice is None:
                self.dice = [a, b]
            self.start(now)

    def start(self, now):
        """Plan the hand on the walls now on the table top. The deal
        begins `start_ms` from now."""
        codes = self._read_walls()
        if codes is None:           # a tile missing (a fault): nobody plays
            self.table.log_event("hand players", None, "a slot is empty: no hand")
            return
        self._plan(codes, now + self.start_ms)
        self._place_cut()
        self.table.log_event("hand players", None, "hand planned",
                             len(self.scenario["events"]), self.end_time)

    @property
    def done(self):
        return (self.scenario is not None and not self.awaiting_gold
                and self._next >= len(self.timeline))

    @property
    def end_time(self):
        return self.timeline[-1][0] if self.timeline else None

    def next_time(self, now):
        if self._off_at is not None:
            return None
        nxt = None
        if not self.abandoned and self._next < len(self.timeline):
            nxt = self.timeline[self._next][0]
        if self.cut_at is not None and (nxt is None or self.cut_at <= nxt) \
                and not self.done and not self.abandoned:
            return self.cut_at
        if self.gold_again_at is not None and (nxt is None or self.gold_again_at < nxt):
            return self.gold_again_at
        return nxt

    def _press_kong(self, index, at):
        ev = self.scenario["events"][index]
        keys = self.table.players
        keys.press(ev["seat"], at=at, hold_ms=self.tap_ms)
        if ev["kind"] == "concealed":
            keys.press(ev["seat"], at=at + self.tap_ms + self.tap_gap_ms, hold_ms=self.tap_ms)

    def run(self, dt):
        pass

    def fire(self, now):
        table = self.table
        if self._off_at is not None:
            return
        if self.cut_at is not None and now >= self.cut_at:
            self.cut_at = None
            if not self.done and not self.abandoned:
                table.power_cut()
                return
        if self.gold_again_at is not None and now >= self.gold_again_at:
            self.gold_again_at = None
            if self.awaiting_gold and not self.abandoned:
                table.players.press(self.dealer, at=now, hold_ms=self.tap_ms)
        while (not self.abandoned and self._next < len(self.timeline)
               and self.timeline[self._next][0] <= now):
            t, index, slot, kind = self.timeline[self._next]
            self._next += 1
            if kind == "press":           # a kong: one tap exposed, two concealed
                self._press_kong(index, now)
            elif kind == "roll":          # the dealer rolls for the gold
                table.players.press(self.dealer, at=now, hold_ms=self.tap_ms)
                self.awaiting_gold = True
            elif kind == "win":           # hold the key: "I win"
                table.players.press(self.result["winner"], at=now,
                                    hold_ms=table.config.key_hold_ms + 300)
            elif slot is not None:
                if slot in table.top_walls[slot // (2 * table.stacks)]:
                    self.taken.append((now, slot, table.players_take(slot)))
                else:
                    self.skipped.append((now, slot))
                    table.log_event("hand players", None, "slot already empty", slot)


class Parlour:
    """Players for hand after hand: a fresh, seeded HandPlayers for every
    set of walls that comes up (the live view, soak runs). `hands` lists
    them, the current one last.

        parlour = Parlour(table, seed=3)     # attaches itself to the table

    `players_class`: a HandPlayers subclass, e.g. one with another pace
    (host_tools/qa/soak/players.py); `players`: its keyword arguments.
    """

    def __init__(self, table, seed, players_class=None, **players):
        self.table = table
        self.seed = seed
        self.players_class = players_class or HandPlayers
        self.players = players
        self.hands = []
        table.attach(self)

    @property
    def current(self):
        return self.hands[-1] if self.hands else None

    def walls_up(self, now):
        hp = self.players_class(self.table, seed="%s:%d" % (self.seed, len(self.hands)),
                                attach=False, **self.players)
        self.hands.append(hp)
        hp.walls_up(now)

    def dice_shown(self, now, a, b):
        if self.hands:
            self.hands[-1].dice_shown(now, a, b)

    def next_time(self, now):
        return self.hands[-1].next_time(now) if self.hands else None

    def power_off(self, now):
        if self.hands:
            self.hands[-1].power_off(now)

    def power_on(self, now):
        if self.hands:
            self.hands[-1].power_on(now)

    def run(self, dt):
        pass

    def fire(self, now):
        if self.hands:
            self.hands[-1].fire(now)
