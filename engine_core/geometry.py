"""Table geometry and the break (spec §3, §4).

Physical slot (what the RFID reader under the wall reports):
    slot = (seat * S + k) * 2 + layer      k = 0 at the seat's right end
Draw order after the break (head first):
    stack i = 0 .. 4S-1 -> seat (c - (d + i) // S) % 4, stack (d + i) % S
    position p = 2 * i + layer             layer 0 = top, 1 = bottom

`Geometry` precomputes both directions once per hand as bytearrays so that the
hot path (a tile left slot X) is two index operations, no arithmetic objects.
"""

from engine_core.dice import SEATS, chosen_seat


class Geometry:
    def __init__(self, stacks, dealer, dice_sum):
        self.stacks = stacks
        self.n_stacks = SEATS * stacks
        self.n_pos = 2 * self.n_stacks
        # One byte per position: 144 tiles fit; the ruleset check keeps it so.
        self.slot_of_pos = bytearray(self.n_pos)
        self.pos_of_slot = bytearray(self.n_pos)
        self.reset(dealer, dice_sum)

    def reset(self, dealer, dice_sum):
        """The break of another hand, in the same tables (no allocation)."""
        if dice_sum < 2 or dice_sum > 12:
            raise ValueError("dice sum must be 2..12, not %r" % (dice_sum,))
        stacks = self.stacks
        self.seat = chosen_seat(dealer, dice_sum)
        self.skip = dice_sum
        for i in range(self.n_stacks):
            t = dice_sum + i               # stack_at(i), without its tuple
            top = ((self.seat - t // stacks) % SEATS * stacks + t % stacks) * 2
            self.slot_of_pos[2 * i] = top
            self.slot_of_pos[2 * i + 1] = top + 1
            self.pos_of_slot[top] = 2 * i
            self.pos_of_slot[top + 1] = 2 * i + 1

    def stack_at(self, i):
        """(seat, k) of draw-order stack i."""
        t = self.skip + i
        return (self.seat - t // self.stacks) % SEATS, t % self.stacks
