"""docs/faults.md tells the truth about firmware/faults.py (the one table)
and about the virtual table's fault injection."""

import os
import re

from host_tools.texts import faults
from host_tools.sim import faults as vfaults

DOC = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "faults.md"),
           encoding="utf-8").read()


def test_every_fault_code_is_documented_with_its_name():
    rows = dict(re.findall(r"^\| (\d+) \| `(\w+)` \|", DOC, re.M))
    assert {int(c): n for c, n in rows.items()} == {c: faults.name_of(c) for c in faults.codes()}


def test_every_fault_has_a_cause_and_a_fix():
    for code in faults.codes():
        name, cause, fix = faults.describe(code)
        assert name == faults.name_of(code) and len(cause) > 30 and len(fix) > 20


def test_every_injectable_fault_of_the_virtual_table_is_documented():
    for kind in vfaults.KINDS:
        assert "`%s" % kind in DOC, kind
