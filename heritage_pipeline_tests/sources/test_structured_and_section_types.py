"""schema.org structured data as record chunks (issue 13 item 2) and section types with a confidence, per page kind
(item 3). The pages under fixtures/html/structured are written for these tests in the shape of schema.org's public
examples (no openly licensed real page with such markup was found); layouts/museum_site_nl.html and
layouts/article_fr.html are written in the shapes the issue reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_

from heritage_pipeline.core.config import load_chunking_config
from heritage_pipeline.sources.discovery import load_source
from heritage_pipeline.sources.dispatch import parse_source
from heritage_pipeline.sources.section_types import classify_section, page_kind
from heritage_pipeline.sources.structured import extract_structured, record_lines
from heritage_pipeline.stages import chunk_documents

FIX = Path(__file__).parents[1] / "fixtures" / "html"


def _chunks(path: Path):
    cfg = load_chunking_config()
    out = parse_source(load_source(path, source_type="website"), cfg)
    assert out.doc is not None
    return out, chunk_documents([out.doc], cfg)


def test_jsonld_records_become_chunks_with_spans_on_their_script():
    path = FIX / "structured" / "jsonld_museum.html"
    raw = path.read_text(encoding="utf-8")
    out, chunks = _chunks(path)
    records = [c for c in chunks if "record" in c.meta.block_kinds]
    assert [c.meta.extra["schema_type"] for c in records] == ["Museum", "Event"]
    museum, event = records
    assert museum.text.splitlines()[:4] == ["type: Museum", "name: Streekmuseum De Waag",
                                            "address: Markt 12, 7701 AB Dedemsvaart, NL",
                                            "opening_hours: Tuesday, Wednesday, Thursday, Friday 10:00-17:00; "
                                            "Saturday 11:00-16:00"]
    assert "start_date: 2025-06-14T10:00" in event.text.splitlines()
    assert "location: Marktplein Dedemsvaart (Markt, Dedemsvaart, NL)" in event.text.splitlines()
    for c in records:
        src = raw[c.spans.char_start : c.spans.char_end]
        assert src.startswith('<script type="application/ld+json">') and src.endswith("</script>")
        assert json.loads(src[src.index(">") + 1 : -len("</script>")])["name"] in c.text
        assert c.meta.html_tag == "script" and c.meta.xpath.startswith("/html[1]/head[1]/script[")
        assert c.meta.section_confidence == 1.0 and c.meta.source_url
    assert museum.meta.section_type == "visit" and event.meta.section_type == "news"
    # the broken third script is quarantined by name; the page and the other two records are kept
    third = raw.index('<script type="application/ld+json">{ "@context"')
    assert [q.path for q in out.quarantined] == [f"{path}#json-ld script 3 (offset {third})"]
    assert "not valid JSON" in out.quarantined[0].reason
    assert any("Turfmarkt" in c.text and "record" not in c.meta.block_kinds for c in chunks)


def test_microdata_record_spans_the_itemscope_element():
    path = FIX / "structured" / "microdata_library.html"
    raw = path.read_text(encoding="utf-8")
    _, chunks = _chunks(path)
    (rec,) = [c for c in chunks if "record" in c.meta.block_kinds]
    assert rec.text.splitlines() == ["type: Library", "name: Médiathèque des Capucins",
                                     "address: 2 rue des Capucins, 29200 Brest, FR",
                                     "opening_hours: Tu-Fr 10:00-19:00; Sa 10:00-18:00",
                                     "telephone: +33 2 00 00 00 00"]
    src = raw[rec.spans.char_start : rec.spans.char_end]
    assert src.startswith('<div itemscope itemtype="https://schema.org/Library">') and src.endswith("</div>")
    assert rec.meta.html_tag == "div" and rec.meta.extra["structured_syntax"] == "microdata"


def test_rdfa_record_with_nested_address():
    raw = (FIX / "structured" / "rdfa_archive.html").read_text(encoding="utf-8")
    records, problems, counts = extract_structured(raw)
    assert problems == [] and counts["rdfa"] == 1
    (rec,) = records
    assert rec.schema_type == "ArchiveOrganization" and rec.syntax == "rdfa"
    assert "address: Rathausplatz 3, 12345 Musterstadt" in rec.lines
    assert "email: stadtarchiv@musterstadt.example" in rec.lines
    assert raw[rec.raw_start : rec.raw_end].startswith('<div typeof="ArchiveOrganization">')


def test_graph_members_and_non_record_types():
    raw = ('<html><head><script type="application/ld+json">{"@context": "https://schema.org", "@graph": ['
           '{"@type": "WebPage", "name": "Home"}, {"@type": "Place", "name": "Kasteel", "geo": '
           '{"@type": "GeoCoordinates", "latitude": 52.1, "longitude": 5.2}}]}</script></head><body><p>x</p></body></html>')
    records, problems, counts = extract_structured(raw)
    assert [r.schema_type for r in records] == ["Place"] and problems == []
    assert records[0].lines == ["type: Place", "name: Kasteel", "geo: 52.1, 5.2"]
    assert record_lines({"@type": "Event", "name": "", "startDate": "2025-01-01"}) == ["type: Event", "start_date: 2025-01-01"]


def test_jsonld_in_a_cdata_wrapper():
    raw = ('<html><head><script type="application/ld+json">\n  <![CDATA[\n  {"@context": "https://schema.org", '
           '"@type": "Organization", "name": "The Daily Archive"}\n  ]]>\n</script></head><body><p>x</p></body></html>')
    records, problems, _ = extract_structured(raw)
    assert problems == [] and [r.lines for r in records] == [["type: Organization", "name: The Daily Archive"]]


def test_structured_data_can_be_switched_off():
    cfg = load_chunking_config(**{"sources.website.structured_data": False})
    out = parse_source(load_source(FIX / "structured" / "jsonld_museum.html", source_type="website"), cfg)
    assert out.quarantined == [] and not any(b.kind == "record" for b in out.doc.blocks)


def test_sections_of_a_museum_site_get_their_own_types():
    """Headings that name no category under an 'Over het ...' page heading: the body decides, not the parent."""
    out, _ = _chunks(FIX / "layouts" / "museum_site_nl.html")
    types = {s.anchors[-1]: s.meta["section_type"] for s in out.doc.sections if s.anchors}
    assert types["Plan je dag bij ons"] == "visit"
    assert types["Wat er te zien is"] == "collection"
    assert types["Van turfschuur tot museum"] == "history"
    assert types["Uit de regio"] == "news"
    assert out.doc.meta["page_kind"] == "institution"
    assert all(0.0 <= s.meta["section_confidence"] <= 1.0 for s in out.doc.sections)


def test_research_article_gets_no_institution_section_types():
    out, chunks = _chunks(FIX / "layouts" / "article_fr.html")
    assert out.doc.meta["page_kind"] == "article"
    assert {s.meta["section_type"] for s in out.doc.sections} == {"other"}
    assert "Présentation" in {s.anchors[-1] for s in out.doc.sections if s.anchors}
    assert chunks and all(c.meta.section_type == "other" for c in chunks)


@pytest.mark.parametrize("headings, types, expected", [
    (["Titre", "Présentation", "Bibliographie"], (), ("article", False)),
    (["Über uns", "Öffnungszeiten", "Kontakt"], (), ("institution", False)),
    (["Tentoonstelling geopend"], ("NewsArticle",), ("article", True)),
    (["Over ons", "Inleiding"], (), ("institution", False)),
])
def test_page_kind(headings, types, expected):
    assert page_kind(headings, types) == expected


def test_confidence_threshold_turns_weak_answers_into_other():
    """The minimum confidence applies to the rules' raw confidence (the lead over ``other``); the reported
    confidence is the calibrated one, not lower for the stronger answer."""
    from heritage_pipeline.sources.section_types import raw_rule_decisions

    anchors, body = ["Museum", "Praktisch"], "Het museum is op maandag gesloten."
    weak_raw = raw_rule_decisions([(anchors, body)])[0]
    assert weak_raw[0] == "visit" and weak_raw[1] < 0.9
    assert classify_section(anchors, body, min_confidence=weak_raw[1] + 0.01)[0] == "other"
    weak = classify_section(anchors, body)
    strong_section = (["Museum", "Openingstijden"], "Geopend van dinsdag tot zondag, 10:00-17:00 uur.")
    strong = classify_section(*strong_section)
    assert strong[0] == "visit" and raw_rule_decisions([strong_section])[0][1] > weak_raw[1]
    assert strong[1] >= weak[1]  # calibrated confidence never decreases with the raw one


def test_subsections_without_a_cue_take_their_parents_type():
    """A collection page's subsections named after what they hold ("Maps of the polders") are collection too; a
    subsection with a heading cue of its own keeps it, and an ``other`` parent passes nothing down."""
    from heritage_pipeline.sources.section_types import classify_sections

    sections = [(["Our collections"], "The archive keeps maps, charters and photographs of the region."),
                (["Our collections", "Maps of the polders"], "Some 1,200 sheets drawn between 1620 and 1890."),
                (["Our collections", "Opening hours"], "Tuesday to Friday 9:00-17:00."),
                (["Privacy statement"], "We store your e-mail address only to answer your question."),
                (["Privacy statement", "Your rights"], "You may ask us to delete what we hold about you.")]
    decided = classify_sections(sections, min_confidence=0.3)
    assert [t for t, _ in decided] == ["collection", "collection", "visit", "other", "other"]
    assert decided[1][1] < decided[0][1]  # an inherited type is less certain than its parent's


def test_data_headings_are_holdings_and_personal_data_is_privacy():
    from heritage_pipeline.sources.section_types import classify_section

    assert classify_section(["Welke data vind je hier?"], "Plaatsnamen, straten en gebouwen uit drie eeuwen.",
                            min_confidence=0.3)[0] == "collection"
    assert classify_section(["Données à caractère personnel"], "Vos données ne sont pas transmises à des tiers.",
                            min_confidence=0.3)[0] == "other"
    assert classify_section(["API documentation"], "Send a GET request to /search with a query parameter.",
                            min_confidence=0.3)[0] == "other"


# ---- documentation pages (issue 13 item 3): own small inputs in the shapes of a README, a quickstart and a guide
_README_NL = """# Erfgoedviewer

