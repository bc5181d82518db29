"""Readability per language against hand-computed values, thresholds, flags and the composite score."""

from __future__ import annotations

import pytest

from heritage_pipeline.core.config import ChunkingConfig
from heritage_pipeline.enrich.quality import (assess_quality, composite_score, coverage_norm, degenerate_reason,
    drop_low_quality, is_boilerplate, readability)

from heritage_pipeline_tests._chunks import make_chunk


# Hand counts (words / sentences / syllables) and the published formulas:
# en  "Readability formulas estimate difficulty. Short words help readers." 8 w, 2 s; CMU syllables
#     re-a-da-bil-i-ty 5, for-mu-las 3, es-ti-mate 3, dif-fi-cul-ty 4 | short 1 words 1 help 1 read-ers 2 = 20
#     Flesch 1948: 206.835 - 1.015*4 - 84.6*2.5 = -8.725
# fr  "Le petit chat dort. Le garçon joue." 7 w, 2 s; le 1 pe-tit 2 chat 1 dort 1 | le 1 gar-çon 2 joue 1 = 9
#     Kandel & Moles 1958: 207 - 1.015*3.5 - 73.6*9/7 = 108.8189
# de  "Der kleine Hund schläft. Die Kinder spielen draußen." 8 w, 2 s; 1+2+1+1 | 1+2+2+2 = 12
#     Amstad 1978: 180 - 4 - 58.5*1.5 = 88.25
# nl  "De kleine hond slaapt. De kinderen spelen buiten." 8 w, 2 s; 1+2+1+1 | 1+3+2+2 = 13
#     Flesch-Douma 1960: 206.835 - 0.93*4 - 77*13/8 = 77.99
@pytest.mark.parametrize("text,lang,expected,formula", [
    ("Readability formulas estimate difficulty. Short words help readers.", "en", -8.725, "flesch_en"),
    ("Le petit chat dort. Le garçon joue.", "fr", 207 - 1.015 * 3.5 - 73.6 * 9 / 7, "kandel_moles_fr"),
    ("Der kleine Hund schläft. Die Kinder spielen draußen.", "de", 88.25, "amstad_de"),
    ("De kleine hond slaapt. De kinderen spelen buiten.", "nl", 206.835 - 0.93 * 4 - 77 * 13 / 8, "flesch_douma_nl"),
])
def test_readability_matches_hand_computed_values(text, lang, expected, formula):
    score, name = readability(text, lang)
    assert name == formula
    assert score == pytest.approx(expected, abs=0.011)


def test_other_languages_have_no_formula_and_say_so():
    assert readability("Il gatto dorme sul letto. Il cane corre.", "it") == (None, "none")
    assert readability("Le petit chat dort. Le garçon joue.", "fr", metric="none") == (None, "none")
    # a forced formula applies to every language
    assert readability("Der kleine Hund schläft. Die Kinder spielen draußen.", "de", metric="flesch_en")[1] == "flesch_en"


def test_code_and_tables_are_not_scored_as_prose():
    prose = "Readability formulas estimate difficulty. Short words help readers."
    with_code = prose + "\n\n```python\ndef extraordinarily_complicated_function_name(x): return x\n```\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    assert readability(with_code, "en")[0] == readability(prose, "en")[0]


def test_thresholds_per_domain_and_flags():
    cfg = ChunkingConfig()
    text = "The cat sat on the mat. It was a sunny day and the cat was happy there. " * 20
    tech, faq = make_chunk(0, text, len_tokens=350), make_chunk(1, text, len_tokens=250, domain="faq")
    rec = make_chunk(2, "preferred_label: Rijksmuseum\nsettlement: Amsterdam", source_type="csv_registry")
    assess_quality([tech, faq, rec], cfg)
    assert tech.quality.readability > 50 and tech.quality.readability_ok and faq.quality.readability_ok
    assert tech.quality.length_ok and not faq.quality.length_ok
    assert rec.quality.readability is None and rec.quality.readability_formula == "none (record)"
    hard = make_chunk(3, "Readability formulas estimate difficulty. Short words help readers.", domain="faq")
    assess_quality([hard], cfg)
    assert hard.quality.readability_ok is False


def test_composite_score_definition():
    assert composite_score(70.0, 600, 300, 0.0) == pytest.approx(0.4 * 0.7 + 0.4 * 1 + 0.2)
    assert composite_score(None, 150, 300, 0.5) == pytest.approx(0.4 * 0.5 + 0.4 * 0.5 + 0.2 * 0.5)
    assert composite_score(120.0, 2400, 300, 2.0, max_tokens=1200) == pytest.approx(0.4 + 0.4 * 0.5 + 0.0)
    assert coverage_norm(0, 300, 1200) == 0.0


def test_boilerplate_flag():
    assert is_boilerplate("© 2024 Rijksmuseum. All rights reserved. Privacy policy")
    assert is_boilerplate("[Home](/) [About](/about) [Contact](/contact) [Collection](/collection)")
    assert not is_boilerplate("The museum holds 8,000 objects from the Dutch Golden Age, including paintings by "
                              "Rembrandt and Vermeer, and a library of 400,000 volumes open to researchers.")
    assert is_boilerplate("   ")


