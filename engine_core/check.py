"""Input checks shared by every module that reads numbers from outside."""


def is_int(v, lo, hi):
    """A whole number lo..hi. True/False are ints that compare equal to 1/0
    on both interpreters; as input they are mistakes, so they are refused."""
    return isinstance(v, int) and v is not True and v is not False and lo <= v <= hi
