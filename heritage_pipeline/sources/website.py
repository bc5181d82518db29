"""Saved institution web pages: main content, structured data records and section types, put together.

* Main content: :mod:`heritage_pipeline.sources.main_content` (furniture from the page's HTML, trafilatura as the
  selector, body text kept where the two disagree, every removal counted).
* Structured data: :mod:`heritage_pipeline.sources.structured` (schema.org JSON-LD, microdata and RDFa records as
  record chunks of their own, spans on their elements in the raw HTML).
* Section types: :mod:`heritage_pipeline.sources.section_types` (heading + body, NL/EN/FR/DE, a confidence,
  ``other`` below the configured minimum; article and documentation pages get no institution section types).
"""

from __future__ import annotations

import re

from heritage_pipeline.core.structure import ParsedDocument
from .html import parse_html
from .main_content import removal_summary, select_main_content
from .section_types import classify_section, classify_sections, page_kind  # noqa: F401 (classify_section re-exported)
from .structured import COLLECTION_TYPES, EVENT_TYPES, extract_structured, has_identifier, record_section_type

_CITATION_META = re.compile(r"<meta\b[^>]*\bname\s*=\s*[\"']?citation_title\b", re.I)

# Seed chunk hierarchy (custodian, observation, collection, relationship, context) for website sections: about,
# contact and visit describe the custodian (Custodian.description, CustodianPlace); collection sections describe
# holdings; history sections carry change events (relationship chunks); news items are dated observations.
SECTION_PRIMARY_CLASS = {"about": "custodian", "contact": "custodian", "visit": "custodian",
                         "collection": "collection", "history": "relationship", "news": "observation",
                         "other": "context"}


def parse_website(raw: str, *, doc_id: str, source_path: str, lang: str, max_level: int = 3,
                  main_content: str = "trafilatura", section_min_confidence: float = 0.3,
                  structured_data: bool = True, section_zero_shot: str = "none",
                  section_zero_shot_weight: float = 0.5) -> ParsedDocument:
    """Parse a saved web page: docling structure, main content only, structured data records, sections classified.

    Args:
        raw: the page's decoded HTML.
        doc_id, source_path, lang: as for every parser.
        max_level: deepest heading level that opens a section.
        main_content: ``trafilatura`` or ``docling`` (:func:`~heritage_pipeline.sources.main_content.select_main_content`).
        section_min_confidence: below it a section is ``other`` (``sources.website.section_min_confidence``).
        structured_data: turn schema.org records into record chunks (``sources.website.structured_data``).
        section_zero_shot: embedder model for the zero-shot section-type opinion, one batched call per page, or
            ``none`` (``sources.website.section_zero_shot``).
        section_zero_shot_weight: its weight in the mixture with the cue rules
            (``sources.website.section_zero_shot_weight``).

    Returns:
        The document. Each section's ``meta`` has ``section_type``, ``section_confidence``, ``primary_class`` and
        ``has_collections`` on top of what :func:`~heritage_pipeline.sources.html.parse_html` sets (``xpath``,
        ``html_tag``, ``has_images``; ``source_url`` on every chunk). ``doc.meta`` has the main-content report
        (``removed_chars``, ``removed_summary``, ...), ``page_kind``, ``structured_data`` (counts) and ``problems``
        (``(location, reason)`` pairs for the quarantine, e.g. a JSON-LD script that is not JSON). A page with
        neither main content nor records has no blocks and says ``no main content`` in ``doc.skipped``.

    Raises:
        Whatever docling raises for a page it cannot convert (the caller quarantines the file); ValueError when
        the zero-shot model cannot be loaded offline.
    """
    records, problems, counts = extract_structured(raw) if structured_data else ([], [], {})
    types = ({r.schema_type for r in records} | _declared_types(raw)) if structured_data else set()
    rec_specs = []
    for n, r in enumerate(records, 1):
        st = record_section_type(r)
        rec_specs.append({
            "text": r.text, "raw_start": r.raw_start, "raw_end": r.raw_end,
            "anchors": [r.name or r.schema_type], "key": f"record-{n:03d}",
            "meta": {"section_type": st, "section_confidence": 1.0, "primary_class":
                     "observation" if r.schema_type in EVENT_TYPES
                     else "collection" if r.schema_type in COLLECTION_TYPES else "custodian",
                     "has_collections": r.schema_type in COLLECTION_TYPES,
                     "has_identifiers": has_identifier(r.data), "xpath": r.xpath, "html_tag": r.element,
                     "has_images": "<img" in raw[r.raw_start:r.raw_end].lower(),
                     "source_id": f"{doc_id}#record-{n:03d}",
                     "extra": {"schema_type": r.schema_type, "structured_syntax": r.syntax}},
        })
    doc = parse_html(raw, doc_id=doc_id, source_path=source_path, lang=lang, source_type="website",
                     max_level=max_level, keep=lambda r, page: select_main_content(r, page, main_content),
                     records=rec_specs)
    doc.meta["removed_summary"] = removal_summary(doc.meta)
    doc.meta["structured_data"] = counts
    doc.meta["problems"] = [list(p) for p in problems]
    n_records = len(rec_specs)
    page_sections = [s for s in doc.sections if not s.key.startswith("record-")]
    if not page_sections:
        doc.skipped.append(f"no main content ({doc.meta['removed_summary']})"
                           + (f"; {n_records} structured data record(s) kept" if n_records else ""))
    kind, is_news = page_kind([b.title for b in doc.blocks if b.kind == "heading"], types,
                              citation_meta=bool(_CITATION_META.search(raw)), raw=raw, source_path=source_path)
    doc.meta["page_kind"] = kind
    bodies = [doc.text[doc.blocks[sec.first].start : doc.blocks[sec.last - 1].content_end] for sec in page_sections]
    decided = classify_sections([(sec.anchors, body) for sec, body in zip(page_sections, bodies)],
                                min_confidence=section_min_confidence, page=kind, page_is_news=is_news,
                                zero_shot=section_zero_shot, zero_shot_weight=section_zero_shot_weight)
    for sec, (st, conf) in zip(page_sections, decided):
        sec.meta["section_type"] = st
        sec.meta["section_confidence"] = conf
        sec.meta["primary_class"] = SECTION_PRIMARY_CLASS[st]
        sec.meta["has_collections"] = st == "collection"
    return doc


def _declared_types(raw: str) -> set[str]:
    """schema.org types a page declares anywhere (``"@type": "ScholarlyArticle"``, ``itemtype=".../Article"``,
    ``typeof="BlogPosting"``): the page-level types :func:`~heritage_pipeline.sources.section_types.page_kind` reads,
    which are not records and so not in :func:`extract_structured`'s output."""
    found = set(re.findall(r'"@type"\s*:\s*"(?:https?://schema\.org/)?(\w+)"', raw))
    found |= set(re.findall(r'itemtype\s*=\s*["\']https?://schema\.org/(\w+)', raw, re.I))
    found |= set(re.findall(r'typeof\s*=\s*["\'](?:schema:)?(\w+)', raw))
    return found
