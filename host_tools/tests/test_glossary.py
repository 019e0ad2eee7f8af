"""One word per part: every Chinese text, Chinese doc and the parlour's
page use the glossary's term (host_tools/texts/glossary.py), never a
synonym it lists, and the glossary people read (docs/zh/glossary.md) is
the same list."""

import re
from pathlib import Path

from host_tools.image.mpenv import ROOT
from host_tools.texts import glossary, zh

GLOSSARY_DOC = Path(ROOT, "docs", "zh", "glossary.md")


def synonyms_in(text):
    """(concept, the synonym as written) for each synonym in `text`."""
    found = []
    for concept, (_, _, synonyms) in glossary.TERMS.items():
        for pattern in synonyms:
            found += [(concept, m.group(0)) for m in re.finditer(pattern, text)]
    return found


def chinese_sources():
    """(where, text) of everything a Chinese reader reads: each text and
    fault of zh.py, each Chinese doc but the glossary (which names the
    synonyms not to use), the page."""
    for key, text in zh.TEXTS.items():
        yield "zh.TEXTS[%r]" % key, text
    for code, words in zh.FAULTS.items():
        yield "zh.FAULTS[%d]" % code, " ".join(words)
    for doc in sorted(Path(ROOT, "docs", "zh").glob("*.md")):
        if doc != GLOSSARY_DOC:
            yield str(doc.relative_to(ROOT)), doc.read_text(encoding="utf-8")
    for name in ("page.html", "page.js"):
        path = Path(ROOT, "host_tools", "fleet", name)
        yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")


def test_the_check_finds_each_kind_of_synonym():
    # The scan itself: a synonym found where it stands, a numbered seat
    # written the other way found, the plain word for a seat left alone.
    assert synonyms_in("2号通道卡牌") == [("lane", "通道")]
    assert synonyms_in("升降机 {n}：上限位开关") == [("lifter", "升降机")]
    assert synonyms_in("座位 {n}") == [("seat", "座位 {")]
    assert synonyms_in("座位 2，洗牌盘") == [("plate", "洗牌盘"), ("seat", "座位 2")]
    assert synonyms_in("座位按键 [0, 0, 0, 0]，2号位，1号牌道，大盘") == []


def test_no_chinese_text_doc_or_page_uses_a_synonym():
    found = [(where, concept, word) for where, text in chinese_sources()
             for concept, word in synonyms_in(text)]
    assert found == []


def test_every_term_is_chinese_and_no_synonym_is_another_term():
    terms = {zh_term for _, zh_term, _ in glossary.TERMS.values()}
    for concept, (en_term, zh_term, synonyms) in glossary.TERMS.items():
        assert en_term and re.search("[\u4e00-\u9fff]", zh_term), concept
        for pattern in synonyms:
            assert not any(re.search(pattern, term) for term in terms), (concept, pattern)


def test_the_glossary_doc_lists_each_term_with_its_synonyms():
    rows = {}
    for line in GLOSSARY_DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 4 and not set(cells[0]) <= {"-"}:
            rows[cells[0]] = cells
    assert len(rows) - 1 == len(glossary.TERMS)         # the head row aside
    for concept, (en_term, zh_term, synonyms) in glossary.TERMS.items():
        assert en_term in rows, en_term
        _, zh_cell, synonyms_cell, meaning = rows[en_term]
        assert zh_cell == zh_term and meaning, en_term
        written = [] if synonyms_cell == "-" else synonyms_cell.split("、")
        assert len(written) == len(synonyms), en_term
        # Each synonym as the doc writes it is the one the check looks for.
        for word, pattern in zip(written, synonyms):
            example = word.replace("N", "2")
            assert re.search(pattern, example), (en_term, word)


def test_the_technician_s_guide_links_the_glossary():
    assert "glossary.md" in Path(ROOT, "docs", "zh", "technician.md").read_text(encoding="utf-8")
