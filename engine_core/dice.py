"""Dice, the break, and fair random choices from an injected RNG (docs/rules.md §4, §10).

The RNG is any callable `rand(n) -> n random bytes` (the HAL's DRBG on the
board, a seeded generator in tests). Choices use rejection sampling so that no face
and no seat is favoured: 256 is not a multiple of 6.
"""

SEATS = 4        # seats 0..3: is_int(v, 0, SEATS - 1), which refuses True/False


def chosen_seat(dealer, dice_sum):
    """The seat whose wall is broken: count counter-clockwise, dealer = 1."""
    return (dealer + dice_sum - 1) % SEATS


def uniform(rand, n):
    """A uniform integer 0..n-1 (n <= 256) from random bytes, unbiased."""
    limit = 256 - 256 % n
    while True:
        b = rand(1)[0]
        if b < limit:
            return b % n


def roll(rand):
    """Two fair dice."""
    return uniform(rand, 6) + 1, uniform(rand, 6) + 1


def random_seat(rand):
    """The first dealer of a session (docs/rules.md §10)."""
    return uniform(rand, SEATS)
