"""The wall as the table sees it: the geometry of the break, and which
draw-order positions still hold a tile.

Table geometry and the break (docs/rules.md §3, §4). Physical slot (what the RFID
reader under the wall reports):
    slot = (seat * S + k) * 2 + layer      k = 0 at the seat's right end
Draw order after the break (head first):
    stack i = 0 .. 4S-1 -> seat (c - (d + i) // S) % 4, stack (d + i) % S
    position p = 2 * i + layer             layer 0 = top, 1 = bottom

`Geometry` precomputes both directions once per hand as bytearrays so that the
hot path (a tile left slot X) is two index operations, no arithmetic objects.
It lives here with `Wall`: on the board every module costs heap and names.

`Wall` is the event-by-event API the firmware calls as the RFID reader
reports tiles leaving the wall (docs/rules.md §4, §9, §11). One byte per position
records whether the tile is there and, if not, how it left. Head and tail
are cached and only ever move by a scan over a few bytes, so `taken()`
allocates nothing. Positions are in draw order; `taken()` and `put_back()`
take physical slots, what the reader reports.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython
    def const(x):
        return x

from engine_core.dice import SEATS, chosen_seat

# How a position left the wall (0 = still there).
_IN_WALL = const(0)
HEAD = const(1)        # taken at the head
TAIL = const(2)        # taken at the tail
IRREGULAR = const(3)   # taken where the rules did not ask (§11)
GOLD = const(4)        # the gold indicator (§7), or a flower turned up in place

# Refusals of the event API: negative, so a caller tests `kind < 0`.
BAD_SLOT = const(-1)
ALREADY_EMPTY = const(-2)
NOT_EMPTY = const(-3)


class Geometry:
    def __init__(self, stacks, dealer, dice_sum):
        self.stacks = stacks
        self.n_stacks = SEATS * stacks
        # One byte per position, two positions a stack: 144 tiles fit; the
        # ruleset check keeps it so.
        self.slot_of_pos = bytearray(2 * self.n_stacks)
        self.pos_of_slot = bytearray(2 * self.n_stacks)
        self.reset(dealer, dice_sum)

    def reset(self, dealer, dice_sum):
        """The break of another hand, in the same tables (no allocation)."""
        if dice_sum < 2 or dice_sum > 12:
            raise ValueError("dice sum must be 2..12, not %r" % (dice_sum,))
        stacks = self.stacks
        self.seat = chosen_seat(dealer, dice_sum)
        self.skip = dice_sum
        # From the head (seat_of(0), stack_of(0)) the draw order walks round
        # the ring of §3.3: after stack S - 1 of seat s comes stack 0 of seat
        # s - 1. Walked rather than asked per stack: two calls per stack
        # make every hand's reset twice as slow.
        seat = self.seat_of(0)
        k = self.stack_of(0)
        for i in range(self.n_stacks):
            top = (seat * stacks + k) * 2
            self.slot_of_pos[2 * i] = top
            self.slot_of_pos[2 * i + 1] = top + 1
            self.pos_of_slot[top] = 2 * i
            self.pos_of_slot[top + 1] = 2 * i + 1
            k += 1
            if k == stacks:
                k = 0
                seat = (seat - 1) % SEATS

    # seat_of and stack_of hold the draw-order arithmetic (§4.3), an int
    # each: the follower calls them in the control loop, where a tuple is an
    # allocation.

    def seat_of(self, i):
        """The seat whose wall holds draw-order stack i."""
        return (self.seat - (self.skip + i) // self.stacks) % SEATS

    def stack_of(self, i):
        """k of draw-order stack i: its place along its seat's wall."""
        return (self.skip + i) % self.stacks

    def stack_at(self, i):
        """(seat, k) of draw-order stack i."""
        return self.seat_of(i), self.stack_of(i)


