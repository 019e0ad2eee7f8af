"""The table's dice are fair: 600,000 rolls of the firmware's own dice
under MicroPython (host_tools/bench/dice.py: firmware.drivers.panel's Dice,
engine_core's rejection sampling, on the HAL's HMAC_DRBG), the chi-square
test of the 1,200,000 faces against a fair die.

The DRBG's raw generator is seeded here as a virtual table's is, so that
the counts, and the verdict, are the same at every run: with os.urandom a
fair die would fail one run in a hundred (`make bench` rolls that way and
reports it as dice_chi2_p). A die with one face at 17.2 % instead of
16.7 % gives p below 1e-40 at this many rolls."""

from host_tools.bench import dice


def test_600000_rolls_give_no_evidence_of_bias():
    figures, details = dice.measure(rolls=dice.ROLLS, seed=1)
    assert dice.ROLLS == 600000
    assert sum(details["faces"]) == 2 * 600000 and details["dof"] == 5
    assert figures["dice_chi2_p"] >= 0.01, details
    assert min(details["p_per_die"].values()) >= 0.01, details


def test_the_seeded_rolls_are_the_same_every_run_and_another_seed_others():
    first = dice.measure(rolls=2000, seed=1)[1]["faces"]
    assert dice.measure(rolls=2000, seed=1)[1]["faces"] == first
    assert dice.measure(rolls=2000, seed=2)[1]["faces"] != first
