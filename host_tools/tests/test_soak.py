"""The soak (host_tools/soak.py) in small: eight hands on one table with a
fault at most sets of walls, some while a hand is followed. It must pass:
every hand equal to its replay, nothing stuck, no firmware error, and the
controller's counters equal to the virtual table's own counts. `make soak`
runs the long one (docs/reliability.md)."""

from host_tools.soak import soak


def test_eight_hands_with_faults_pass_the_soak():
    out = soak(8, seed=3, fault_rate=0.6)
    assert out["ok"], out
    assert out["injected"] >= 2 and out["faults"] == out["injected"], out
    assert out["counters"]["tiles_fed"] == out["table_counts"]["tiles_fed"]
    assert out["counters"]["lifts"] == out["table_counts"]["lifts"] == 9