class Wall:
    def __init__(self, geo, tile_ids):
        """`geo`: a Geometry; `tile_ids`: one tile id per physical slot (a
        bytes-like object), or None: every tile 0 until a `reset`."""
        self.geo = geo
        n = 2 * geo.n_stacks               # positions
        self.tile = bytearray(n)           # tile id per draw-order position
        self.how = bytearray(n)            # _IN_WALL or how it left
        self.reset(tile_ids)

    def reset(self, tile_ids):
        """A full wall of these tiles, laid out by the geometry's current
        break, in the same buffers (the controller's next hand); None keeps
        the tiles there are."""
        g = self.geo
        n = len(self.how)
        for p in range(n):
            if tile_ids is not None:
                self.tile[p] = tile_ids[g.slot_of_pos[p]]
            self.how[p] = _IN_WALL
        self.count = n                     # W, tiles still in the wall
        # The head and tail caches, named _first and _last because the
        # firmware interns those names already (one name fewer on the board).
        self._first = 0                    # no tile before this position
        self._last = g.n_stacks - 1        # no tile after this stack

    # -- where the next tiles come from -------------------------------------

    def head_pos(self):
        """The next head position (lowest position still in the wall), or -1."""
        how = self.how
        p = self._first
        n = len(how)
        while p < n and how[p]:
            p += 1
        self._first = p
        return p if p < n else -1

    def tail_stack(self):
        """The last draw-order stack still holding a tile, or -1."""
        how = self.how
        i = self._last
        while i >= 0 and how[2 * i] and how[2 * i + 1]:
            i -= 1
        self._last = i
        return i

    def tail_pos(self):
        """The next tail position: top before bottom of the tail stack, or -1."""
        i = self.tail_stack()
        if i < 0:
            return -1
        return 2 * i if not self.how[2 * i] else 2 * i + 1

    def stack_back(self, n, start=-1):
        """The n-th stack holding a tile counting back from `start` (default:
        the tail end, which counts as 1), or -1 if there are fewer (§7, §9)."""
        how = self.how
        i = self.tail_stack() if start < 0 else start
        while i >= 0:
            if not (how[2 * i] and how[2 * i + 1]):
                n -= 1
                if n <= 0:
                    return i
            i -= 1
        return -1

    # -- tiles leaving and coming back --------------------------------------

    def remove(self, p, how):
        """Mark position p as gone; the caller has checked that it is there."""
        self.how[p] = how
        self.count -= 1

    def taken(self, slot):
        """A tile left physical `slot`: classify it as HEAD, TAIL or IRREGULAR
        and apply it, or return a negative refusal and change nothing."""
        if slot < 0 or slot >= len(self.how):
            return BAD_SLOT
        p = self.geo.pos_of_slot[slot]
        if self.how[p]:
            return ALREADY_EMPTY
        if p == self.head_pos():
            kind = HEAD
        elif p == self.tail_pos():
            kind = TAIL
        else:
            kind = IRREGULAR
        self.remove(p, kind)
        return kind

    def put_back(self, slot):
        """A tile came back to physical `slot` (always irregular, §11)."""
        if slot < 0 or slot >= len(self.how):
            return BAD_SLOT
        p = self.geo.pos_of_slot[slot]
        if not self.how[p]:
            return NOT_EMPTY
        self.how[p] = _IN_WALL
        self.count += 1
        if p < self._first:
            self._first = p
        if (p >> 1) > self._last:
            self._last = p >> 1
        return IRREGULAR

    # -- all-or-nothing events ----------------------------------------------

    def restore(self, how):
        """The wall as before an event: `how` is the copy of self.how the
        caller took then (Hand keeps it with the rest of what it puts back;
        the argument reuses the attribute's interned name)."""
        self.how[:] = how
        # `count` is the positions still in the wall: counted again rather
        # than saved (one attribute, and its name, fewer; refusals are rare).
        n = 0
        for k in how:
            if not k:
                n += 1
        self.count = n
        self._first = 0                    # caches are lower/upper bounds:
        self._last = self.geo.n_stacks - 1  # widen them, the scans re-narrow
