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
