"""docs/faults.md's recipe for adding a fault holds for every fault of
firmware/faults.py: each place the recipe names has it. A fault added to
the table and missed in one place fails here, with the recipe's step."""

import re
from pathlib import Path

import pytest

from host_tools.sim import faults as vfaults
from host_tools.texts import en, faults, zh

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "faults.md").read_text(encoding="utf-8")
# How the virtual table makes a fault, where its injection is not named
# after it (docs/faults.md, the table's last column).
INJECTED_AS = {"power_lost": "power_cut"}


def _firmware_sources():
    for path in sorted((ROOT / "firmware").rglob("*.py")):
        if "tests" not in path.parts and path.name != "faults.py":
            yield path.read_text(encoding="utf-8")


def _tests_text():
    """The tests that run the firmware (not the tables' own tests)."""
    tables = {"test_fault_recipe.py", "test_faults_doc.py", "test_texts.py"}
    return "".join(p.read_text(encoding="utf-8")
                   for d in ("hw_tests", "firmware/tests", "host_tools/tests")
                   for p in sorted((ROOT / d).glob("test_*.py")) if p.name not in tables)


FIRMWARE = "".join(_firmware_sources())
TESTS = _tests_text()
FAULT_CASES = (ROOT / "hw_tests" / "test_faults.py").read_text(encoding="utf-8")


def _row(name):
    m = re.search(r"^\| \d+ \| `%s` \|.*$" % name, DOC, re.M)
    return m.group(0) if m else None


def test_the_recipe_is_in_the_doc():
    assert "## Adding a fault" in DOC


@pytest.mark.parametrize("code", faults.codes())
def test_every_fault_is_in_every_place_the_recipe_names(code):
    name = faults.name_of(code)
    constant = name.upper()
    # 1. firmware/faults.py: the table's block and the constant by name.
    import firmware.faults
    assert getattr(firmware.faults, constant, None) == code, \
        "step 1: firmware/faults.py has no %s = %d" % (constant, code)
    # 2. raised by the firmware, by its name (the build inlines it).
    assert re.search(r"\b%s\b" % constant, FIRMWARE), \
        "step 2: no firmware module raises %s (from firmware.faults import %s as _%s)" % (
            name, constant, constant)
    # 3. its Chinese name, cause and fix.
    assert code in zh.FAULTS, "step 3: host_tools/texts/zh.py FAULTS has no %d" % code
    # 4. its row in docs/faults.md and in the Chinese guide.
    assert _row(name), "step 4: docs/faults.md has no row for %s" % name
    guide = (ROOT / "docs" / "zh" / "technician.md").read_text(encoding="utf-8")
    assert re.search(r"^\| %d \|" % code, guide, re.M), \
        "step 4: docs/zh/technician.md has no row for %d" % code
    # 5. the virtual table makes it, or its row says why not.
    kind = INJECTED_AS.get(name, name)
    if kind in vfaults.KINDS:
        assert "`%s" % kind in _row(name), "step 5: the row of %s names no injection" % name
        # 6. and hw_tests/test_faults.py injects it.
        assert re.search(r'Case\("%s\b' % kind, FAULT_CASES), \
            "step 6: hw_tests/test_faults.py has no Case for %s" % kind
    else:
        last = _row(name).rstrip(" |").rsplit("|", 1)[1].strip()
        assert not last.startswith("`"), "step 5: %s is not among the virtual table's KINDS" % name
    # 6. some test makes the firmware raise it.
    assert re.search(r"\b%s\b|\b%s\b|fault_%d\b" % (name, constant, code), TESTS), \
        "step 6: no test under hw_tests/, firmware/tests/ or host_tools/tests/ raises %s" % name


def test_every_detail_field_of_the_doc_has_its_words():
    """Step 7: each field of a fault's detail (docs/faults.md's detail
    column) is labelled in both languages."""
    fields = set()
    for row in re.findall(r"^\| \d+ \| `\w+` \|.*$", DOC, re.M):
        fields |= set(re.findall(r"`(\w+)`", row.split("|")[5]))
    fields -= {faults.name_of(code) for code in faults.codes()}    # "as for `missing_tile`"
    # A `reason`'s words (a lifter's: `stayed_bottom`...) are said by their own texts.
    reasons = {w for w in fields if "reason." + w in en.TEXTS}
    assert {"both_closed", "stayed_bottom", "top_open"} <= reasons
    for word in reasons:
        assert "reason." + word in zh.TEXTS, word
    fields -= reasons
    assert fields
    for key in sorted(fields):
        assert "detail.%s" % key in en.TEXTS and "detail.%s" % key in zh.TEXTS, key
