"""Every test run, whatever the developer's locale: the tools' texts in
English, as the tests compare them (a zh_* locale would make mjctl and the
table view speak Chinese). The tests of Chinese ask for it themselves
(host_tools/tests/test_texts.py)."""

import os

for _var in ("LC_ALL", "LC_MESSAGES", "LANG"):
    if os.environ.get(_var, "").lower().startswith("zh"):
        os.environ[_var] = "C.UTF-8"
