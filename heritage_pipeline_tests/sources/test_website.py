"""Websites: main content without navigation, cookie banner, sidebar and footer; multilingual section types;
boilerplate removal measured against gold main content (ours vs trafilatura vs docling alone)."""

from __future__ import annotations

from pathlib import Path

import pytest

from heritage_pipeline.core.config import load_chunking_config
from heritage_pipeline.sources.discovery import load_source
from heritage_pipeline_eval.sources import EXTRACTORS, evaluate_web, overlap_prf, tokens
from heritage_pipeline.sources.dispatch import parse_source
from heritage_pipeline.stages import chunk_documents
from heritage_pipeline.core.text import decode_bytes
from heritage_pipeline.sources.website import SECTION_PRIMARY_CLASS, classify_section, parse_website

FIX = Path(__file__).parents[1] / "fixtures" / "html"
BOILERPLATE = ["cookies", "Nieuwsbrief", "Facebook", "Privacyverklaring", "Home"]


def test_main_content_drops_page_furniture():
    raw = (FIX / "museum_nl.html").read_text(encoding="utf-8")
    ours = parse_website(raw, doc_id="m", source_path="m.html", lang="nl")
    docling_only = parse_website(raw, doc_id="m", source_path="m.html", lang="nl", main_content="docling")
    for word in BOILERPLATE:
        assert word not in ours.text
    # docling keeps the <aside> in its body layer; the page's HTML marks it as a sidebar in both modes
    assert "Nieuwsbrief" not in docling_only.text and docling_only.meta["removed_chars"]["sidebar"] > 0
    for kept in ("opgericht door de Historische Vereniging Avereest", "| Turfschop | 1890 |", "Museumkaart geldig",
                 "Telefoon 0523 000 000"):
        assert kept in ours.text
    assert ours.meta["main_content"] == "trafilatura" and ours.meta["dropped_items"] >= 3


def test_section_types_and_primary_classes():
    raw = (FIX / "museum_nl.html").read_text(encoding="utf-8")
    doc = parse_website(raw, doc_id="m", source_path="m.html", lang="nl")
    types = {s.anchors[-1]: (s.meta["section_type"], s.meta["primary_class"]) for s in doc.sections}
    assert types["Over ons"] == ("about", "custodian")
    assert types["Collectie"] == ("collection", "collection")
    assert types["Bezoek"] == ("visit", "custodian")
    assert types["Contact"] == ("contact", "custodian")
    assert set(SECTION_PRIMARY_CLASS.values()) <= {"custodian", "observation", "collection", "relationship", "context"}


@pytest.mark.parametrize("anchors, text, expected", [
    (["Museum", "Over ons"], "", "about"),
    (["Musée", "Qui sommes-nous ?"], "", "about"),
    (["Museum", "Über uns"], "", "about"),
    (["Archief", "Openingstijden en toegang"], "", "visit"),
    (["Musée", "Horaires et tarifs"], "", "visit"),
    (["Museum", "Öffnungszeiten"], "", "visit"),
    (["Library", "Plan your visit"], "", "visit"),
    (["Archives", "Nous contacter"], "", "contact"),
    (["Bibliothek", "Kontakt & Anfahrt"], "", "contact"),
    (["Museum", "Onze collectie"], "", "collection"),
    (["Archiv", "Sammlungen und Bestände"], "", "collection"),
    (["Bibliothèque", "Fonds patrimoniaux"], "", "collection"),
    (["Museum", "Nieuws"], "", "news"),
    (["Musée", "Actualités"], "", "news"),
    (["Museum", "Geschichte des Hauses"], "", "history"),
    (["Archief", "Geschiedenis"], "", "history"),
    ([], "Het museum is dagelijks geopend van 10 tot 17 uur. Tickets en de Museumkaart zijn geldig.", "visit"),
    ([], "Das Archiv wurde 1903 gegründet und ist seit 1925 im Rathaus untergebracht.", "history"),
    ([], "Schrijf ons een e-mail of bel: telefoon 020 000 0000. Bezoekadres: Dam 1.", "contact"),
    ([], "The Future of Banking is about money, and it is about trust.", "other"),
    (["Search results"], "Nothing relevant here at all.", "other"),
])
def test_classify_section_multilingual(anchors, text, expected):
    assert classify_section(anchors, text, min_confidence=0.3)[0] == expected


