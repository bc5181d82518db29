"""Website main content: body text is never lost, furniture never kept, removals counted (issue 13 item 1).

The pages under fixtures/html/layouts are written for these tests in the shapes the issue reported
(<main><section><article>, a lead paragraph before the first heading, text loose in <body>, <article> siblings with
tables, a page of navigation and footer only)."""

from __future__ import annotations

from pathlib import Path

import pytest

from heritage_pipeline.core.config import load_chunking_config
from heritage_pipeline.sources.discovery import load_source
from heritage_pipeline.sources.dispatch import parse_source
from heritage_pipeline.sources.website import parse_website
from heritage_pipeline.stages import chunk_documents

LAYOUTS = Path(__file__).parents[1] / "fixtures" / "html" / "layouts"
MODES = ["trafilatura", "docling"]


def _page(name: str, mode: str = "trafilatura"):
    raw = (LAYOUTS / name).read_text(encoding="utf-8")
    return parse_website(raw, doc_id=name, source_path=name, lang="en", main_content=mode)


@pytest.mark.parametrize("mode", MODES)
def test_main_section_article_keeps_every_heading(mode):
    doc = _page("main_section_article.html", mode)
    titles = [s.anchors[-1] for s in doc.sections if s.anchors]
    assert "Install" in titles and "First run" in titles, titles
    assert "Install the package with pip on Python 3.10 or later." in doc.text
    assert "pip install atlas-tools" in doc.text
    assert "Home" not in doc.text and "© 2024" not in doc.text
    assert doc.text.count("# Atlas Tools") == 1  # the <title> is not a second heading


@pytest.mark.parametrize("mode", MODES)
def test_paragraph_before_the_first_heading_stays(mode):
    doc = _page("lead_paragraph.html", mode)
    assert doc.text.startswith("The Harbour Records Office keeps the papers of the port authority")
    assert doc.sections[0].anchors == []  # its own section, before "Reading room"
    for furniture in ("newsletter", "cookies", "Imprint", "Visit"):
        assert furniture not in doc.text
    removed = doc.meta["removed_chars"]
    assert removed["sidebar"] > 0 and removed["cookie banner"] > 0 and removed["navigation"] > 0


@pytest.mark.parametrize("mode", MODES)
def test_text_loose_in_body_stays(mode):
    doc = _page("loose_body.html", mode)
    assert "The Old Mill Museum is open from April to October" in doc.text
    assert "Groups of more than ten people are asked to book a guided tour" in doc.text
    assert "The windmill was built in 1794" in doc.text
    assert "foundation" not in doc.text  # the page footer


@pytest.mark.parametrize("mode", MODES)
def test_article_sibling_sections_keep_their_headings_and_tables(mode):
    doc = _page("article_sibling.html", mode)
    titles = [s.anchors[-1] for s in doc.sections if s.anchors]
    assert titles == ["Fees and services", "Copying fees", "Research service"], titles
    assert sum(b.kind == "table" for b in doc.blocks) == 2
    assert "| Certified copy | A4 with seal | 12.00 EUR |" in doc.text
    assert "| Property history | per half hour | 30.00 EUR |" in doc.text
    assert "Castle Street" not in doc.text


@pytest.mark.parametrize("mode", MODES)
def test_page_of_navigation_and_footer_only_is_skipped(mode):
    doc = _page("furniture_only.html", mode)
    assert doc.blocks == [] and doc.sections == []
    assert len(doc.skipped) == 1 and doc.skipped[0].startswith("no main content")
    assert "navigation" in doc.skipped[0] and "page footer" in doc.skipped[0]


def test_no_main_content_page_yields_no_chunk_and_is_accounted():
    cfg = load_chunking_config()
    out = parse_source(load_source(LAYOUTS / "furniture_only.html", source_type="website"), cfg)
    assert out.doc is not None and not out.quarantined
    assert any("no main content" in s for s in out.skipped)
    assert chunk_documents([out.doc], cfg) == []


def test_removed_characters_are_counted_per_reason():
    doc = _page("lead_paragraph.html")
    m = doc.meta
    assert m["kept_chars"] + sum(m["removed_chars"].values()) + m["not_extracted_chars"] <= m["visible_chars"] + 40
    # every kept block is a plain paragraph or a heading here: its visible characters are its text's non-space ones
    expected = sum(len("".join((b.title if b.kind == "heading" else doc.text[b.start:b.content_end]).split()))
                   for b in doc.blocks)
    assert m["kept_chars"] == expected
    assert m["removed_summary"].startswith(f"kept {m['kept_chars']:,} of {m['visible_chars']:,} visible characters")
    for reason, chars in m["removed_chars"].items():
        assert f"{reason} {chars:,}" in m["removed_summary"]


def test_parsed_sections_asset_metadata_lists_removed_content_per_page():
    from heritage_pipeline.defs.assets import _removed_content_metadata
    from heritage_pipeline.sources.dispatch import docs_to_table

    docs = [_page("lead_paragraph.html"), _page("article_sibling.html")]
    meta = _removed_content_metadata(docs_to_table(docs))
    pages = {r.data["page"]: r.data["main content"] for r in meta["website_main_content"].value.records}
    assert pages["lead_paragraph.html"] == docs[0].meta["removed_summary"]
    totals = {r.data["reason"]: r.data["characters"] for r in meta["website_removed_chars"].value.records}
    assert totals["cookie banner"] == docs[0].meta["removed_chars"]["cookie banner"]
    assert totals["navigation"] == sum(d.meta["removed_chars"].get("navigation", 0) for d in docs)


def test_consent_state_on_the_body_is_not_a_banner():
    raw = (LAYOUTS / "lead_paragraph.html").read_text(encoding="utf-8").replace("<body>", '<body class="cookies-accepted">')
    doc = parse_website(raw, doc_id="b", source_path="b.html", lang="en", main_content="docling")
    assert doc.text.startswith("The Harbour Records Office") and "Reading room" in doc.text


@pytest.mark.parametrize("mode", MODES)
def test_hidden_elements_are_furniture_and_counted(mode):
    """A microdata copy of the headline in a hidden element (``class="is-hidden"``, as a news site writes it), a
    ``hidden`` menu and an inline ``display:none`` notice are not page text; screen-reader text (``sr-only``) is."""
    raw = ("<html><body><main><article>"
           "<h1>Whale strandings worry the coastal tribes</h1>"
           "<header><h1 class='is-hidden' itemprop='headline'>Whale strandings worry the coastal tribes</h1></header>"
           "<div hidden><p>Secret menu entry one two three</p></div>"
           "<p style='color: grey; display: none'>Please enable JavaScript to see this notice.</p>"
           "<p>The elders say the sea is sending a message, and the families walk the beach every morning to count "
           "the animals that came ashore overnight and to call the rangers.</p>"
           "<p><span class='sr-only'>Photograph:</span> an elder on the beach at dawn, counting the whales.</p>"
           "</article></main></body></html>")
    doc = parse_website(raw, doc_id="h", source_path="h.html", lang="en", main_content=mode)
    assert doc.text.count("Whale strandings worry the coastal tribes") == 1
    assert "Secret menu" not in doc.text and "enable JavaScript" not in doc.text
    assert "the families walk the beach every morning" in doc.text
    assert doc.meta["removed_chars"]["hidden element"] > 0
    if mode == "docling":
        assert "Photograph:" in doc.text
