"""HTML structure through docling: spans into the raw HTML, XPaths that lxml resolves to the section's element,
source URL, image flags, layout tables not chunked twice, tables without link noise."""

from __future__ import annotations

import re
from pathlib import Path

import lxml.html
import pytest

from heritage_pipeline.sources.html import docling_html, parse_html, table_markdown
from heritage_pipeline.core.text import decode_bytes
from heritage_pipeline.sources.website import parse_website

FIX = Path(__file__).parents[1] / "fixtures" / "html"


def _norm(s: str) -> str:
    return re.sub(r"\W+", "", s).lower()


def _xpath_hits(raw: str, doc) -> tuple[int, int]:
    """(sections whose XPath resolves, with lxml, to an element containing the section's first words; sections)."""
    tree = lxml.html.document_fromstring(re.sub(r"^<\?xml[^>]*>", "", raw)).getroottree()
    ok = 0
    for sec in doc.sections:
        b = doc.blocks[sec.first]
        els = tree.xpath(sec.meta["xpath"]) if sec.meta.get("xpath") else []
        if b.kind == "record":
            # A schema.org record's text is rendered from its data (slot: value lines), so its element is checked for
            # the record's name in the markup that holds the data (the JSON-LD script, the microdata/RDFa attributes).
            words = _norm(sec.anchors[-1])
            ok += bool(els and words and words in _norm(lxml.html.tostring(els[0], encoding="unicode")))
            continue
        words = _norm(doc.text[b.start : b.content_end].lstrip("#-| "))[:30]
        ok += bool(els and words and words in _norm(els[0].text_content()))
    return ok, len(doc.sections)


def test_fixture_sections_have_their_own_elements():
    raw = (FIX / "museum_nl.html").read_text(encoding="utf-8")
    doc = parse_website(raw, doc_id="m", source_path="fixtures/html/museum_nl.html", lang="nl")
    by_heading = {s.anchors[-1]: s.meta for s in doc.sections}
    assert by_heading["Over ons"]["xpath"] == "/html/body/div[2]/main/article/section[1]"
    assert by_heading["Contact"]["xpath"] == "/html/body/div[2]/main/article/section[4]"
    assert by_heading["Collectie"]["html_tag"] == "section" and by_heading["Collectie"]["has_images"] is True
    assert by_heading["Over ons"]["has_images"] is False
    assert _xpath_hits(raw, doc) == (len(doc.sections), len(doc.sections))
    assert doc.meta["source_url"] == "https://www.example.org/streekmuseum/over-ons"  # canonical beats og:url


def test_spans_point_at_the_raw_text_of_each_block():
    raw = (FIX / "museum_nl.html").read_text(encoding="utf-8")
    doc = parse_html(raw, doc_id="m", source_path="m.html", lang="nl")
    assert doc.meta["unaligned_items"] == 0
    for b in doc.blocks:
        text = doc.text[b.start : b.content_end]
        first = _norm(text.lstrip("#-| "))[:1]
        assert _norm(raw[b.raw_start : b.raw_end])[:1] == first
        if b.kind == "paragraph":  # a paragraph's span is exactly its text in the source
            assert " ".join(raw[b.raw_start : b.raw_end].split()) == text


def test_source_url_falls_back_to_og_url_then_path():
    og = '<html><head><meta property="og:url" content="https://x.org/a"></head><body><p>Tekst over het archief.</p></body></html>'
    assert parse_html(og, doc_id="a", source_path="a.html", lang="nl").meta["source_url"] == "https://x.org/a"
    bare = "<html><body><p>Tekst over het archief.</p></body></html>"
    doc = parse_html(bare, doc_id="b", source_path="raw/website/b.html", lang="nl")
    assert doc.meta["source_url"] == "raw/website/b.html" and doc.meta["chunk_meta"]["source_url"] == "raw/website/b.html"


def test_layout_table_is_not_chunked_twice(bundled_data):
    path = bundled_data / "raw/website/boilerplate_pairs/scrapinghub/thespacereview.com__c00962aabe.html"
    raw = decode_bytes(path.read_bytes()).text
    doc = parse_html(raw, doc_id="t", source_path=str(path), lang="en")
    sentence = "Earlier this month, NASA announced the newest milestone"
    assert sentence in raw and doc.text.count(sentence) == 1
    assert doc.meta["layout_tables"] >= 1


def test_tables_render_cell_text_only():
    doc = docling_html('<table><tr><th>Instelling</th><th>Plaats</th></tr><tr><td><a href="https://x.org/rm">Rijks'
                       'museum</a> | <img src="a.png" alt="logo"></td><td>Amsterdam</td></tr></table>')
    md = table_markdown(doc.tables[0])
    assert md.splitlines()[:2] == ["| Instelling | Plaats |", "|---|---|"]
    assert "https://" not in md and "image" not in md and "\\|" in md


def test_real_pages_xpaths_resolve(bundled_data, shared_data):
    pages = sorted((bundled_data / "raw" / "website").rglob("*.html"))
    pages += [shared_data / "web/boilerplate_pairs/readability/wikipedia/source.html",
              shared_data / "web/boilerplate_pairs/scrapinghub/healthline.com__e593d7fe88.html",
              shared_data / "heritage/html_glamorous_nde/ZeeuwseBibliotheek_Wikipedia_NS0_04092024.html"]
    ok = total = 0
    for p in pages:
        raw = decode_bytes(p.read_bytes()).text
        doc = parse_website(raw, doc_id=p.name, source_path=str(p), lang="und")
        k, n = _xpath_hits(raw, doc)
        ok, total = ok + k, total + n
        for b in doc.blocks:
            assert 0 <= b.raw_start < b.raw_end <= len(raw)
    assert total >= 40 and ok / total >= 0.95, (ok, total)


@pytest.mark.slow
def test_all_web_pages_xpaths_resolve(shared_data):
    pages = sorted((shared_data / "web/boilerplate_pairs").rglob("*.html"))
    pages = [p for p in pages if p.name != "expected.html"] + sorted((shared_data / "heritage/html_glamorous_nde").glob("*.html"))
    ok = total = 0
    for p in pages:
        raw = decode_bytes(p.read_bytes()).text
        k, n = _xpath_hits(raw, parse_website(raw, doc_id=p.name, source_path=str(p), lang="und"))
        ok, total = ok + k, total + n
    assert ok / total >= 0.95, (ok, total)