def test_website_chunks_carry_their_metadata(bundled_data):
    cfg = load_chunking_config()
    docs = []
    for p in sorted((bundled_data / "raw" / "website").rglob("*.html")):
        out = parse_source(load_source(p, source_type="website"), cfg)
        assert out.doc is not None, out.quarantined
        docs.append(out.doc)
    chunks = chunk_documents(docs, cfg)
    assert chunks and all(c.meta.source_type == "website" for c in chunks)
    for c in chunks:
        assert c.meta.source_url and c.meta.section_type and c.meta.xpath and c.meta.html_tag
        assert c.meta.has_images is not None and c.meta.primary_class
        assert c.meta.len_tokens <= cfg.sources.website.max_tokens
    space = [c for c in chunks if "thespacereview" in c.meta.doc_id]
    assert space[0].meta.source_url.endswith("thespacereview.com__c00962aabe.html")  # no canonical: the file
    comwrap = [c for c in chunks if "comwrap" in c.meta.doc_id]
    assert comwrap[0].meta.source_url == "https://blog.comwrap.com/comwrap-auf-der-dmexco-2018"


def test_bundled_gold_pages_ours_beats_docling_alone(bundled_data):
    """The two bundled pages with gold main content: our extraction is far closer to the gold than docling's body
    layer and within a few points of trafilatura (token-level F1)."""
    pages = {"blog.comwrap.com__ba07d1e647": "boilerplate_pairs/scrapinghub/blog.comwrap.com__ba07d1e647.html",
             "thespacereview.com__c00962aabe": "boilerplate_pairs/scrapinghub/thespacereview.com__c00962aabe.html"}
    for name, rel in pages.items():
        raw = decode_bytes((bundled_data / "raw" / "website" / rel).read_bytes()).text
        gold = (bundled_data / "eval" / "web" / f"{name}.gold.txt").read_text(encoding="utf-8")
        f1 = {ex: overlap_prf(EXTRACTORS[ex](raw, name), gold).f1 for ex in EXTRACTORS}
        assert f1["ours"] > f1["docling"] and f1["ours"] >= f1["trafilatura"] - 0.05, f1
        assert len(tokens(EXTRACTORS["ours"](raw, name))) > 0.8 * len(tokens(gold))


def test_overlap_prf_definition():
    p = overlap_prf("a b b c", "b b d")
    assert (p.tp, p.n_pred, p.n_gold) == (2, 4, 3)
    assert p.precision == 0.5 and abs(p.recall - 2 / 3) < 1e-12 and abs(p.f1 - 4 / 7) < 1e-12
    assert overlap_prf("", "").f1 == 1.0 and overlap_prf("x", "").precision == 0.0


@pytest.mark.slow
def test_boilerplate_benchmark_all_30_pages(shared_data):
    """Issue 13's target on the 30 gold pages: token recall not below trafilatura's, precision within 0.01 of
    trafilatura with its headline (ours keeps the H1 as the first section heading; the gold leaves it out)."""
    result = evaluate_web(shared_data / "web" / "boilerplate_pairs")
    mean = {k: v["token"] for k, v in result["mean"].items()}
    assert result["n_pages"] == 30
    assert mean["ours"]["recall"] >= mean["trafilatura"]["recall"]
    assert mean["ours"]["precision"] >= mean["trafilatura_title"]["precision"] - 0.01
    assert mean["ours"]["f1"] > mean["docling"]["f1"] + 0.1
    assert mean["ours"]["f1"] >= 0.95
    wins = sum(p["ours"]["token"]["f1"] >= p["docling"]["token"]["f1"] - 0.01 for p in result["pages"])
    assert wins >= 27
