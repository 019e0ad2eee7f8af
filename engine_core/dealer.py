"""Dealer and streak across hands (docs/rules.md §10)."""

from engine_core.tiles import is_int
from engine_core.dice import SEATS, random_seat


class Dealership:
    """Who deals, and how many hands in a row the dealer has won."""

    def __init__(self, dealer, wins_in_row=0):
        if not is_int(dealer, 0, SEATS - 1):
            raise ValueError("dealer must be a seat 0..3, not %r" % (dealer,))
        if not is_int(wins_in_row, 0, 1 << 30):
            raise ValueError("wins_in_row must be >= 0, not %r" % (wins_in_row,))
        self.dealer = dealer
        self.wins_in_row = wins_in_row

    @staticmethod
    def first(rand):
        """A new session: the first dealer is drawn from the RNG. (Static:
        a classmethod's `cls` would be one more interned name.)"""
        return Dealership(random_seat(rand))

    @property
    def streak(self):
        """连庄数 for scoring: the first win on taking the seat does not count."""
        return self.wins_in_row - 1 if self.wins_in_row > 1 else 0

    def hand_ended(self, winner):
        """`winner`: the winning seat, or None for a draw (和局)."""
        if winner is None:
            return
        if not is_int(winner, 0, SEATS - 1):
            raise ValueError("winner must be a seat 0..3 or None, not %r" % (winner,))
        if winner == self.dealer:
            self.wins_in_row += 1
        else:
            self.dealer = (self.dealer + 1) % SEATS
            self.wins_in_row = 0
