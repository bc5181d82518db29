"""The section-type evaluation (heritage_pipeline_eval.sections): sections cut from labelled headings, accuracy,
per-language figures and the confusion matrix on a small labelled set written here; the real set's shape."""

from __future__ import annotations

import json

import pytest

from heritage_pipeline_eval.sections import DEFAULT_SECTIONS, evaluate_sections, load_sections, sections_report

PAGE_MD = "# Over ons\n\nWie we zijn, ons team.\n\n## Openingstijden\n\nDinsdag tot vrijdag 9:00-17:00 uur geopend.\n\n## Colofon\n\nLicentie CC0.\n"
PAGE_HTML = "<html><body>\n<h1>Über uns</h1>\n<p>Wir sind ein <b>Verein</b>.</p>\n<h2>Kontakt</h2>\n<p>E-Mail: a@b.de</p>\n</body></html>\n"


def _label(page: str, raw: str, heading_line: str, heading: str, level: int, label: str, lang: str, split: str):
    return {"page": page, "char_start": raw.index(heading_line), "heading": heading, "heading_level": level,
            "lang": lang, "site": page.split("/")[0], "split": split, "label": label}


@pytest.fixture()
def labelled(tmp_path):
    (tmp_path / "nl").mkdir()
    (tmp_path / "de").mkdir()
    (tmp_path / "nl" / "archief.md").write_text(PAGE_MD, encoding="utf-8")
    (tmp_path / "de" / "verein.html").write_text(PAGE_HTML, encoding="utf-8")
    recs = [_label("nl/archief.md", PAGE_MD, "# Over ons", "Over ons", 1, "about", "nl", "dev"),
            _label("nl/archief.md", PAGE_MD, "## Openingstijden", "Openingstijden", 2, "visit", "nl", "dev"),
            _label("nl/archief.md", PAGE_MD, "## Colofon", "Colofon", 2, "other", "nl", "dev"),
            _label("de/verein.html", PAGE_HTML, "<h1>Über uns</h1>", "Über uns", 1, "about", "de", "test"),
            _label("de/verein.html", PAGE_HTML, "<h2>Kontakt</h2>", "Kontakt", 2, "history", "de", "test")]
    (tmp_path / "labels.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n", encoding="utf-8")
    return tmp_path


def test_sections_are_cut_at_labelled_headings_with_their_paths(labelled):
    secs = {s["heading"]: s for s in load_sections(labelled)}
    assert secs["Openingstijden"]["anchors"] == ["Over ons", "Openingstijden"]
    assert secs["Openingstijden"]["body"] == "Dinsdag tot vrijdag 9:00-17:00 uur geopend."
    assert secs["Colofon"]["anchors"] == ["Over ons", "Colofon"]
    assert secs["Über uns"]["body"] == "Wir sind ein Verein ."  # tags removed, text kept
    assert secs["Kontakt"]["anchors"] == ["Über uns", "Kontakt"]


def test_accuracy_confusion_and_errors_per_split(labelled):
    result = evaluate_sections(labelled, min_confidence=0.3, zero_shot="none")
    assert result["zero_shot"] == "none"
    dev, test = result["splits"]["dev"], result["splits"]["test"]
    assert (dev["correct"], dev["n"], dev["accuracy"]) == (3, 3, 1.0)
    # the 'Kontakt' section is labelled history here on purpose: counted wrong, in the matrix as history -> contact
    assert (test["correct"], test["n"], test["accuracy"]) == (1, 2, 0.5)
    assert test["confusion"]["history"]["contact"] == 1
    assert test["errors"] == [{"page": "de/verein.html", "heading": "Kontakt", "gold": "history",
                               "predicted": "contact", "confidence": test["errors"][0]["confidence"]}]
    assert test["by_lang"] == {"de": {"correct": 1, "n": 2, "accuracy": 0.5}}
    report = sections_report(result)
    assert "## test: accuracy 0.500 (1/2)" in report and "## dev: accuracy 1.000 (3/3)" in report