def test_dropping_is_opt_in():
    cs = [make_chunk(0, "Cookie settings: accept all cookies"), make_chunk(1, "A real paragraph about archives.", len_tokens=20)]
    assess_quality(cs, ChunkingConfig())
    assert drop_low_quality(cs, ChunkingConfig()) == (cs, [])
    on = ChunkingConfig.model_validate({"quality": {"drop_low_quality": True, "drop_reasons": ["boilerplate", "length"]}})
    kept, dropped = drop_low_quality(cs, on)
    assert kept == [] and [why for _, why in dropped][0] == "boilerplate" and "length" in dropped[1][1]


ONE_CHAR_PER_LINE = "\n".join("Het Rijksmuseum in Amsterdam bewaart schilderijen"[i % 49] for i in range(600))


@pytest.mark.parametrize("text, reason", [
    (ONE_CHAR_PER_LINE, "one character per line"),
    ("Eat a banana!" * 400, "one phrase repeated"),
    ("Eat a banana! " * 400, "one phrase repeated"),
    ("\ufffd\ufffd\ufffd\x07\x08 kapotte tekst " * 20, "extraction garbage (replacement or control characters)"),
    ("$%^&*()!@#~|<>{}[]" * 40, "no words (mostly symbols)"),
])
def test_degenerate_text_is_flagged_with_a_reason_and_scores_below_real_text(text, reason):
    """Regression: a one-character-per-line file gave 33 chunks with quality scores above real text."""
    real = make_chunk(0, "Het Rijksmuseum in Amsterdam is het nationale museum van Nederland voor kunst en "
                         "geschiedenis. De collectie omvat schilderijen uit de Gouden Eeuw.", lang="nl", len_tokens=40)
    bad = make_chunk(1, text, lang="nl", len_tokens=400)
    assess_quality([real, bad], ChunkingConfig())
    assert degenerate_reason(text) == reason
    assert bad.quality.degenerate and bad.quality.degenerate_reason == reason and not real.quality.degenerate
    assert bad.quality.score < real.quality.score


@pytest.mark.parametrize("text", [
    "```python\ndef f(x):\n    return {k: v for k, v in x.items() if v}\n```",
    "| ISIL | Plaats |\n|---|---|\n| NL-0100030000 | Den Haag |\n| NL-AsdRM | Amsterdam |",
    "Name: Rijksmuseum\nType: Museum\nISIL: NL-AsdRM\nWikidata: Q190804",
    "国立国会図書館は日本の国立図書館です。東京都千代田区にあります。",
    "1\n2\n3",  # too few lines to call it one character per line
])
def test_real_text_is_not_degenerate(text):
    assert degenerate_reason(text) is None


def test_degenerate_chunks_can_be_dropped_by_config():
    cs = [make_chunk(0, ONE_CHAR_PER_LINE), make_chunk(1, "A real paragraph about archives and libraries.", len_tokens=20)]
    assess_quality(cs, ChunkingConfig())
    on = ChunkingConfig.model_validate({"quality": {"drop_low_quality": True, "drop_reasons": ["degenerate"]}})
    kept, dropped = drop_low_quality(cs, on)
    assert kept == [cs[1]] and dropped[0][1] == "degenerate text: one character per line"


def _degenerate_reason_per_character(text):
    """The character-by-character rules :func:`degenerate_reason` implements with str.split, a regex and map."""
    import unicodedata

    chars = [ch for ch in text if not ch.isspace()]
    if not chars:
        return "no text"
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(lines) >= 8 and sum(len(ln) <= 2 for ln in lines) >= 0.8 * len(lines):
        return "one character per line"
    garbage = sum(1 for ch in chars if ch == "\ufffd" or unicodedata.category(ch) in ("Cc", "Co", "Cs"))
    if garbage > 0.05 * len(chars):
        return "extraction garbage (replacement or control characters)"
    if sum(1 for ch in chars if ch.isalnum()) < 0.3 * len(chars):
        return "no words (mostly symbols)"
    words = text.split()
    if len(words) >= 100:
        grams = list(zip(words, words[1:], words[2:]))
        if len(set(grams)) < 0.05 * len(grams):
            return "one phrase repeated"
    return None


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=30), st.sampled_from(["\ufffd", "\x00", "\x85", "\u2028", "\ue000",
                                                                   "\U000f0001", "a\nb\n", "word word word ", "—"])),
                max_size=40).map("".join))
def test_degenerate_reason_equals_the_per_character_rules(text):
    assert degenerate_reason(text) == _degenerate_reason_per_character(text)


def test_degenerate_reason_equals_the_per_character_rules_on_real_files():
    from heritage_pipeline.core.config import REPO_ROOT

    files = sorted(p for p in (REPO_ROOT / "data" / "raw").rglob("*") if p.is_file() and p.suffix in (".md", ".json", ".html", ".csv", ".txt"))
    assert len(files) > 20
    for p in files:
        text = p.read_text(encoding="utf-8", errors="replace")
        for piece in [text] + [text[i : i + 3000] for i in range(0, min(len(text), 60000), 3000)]:
            assert degenerate_reason(piece) == _degenerate_reason_per_character(piece), p
