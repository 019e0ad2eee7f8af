"""The four wall lanes: pick-up from the plate, the chute, stacking.

Lane n builds the wall of seat n on its lifter's platform. A tile arrives
in the lane's chute (which holds one tile) after a random gap, then the
stacker takes `stack_ms` of motor time to put it on the wall, and the
count sensor gives a `pulse_ms` pulse. The j-th tile of a wall goes to slot
(n*S + j//2)*2 + (1 - j%2): bottom layer (1) first, then the top layer (0)
of the same stack.

Gaps are exponential (mean `mean_gap_ms`) from a per-lane seeded stream,
one gap drawn each time the chute becomes free; a gap's clock runs only
while the lane can accept (feed on, plate turning and holding tiles, chute
free, lane not full, not jammed). So a lane's gap sequence does not depend
on timing, and the lower bound can replay it (see bound.py).

Stacking runs while the feed motor is on and the platform is at the bottom
and idle; it pauses otherwise (the tile waits in the chute).
"""


def slot_of(side, j, stacks):
    return (side * stacks + j // 2) * 2 + (1 - j % 2)


class Wall:
    """One wall as a lane built it: tiles in stacking order, with the gap
    that preceded each tile's arrival and the time it was stacked."""

    def __init__(self, side, stacks):
        self.side = side
        self.stacks = stacks
        self.tiles = []
        self.gaps = []
        self.stacked_at = []
        self.delivered_at = None    # reached the table top

    def slots(self):
        """{slot: tile} of the tiles stacked so far."""
        return {slot_of(self.side, j, self.stacks): t
                for j, t in enumerate(self.tiles) if t is not None}


class Lane:
    mean_gap_ms = 400       # 2.5 tiles/s while the lane can accept
    stack_ms = 300
    pulse_ms = 20

    def __init__(self, table, side, rng):
        self.table = table
        self.side = side
        self.rng = rng
        self.cap = 2 * table.stacks
        self.pin = table.config.pin("lane_count", side)
        self.feed = False
        self.jammed = False             # lane_jam: nothing moves in this lane
        self.chute = None               # the tile waiting to be stacked
        self.chute_gap = None           # the gap that brought it
        self.stack_left = self.stack_ms
        self.gaps_drawn = []
        self.gap_left = self._draw()
        self.pulse_end = None
        self.walls = [Wall(side, table.stacks)]     # walls[-1] is on the platform
        self.fed = 0                    # tiles picked up from the plate, ever
        self.stacked = 0                # tiles stacked, ever
        table.init_input(self.pin, 0)

    @property
    def wall(self):
        return self.walls[-1]

    def _draw(self):
        gap = int(self.rng.expovariate(1.0 / self.mean_gap_ms) + 0.5)
        self.gaps_drawn.append(gap)
        return gap

    def accepting(self):
        plate = self.table.plate
        return (self.feed and not self.jammed and self.chute is None
                and len(self.wall.tiles) < self.cap
                and plate.turning and len(plate.queue) > 0)

    def stacking(self):
        return (self.chute is not None and self.feed and not self.jammed
                and len(self.wall.tiles) < self.cap
                and self.table.lifters[self.side].idle_at_bottom())

    def next_time(self, now):
        best = self.pulse_end
        if self.stacking():
            t = now + self.stack_left
            best = t if best is None else min(best, t)
        if self.accepting():
            t = now + self.gap_left
            best = t if best is None else min(best, t)
        return best

    def run(self, dt):
        if self.stacking():
            self.stack_left -= dt
        if self.accepting():
            self.gap_left -= dt

    def fire(self, now):
        table = self.table
        if self.pulse_end == now:
            self.pulse_end = None
            table.emit(self.pin, 0)
        if self.chute is not None and self.stack_left <= 0:
            wall = self.wall
            wall.tiles.append(self.chute)
            wall.gaps.append(self.chute_gap)
            wall.stacked_at.append(now)
            self.stacked += 1
            table.log_event("lane", self.side, "stacked", self.chute.code, len(wall.tiles))
            self.chute = None
            self.stack_left = self.stack_ms
            self.gap_left = self._draw()
            self.pulse_end = now + self.pulse_ms
            table.emit(self.pin, 1)
        if self.chute is None and self.gap_left <= 0 and self.accepting():
            self.chute = table.plate.take()
            self.chute_gap = self.gaps_drawn[-1]
            self.fed += 1

    def clear_chute(self):
        """A tile taken out of the chute by hand: the chute is free again."""
        self.chute = None
        self.stack_left = self.stack_ms
        self.gap_left = self._draw()

    def platform_left(self, now):
        """The platform took the wall to the top: the next wall starts."""
        self.wall.delivered_at = now
        self.walls.append(Wall(self.side, self.table.stacks))