def test_bad_label_line_names_file_and_line(labelled):
    with (labelled / "labels.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"page": "nl/archief.md"}\n')
    with pytest.raises(ValueError, match=r"labels\.jsonl:6"):
        load_sections(labelled)


def test_real_labelled_set_has_held_out_sites_in_four_languages():
    secs = load_sections(DEFAULT_SECTIONS)
    test = [s for s in secs if s["split"] == "test"]
    assert len(test) >= 60 and {s["lang"] for s in test} == {"nl", "en", "fr", "de"}
    dev_sites = {s["site"] for s in secs if s["split"] == "dev"}
    assert dev_sites and dev_sites.isdisjoint({s["site"] for s in test})


def test_the_page_kind_is_decided_as_the_website_parser_does(tmp_path):
    """A research article's sections ("Présentation", "Historique de la méthode") are ``other``, as on the parser's
    article pages, instead of about/history from their headings."""
    page = ("# Présentation\n\nNous présentons la méthode.\n\n## Introduction\n\nLe contexte.\n\n## Historique de la "
            "méthode\n\nFondée en 1901, développée depuis 1950 et 1990.\n\n## Conclusion\n\nFin.\n\n## Bibliographie\n\nX.\n")
    (tmp_path / "fr").mkdir()
    (tmp_path / "fr" / "article.md").write_text(page, encoding="utf-8")
    recs = [_label("fr/article.md", page, line, line.lstrip("# "), line.count("#"), "other", "fr", "test")
            for line in ("# Présentation", "## Introduction", "## Historique de la méthode", "## Conclusion",
                         "## Bibliographie")]
    (tmp_path / "labels.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n", encoding="utf-8")
    result = evaluate_sections(tmp_path, min_confidence=0.3, zero_shot="none")
    assert result["article_pages"] == ["fr/article.md"]
    assert result["splits"]["test"]["accuracy"] == 1.0


def test_third_held_out_split_shares_no_site_with_the_others():
    secs = load_sections(DEFAULT_SECTIONS)
    test2 = [s for s in secs if s["split"] == "test2"]
    assert len(test2) >= 30
    earlier = {s["site"] for s in secs if s["split"] in ("dev", "test")}
    assert earlier.isdisjoint({s["site"] for s in test2})


def test_fourth_held_out_split_is_new_sites_in_four_languages():
    """test3 (labelled before any classifier run on it): at least 60 sections of at least 6 sites that no other
    split uses, in nl, en, fr and de."""
    secs = load_sections(DEFAULT_SECTIONS)
    test3 = [s for s in secs if s["split"] == "test3"]
    assert len(test3) >= 60
    assert len({s["site"] for s in test3}) >= 6
    assert {s["lang"] for s in test3} == {"nl", "en", "fr", "de"}
    earlier = {s["site"] for s in secs if s["split"] != "test3"}
    assert earlier.isdisjoint({s["site"] for s in test3})


def test_fifth_held_out_split_is_new_sites_with_nl_and_de():
    """test4 (labelled before any classifier run on it): at least 60 sections of at least 4 sites that no other split
    uses, in nl, en, fr and de, with at least 10 sections each of nl and de; every section's page and heading line are
    where the labels say."""
    secs = load_sections(DEFAULT_SECTIONS)
    test4 = [s for s in secs if s["split"] == "test4"]
    assert len(test4) >= 60
    assert len({s["site"] for s in test4}) >= 4
    assert {s["lang"] for s in test4} == {"nl", "en", "fr", "de"}
    assert sum(s["lang"] == "nl" for s in test4) >= 10 and sum(s["lang"] == "de" for s in test4) >= 10
    earlier = {s["site"] for s in secs if s["split"] != "test4"}
    assert earlier.isdisjoint({s["site"] for s in test4})
    for s in test4:
        raw = (DEFAULT_SECTIONS / s["page"]).read_text(encoding="utf-8")
        assert raw[s["char_start"]:].split("\n", 1)[0] == s["heading_line"]


def test_documentation_pages_are_decided_from_the_raw_page(tmp_path):
    """A quickstart whose sections say "collectie" in every line: the evaluation decides the page kind from the raw
    page (code blocks, commands) and its file name as the website parser does, so its sections are ``other``."""
    page = ("# Quickstart collectie-harvester\n\nHaalt de collectie op.\n\n## 1. Vereisten\n\nPython 3.11.\n\n"
            "## 2. Collectie ophalen\n\n```bash\npip install harvester\npython harvest.py --collectie rijks\n```\n\n"
            "De collectie staat daarna in `out/`.\n\n```\nout/records.csv\n```\n")
    (tmp_path / "nl").mkdir()
    (tmp_path / "nl" / "quickstart.md").write_text(page, encoding="utf-8")
    recs = [_label("nl/quickstart.md", page, line, line.lstrip("# "), line.count("#"), "other", "nl", "test")
            for line in ("# Quickstart collectie-harvester", "## 1. Vereisten", "## 2. Collectie ophalen")]
    (tmp_path / "labels.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n", encoding="utf-8")
    result = evaluate_sections(tmp_path, min_confidence=0.3, zero_shot="none")
    assert result["documentation_pages"] == ["nl/quickstart.md"]
    assert result["splits"]["test"]["accuracy"] == 1.0


def test_reliability_table_counts_every_answer_once():
    """The accuracy-by-confidence table of each split adds up to the split: every answer in exactly one band."""
    result = evaluate_sections(DEFAULT_SECTIONS, zero_shot="none")
    for split in result["splits"].values():
        rel = split["reliability"]
        assert sum(v["n"] for v in rel.values()) == split["n"]
        assert sum(v["correct"] for v in rel.values()) == split["correct"]
        assert set(rel) <= {"other", "0.00-0.50", "0.50-0.75", "0.75-1.00"}


def test_shipped_calibration_is_the_fit_on_the_tuning_splits():
    """The calibrated confidence table in section_types is what fit_calibration gives on dev+test+test2+test3 (so it
    is refit whenever the rules or the labels change), it never decreases with the raw confidence, and every
    answer's calibrated confidence is a probability."""
    from heritage_pipeline.sources.section_types import CALIBRATION, CALIBRATION_EDGES
    from heritage_pipeline_eval.sections import fit_calibration, raw_answers

    answers = raw_answers(DEFAULT_SECTIONS)
    assert {a["split"] for a in answers} == {"dev", "test", "test2", "test3"}
    assert fit_calibration(answers) == CALIBRATION
    for kind, table in CALIBRATION.items():
        assert len(table) == len(CALIBRATION_EDGES[kind]) + 1
        assert list(table) == sorted(table) and all(0.0 < p < 1.0 for p in table)


def test_calibration_pools_bands_that_would_decrease():
    """Two bands where the higher raw confidence is right less often are pooled into one value; Laplace smoothing
    keeps an empty band at 1/2."""
    from heritage_pipeline_eval.sections import fit_calibration

    answers = ([{"answer": "about", "gold": "about", "raw": 0.45}] * 3 + [{"answer": "about", "gold": "other", "raw": 0.45}]
               + [{"answer": "about", "gold": "other", "raw": 0.55}] * 2)
    fit = fit_calibration(answers)
    # band 0: (3 + 1) / (4 + 2), band 1: (0 + 1) / (2 + 2); decreasing, so pooled: (4 + 1) / (6 + 4)
    assert fit["type"][0] == fit["type"][1] == 0.5
    assert fit["type"][2:] == (0.5, 0.5, 0.5)  # empty bands: 1/2, not below the pooled value
    assert fit["other"] == (0.5, 0.5, 0.5, 0.5)
