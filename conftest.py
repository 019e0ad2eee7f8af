"""Every test run, whatever the developer's locale: the tools' texts in
English, as the tests compare them (a zh_* locale would make mjctl and the
table view speak Chinese). The tests of Chinese ask for it themselves
(host_tools/tests/test_texts.py). And hypothesis without its deadline
(below)."""

import os

from hypothesis import settings

for _var in ("LC_ALL", "LC_MESSAGES", "LANG"):
    if os.environ.get(_var, "").lower().startswith("zh"):
        os.environ[_var] = "C.UTF-8"

# Hypothesis checks behaviour, not speed: its per-example deadline (200 ms)
# fails a property test when the machine is busy (a benchmark or another
# suite beside it), which says nothing about the code. Speed is measured
# by `make bench`.
settings.register_profile("project", deadline=None)
settings.load_profile("project")


# The longest tests start first (`@pytest.mark.long`): under pytest-xdist
# (`make test`), a long test that starts late is the run's tail while the
# other workers wait; started first, the rest of the suite runs beside it.
def pytest_configure(config):
    config.addinivalue_line("markers", "long: one of the suite's longest tests; it runs first")


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: item.get_closest_marker("long") is None)   # stable: order kept