Een viewer voor de collectie van het archief.

## Vereisten

- Node.js 20

## Lokaal starten

```bash
npm install
npm run dev
```

## Docker

```bash
docker build -t viewer .
docker run -p 3000:3000 viewer
```

Open http://localhost:3000 in de browser.
"""
_GUIDE_DE = """# Leitfaden Inventarisierung

## Inventarbuch

Jedes Objekt der Sammlung bekommt eine Inventarnummer.

## Anhang: Checkliste

- Nummer vergeben
"""
_VISIT_EN = """# Plan your visit

## Opening hours

Tuesday to Sunday 10:00-17:00. The reading room is closed on Mondays.

## Getting here

Take bus 12 to the museum stop.
"""


@pytest.mark.parametrize("raw, path, expected", [
    (_README_NL, "docs/README.md", {"code", "commands", "headings", "name", "vocabulary"}),
    (_GUIDE_DE, "handreichungen/inventar.md", {"headings", "name"}),
    (_VISIT_EN, "visit/index.md", set()),
    # a credits page naming its software and data formats is not documentation
    ("<h2>Code source</h2><p>Le code source est sur GitHub, les données en JSON et CSV, le site en JavaScript.</p>",
     "site/info.html", set()),
    ("", "", set()),
])
def test_documentation_signals(raw, path, expected):
    from heritage_pipeline.sources.section_types import documentation_signals

    headings = [ln.lstrip("# ") for ln in raw.splitlines() if ln.startswith("#")]
    assert set(documentation_signals(raw, headings, path)) == expected


def test_documentation_headings_must_be_whole_headings():
    from heritage_pipeline.sources.section_types import documentation_signals

    assert documentation_signals("", ["Conditions d'utilisation", "Data usage", "Gebruiksvoorwaarden"]) == []
    assert documentation_signals("", ["Musée", "1. Installation (Linux)"]) == ["headings"]
    assert documentation_signals("", ["Bijlage 2: bronnen"]) == ["headings"]


def test_documentation_page_sections_are_other_unless_strongly_institutional():
    from heritage_pipeline.sources.section_types import calibrated, classify_sections

    headings = [ln.lstrip("# ") for ln in _README_NL.splitlines() if ln.startswith("#")]
    assert page_kind(headings, raw=_README_NL, source_path="README.md") == ("documentation", False)
    assert page_kind(headings) == ("institution", False)  # without the raw page: headings alone are one kind
    sections = [(["Erfgoedviewer"], "Een viewer voor de collectie van het archief en zijn collecties."),
                (["Erfgoedviewer", "Contact"], "E-mail: info@archief.example, telefoon +31 20 123 4567, adres: "
                 "Dam 1, Amsterdam. Neem contact op via het contactformulier."),
                (["Erfgoedviewer", "Docker"], "docker build -t viewer ."),
                (["Erfgoedviewer", "Vragen"], "Mail info@archief.example.")]  # one weak cue: stays other
    on_doc = classify_sections(sections, min_confidence=0.3, page="documentation")
    assert [t for t, _ in on_doc] == ["other", "contact", "other", "other"]
    assert on_doc[0][1] == calibrated("other", 1.0) and 0.0 < on_doc[1][1] <= 1.0
    # the same sections on an institution page keep their rule types
    assert classify_sections(sections, min_confidence=0.3)[0][0] == "collection"


def test_readme_served_as_a_web_page_has_documentation_kind(tmp_path):
    html = ("<html><body><main><h1>Collectieviewer</h1><p>Toont de collectie van het archief.</p>"
            "<h2>Installatie</h2><pre><code>pip install viewer\npip install viewer[docs]</code></pre>"
            "<h2>Gebruik</h2><pre><code>python -m viewer --port 8000</code></pre>"
            "<p>Open localhost:8000; de CLI leest een config file.</p></main></body></html>")
    page = tmp_path / "README.html"
    page.write_text(html, encoding="utf-8")
    out, _ = _chunks(page)
    assert out.doc.meta["page_kind"] == "documentation"
    assert {s.meta["section_type"] for s in out.doc.sections if not s.key.startswith("record-")} == {"other"}


def test_evidence_every_section_of_a_document_has_is_discounted():
    """A registry *of collections*: every section's body says "collections", which tells one section from another
    nothing; dropped for the whole document, the history and contact sections keep the type their own evidence
    gives. The same sections classified one at a time (no document to compare with) are ``collection``."""
    from heritage_pipeline.sources.section_types import body_evidence, classify_sections, document_discount

    sections = [(["The first years"], "The history of the registry of collections began in 1998 with a forum."),
                (["Mailing list"], "Questions about collections? Write to helpdesk@example.org or call +31 20 123 4567."),
                (["Where the records come from"], "The collections were described by curators of the collections."),
                (["Volunteers"], "Volunteers keep the collections records up to date.")]
    evidence = [body_evidence(b) for _, b in sections]
    discount = document_discount(evidence)
    assert ("collection", next(iter(evidence[0]["collection"]))) in discount
    assert not any(cat == "contact" for cat, _ in discount)  # e-mail and phone occur in one section only
    decided = [t for t, _ in classify_sections(sections, min_confidence=0.4)]
    assert decided[0] == "history" and decided[1] == "contact"
    # one section at a time there is no document to compare with: "collections" ties with the history cue and
    # collection comes first in the category order
    assert classify_sections([sections[0]], min_confidence=0.4)[0][0] == "collection"
    assert document_discount(evidence[:2]) == frozenset()  # too short a document to compare sections


def test_confidence_is_the_lead_over_other_evidence():
    """The confidence of an institution answer is its lead over the evidence for ``other``: one body cue is weak
    (0.5), a heading cue with contact data strong; a section with as much legal as contact evidence (an imprint's
    address block) is ``other`` at the configured minimum."""
    from heritage_pipeline.sources.section_types import calibrated, raw_rule_decisions, section_scores

    weak = raw_rule_decisions([(["Varia"], "Our collections are large.")])[0]
    assert weak == ("collection", 0.5)
    assert classify_section(["Varia"], "Our collections are large.") == ("collection", calibrated("collection", 0.5))
    assert raw_rule_decisions([(["Varia"], "Our collections are large.")], min_confidence=0.51)[0] == ("other", 0.5)
    lone = raw_rule_decisions([(["Contact"], "Write to info@example.org or call +31 20 123 4567.")])[0]
    assert lone[0] == "contact" and lone[1] >= 0.8
    anchors, body = ["Impressum"], "Verantwortlich: Stadtarchiv, Markt 1, Tel. 02237 58 123, archiv@example.de"
    scores = section_scores(anchors, body)
    assert scores["other"] >= scores["contact"] > 0
    assert classify_section(anchors, body, min_confidence=load_chunking_config().sources.website.section_min_confidence)[0] == "other"


@settings(max_examples=60, deadline=None)
@given(st_.lists(st_.tuples(st_.lists(st_.sampled_from(["Contact", "Collectie", "Geschichte", "Impressum", "Over ons",
                                                         "Öffnungszeiten", "Nieuws", "Varia"]), min_size=1, max_size=3),
                            st_.text(alphabet="abc collections kontakt 1998 2001 2010 e-mail @.", max_size=120)),
                 min_size=0, max_size=6),
       st_.floats(min_value=0.0, max_value=1.0))
def test_classify_sections_answers_every_section_in_range(sections, min_conf):
    """Property: one answer per section, a known category, confidence in [0, 1], and a non-``other`` answer never
    below the minimum confidence."""
    from heritage_pipeline.sources.section_types import CATEGORIES, classify_sections

    from heritage_pipeline.sources.section_types import calibrated, raw_rule_decisions

    decided = classify_sections(sections, min_confidence=min_conf)
    raw = raw_rule_decisions(sections, min_confidence=min_conf)
    assert len(decided) == len(sections) == len(raw)
    for (t, c), (rt, rc) in zip(decided, raw):
        assert t == rt and t in CATEGORIES and 0.0 <= c <= 1.0 and c == calibrated(rt, rc)
        assert t == "other" or rc >= min_conf * 0.8 ** 3 - 1e-9  # inherited answers are discounted per level


def test_dataset_jsonld_is_a_collection_record_with_licence_distributions_and_identifiers():
    """A dataset description page's schema.org Dataset (the trial's KB page shape): a record chunk with its licence,
    creator with the creator's ROR id, and every distribution; a ``collection`` record that has identifiers."""
    out, chunks = _chunks(FIX / "layouts" / "dataset_description.html")
    records = [c for c in chunks if "record" in c.meta.block_kinds]
    assert [c.meta.extra["schema_type"] for c in records] == ["Dataset"]
    rec = records[0]
    lines = rec.text.splitlines()
    assert lines[:2] == ["type: Dataset", "name: Letters of the Harbour Board"]
    assert "license: http://creativecommons.org/publicdomain/zero/1.0/" in lines
    assert "identifier: https://data.archive.example.org/id/dataset/harbour-letters" in lines
    assert "creator: City Archive (https://ror.org/05xvt9f17)" in lines
    assert ("distribution: text/turtle https://data.archive.example.org/id/dataset/harbour-letters.ttl; "
            "application/ld+json https://data.archive.example.org/id/dataset/harbour-letters.json") in lines
    assert rec.meta.section_type == "collection" and rec.meta.primary_class == "collection"
    assert rec.meta.has_identifiers and rec.meta.has_collections


def test_has_identifier_needs_an_identifier_of_its_own():
    from heritage_pipeline.sources.structured import has_identifier

    assert not has_identifier({"@type": "Museum", "@id": "https://example.org/#museum", "name": "X"})  # page-local
    assert has_identifier({"@type": "Museum", "name": "X", "sameAs": "https://www.wikidata.org/wiki/Q190804"})
    assert has_identifier({"@type": "Event", "organizer": {"@type": "Organization", "identifier": "NL-AsdRM"}})
    assert has_identifier({"@type": "Dataset", "@id": "http://data.bibliotheken.nl/id/dataset/rise-alba"})
    assert not has_identifier({"@type": "Place", "name": "Y", "sameAs": ""})
