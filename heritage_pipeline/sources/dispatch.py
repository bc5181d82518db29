"""Parse stage: one raw source -> one :class:`ParsedDocument` (or a quarantine record with the reason).

Dispatch by source type and extension: Markdown/plain text (own offset-recording scanner), HTML (docling),
PDF (docling, only where its layout models are installed: otherwise a clear quarantine reason), conversation JSON,
CSV/TSV registries, LinkML instance YAML. Problems inside a file that do not spoil the rest (a malformed message,
an unparsable row, an invalid entity) are quarantined individually as ``<file>#<location>``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from heritage_pipeline.core.config import ChunkingConfig
from .conversation import parse_conversations
from .discovery import RawSource
from .html import parse_html
from .linkml import parse_instances
from .markdown import parse_markdown
from heritage_pipeline.core.models import QuarantineRecord
from .registry import parse_registry
from heritage_pipeline.core.structure import Block, NotInputData, ParsedDocument, ParseError, Section
from .website import parse_website


@dataclass
class ParseOutcome:
    """Result of parsing one source: the document (None when quarantined) and what was quarantined or skipped."""

    doc: ParsedDocument | None
    quarantined: list[QuarantineRecord] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def doc_id_for(path: str) -> str:
    """Stable document id: the data-relative path with ``raw/<source_type>/`` removed (extension kept)."""
    parts = Path(path).as_posix().split("/")
    if len(parts) > 2 and parts[0] == "raw":
        parts = parts[2:]
    return "/".join(parts)


def parse_source(src: RawSource, config: ChunkingConfig) -> ParseOutcome:
    """Parse one decoded source. Never raises for bad content: it is quarantined with a one-line reason."""
    if src.status != "ok":
        rec = QuarantineRecord(path=src.path, reason=src.reason, stage="discover", source_type=src.source_type)
        return ParseOutcome(None, [rec] if src.status == "quarantined" else [], [f"{src.path}: {src.reason}"] if src.status == "skipped" else [])
    doc_id = doc_id_for(src.path)
    suffix = Path(src.path).suffix.lower()
    problems: list[tuple[str, str]] = []
    try:
        if src.source_type == "document":
            if suffix == ".pdf":
                raise ParseError(
                    "PDF needs docling's layout models (pip install 'docling-slim[format-pdf,models-local]' and the "
                    "model weights); they are not installed here, so PDFs cannot be parsed offline"
                )
            if suffix in (".html", ".htm", ".xhtml"):
                doc = parse_html(src.text, doc_id=doc_id, source_path=src.path, lang=src.lang,
                                 max_level=config.hierarchy.max_level)
            else:
                doc = parse_markdown(src.text, doc_id=doc_id, source_path=src.path, lang=src.lang,
                                     max_level=config.hierarchy.max_level)
            doc.domain = config.domains.domain_for(src.path)
        elif src.source_type == "website":
            if suffix not in (".html", ".htm", ".xhtml"):
                raise ParseError(f"website sources must be HTML, got {suffix or 'no extension'}")
            web = config.sources.website
            doc = parse_website(src.text, doc_id=doc_id, source_path=src.path, lang=src.lang,
                                max_level=config.hierarchy.max_level, main_content=web.main_content,
                                section_min_confidence=web.section_min_confidence,
                                section_zero_shot=web.section_zero_shot,
                                section_zero_shot_weight=web.section_zero_shot_weight,
                                structured_data=web.structured_data)
            problems = [tuple(p) for p in doc.meta.get("problems", [])]
        elif src.source_type == "conversation":
            doc, problems = parse_conversations(src.text, doc_id=doc_id, source_path=src.path, lang=src.lang,
                                                cfg=config.sources.conversation)
        elif src.source_type == "csv_registry":
            doc, problems = parse_registry(src.text, doc_id=doc_id, source_path=src.path, lang=src.lang)
            if src.lang_confidence is not None:
                # the file's one language and its confidence (rows are not detected one by one: their
                # meta.lang_confidence stays None, so that an appended row does not change every row's chunk and
                # force the whole registry through enrichment again on the nightly run)
                doc.meta["lang_confidence"] = round(src.lang_confidence, 4)
        elif src.source_type == "yaml_instance":
            doc, problems = parse_instances(src.text, doc_id=doc_id, source_path=src.path, lang=src.lang,
                                            abs_path=src.abs_path)
        else:
            raise ParseError(f"unknown source type {src.source_type!r}")
    except NotInputData as exc:  # readable, deliberately not input (e.g. a LinkML schema): skipped, with the reason
        return ParseOutcome(None, [], [f"{src.path}: {exc}"])
    except ParseError as exc:
        return ParseOutcome(None, [QuarantineRecord(path=src.path, reason=str(exc), stage="parse", source_type=src.source_type)])
    except Exception as exc:  # a parser library failing on hostile input must not stop the run
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        return ParseOutcome(None, [QuarantineRecord(path=src.path, reason=f"cannot be parsed ({reason})", stage="parse",
                                                    source_type=src.source_type)])
    quarantined = [QuarantineRecord(path=f"{src.path}#{loc}", reason=why, stage="parse", source_type=src.source_type)
                   for loc, why in problems]
    skipped = [f"{src.path}: {s}" for s in doc.skipped]
    if not doc.blocks and not doc.skipped and not problems:  # e.g. a header-only registry, a page of scripts only
        skipped.append(f"{src.path}: no text to chunk (the file parsed but holds no content)")
    return ParseOutcome(doc, quarantined, skipped)


# ------------------------------------------------------------------------------------------------ Arrow storage
DOC_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("source_path", pa.string()),
        ("source_type", pa.string()),
        ("lang", pa.string()),
        ("domain", pa.string()),
        ("text_is_raw", pa.bool_()),
        ("text", pa.string()),
        ("n_sections", pa.int64()),
        ("structure", pa.string()),  # JSON: blocks, sections, meta, skipped
    ]
)


def docs_to_table(docs: list[ParsedDocument]) -> pa.Table:
    """Parsed documents -> Arrow (one row per document, structure as JSON)."""
    rows = []
    for d in docs:
        structure = {
            "blocks": [[b.kind, b.start, b.end, b.content_end, b.level, b.title, b.info, b.header_end, b.raw_start, b.raw_end]
                       for b in d.blocks],
            "sections": [{"anchors": s.anchors, "level": s.level, "first": s.first, "last": s.last, "meta": s.meta,
                          "standalone": s.standalone, "key": s.key} for s in d.sections],
            "meta": d.meta,
            "skipped": d.skipped,
        }
        rows.append({"doc_id": d.doc_id, "source_path": d.source_path, "source_type": d.source_type, "lang": d.lang,
                     "domain": d.domain, "text_is_raw": d.text_is_raw, "text": d.text, "n_sections": len(d.sections),
                     "structure": json.dumps(structure, ensure_ascii=False, default=str)})
    return pa.Table.from_pylist(rows, schema=DOC_SCHEMA)


def table_to_docs(table: pa.Table) -> list[ParsedDocument]:
    """Inverse of :func:`docs_to_table`."""
    out = []
    for row in table.to_pylist():
        st: dict[str, Any] = json.loads(row["structure"])
        blocks = [Block(*b) for b in st["blocks"]]
        sections = [Section(**s) for s in st["sections"]]
        out.append(ParsedDocument(doc_id=row["doc_id"], source_path=row["source_path"], source_type=row["source_type"],
                                  lang=row["lang"], text=row["text"], blocks=blocks, sections=sections,
                                  text_is_raw=row["text_is_raw"], domain=row["domain"], meta=st["meta"],
                                  skipped=st["skipped"]))
    return out
