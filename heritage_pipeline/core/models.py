"""The record types that flow through every stage: raw source -> section -> chunk.

One :class:`Chunk` model is produced by the chunker and carried through enrichment, quality, dedup and
embedding; later stages fill fields, they never re-derive text or offsets.

Offsets (``Spans``) are **code-point offsets** (Python ``str`` indices) into the raw file decoded with its
detected encoding, a leading BOM removed; intervals are half-open ``[char_start, char_end)``.
"""

from __future__ import annotations

import json
import os
import time
from datetime import date, datetime, timezone
from typing import Any, Literal

import numpy as np
import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

SCHEMA_NAME = "heritage_pipeline.chunk"
SCHEMA_VERSION = 1

DataTier = Literal["TIER_1_AUTHORITATIVE", "TIER_2_VERIFIED", "TIER_3_CROWD_SOURCED", "TIER_4_INFERRED"]
TIER_PRIORITY: dict[str, int] = {
    "TIER_1_AUTHORITATIVE": 4,
    "TIER_2_VERIFIED": 3,
    "TIER_3_CROWD_SOURCED": 2,
    "TIER_4_INFERRED": 1,
}
PrimaryClass = Literal["custodian", "observation", "collection", "relationship", "context"]


class Spans(BaseModel):
    """Half-open ``[char_start, char_end)`` code-point offsets into the decoded raw file."""

    model_config = ConfigDict(extra="forbid")
    char_start: int = Field(ge=0)
    char_end: int = Field(ge=0)


def extraction_day() -> str:
    """ISO date (``YYYY-MM-DD``) stamped into ``ChunkMeta.extraction_date``: the UTC day of ``$SOURCE_DATE_EPOCH``
    (seconds since 1970-01-01, the reproducible-builds convention,
    https://reproducible-builds.org/specs/source-date-epoch/) when set, so that two runs on different days give
    byte-identical output; otherwise today's local date. Raises ValueError when the variable is not an integer."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch:
        try:
            return datetime.fromtimestamp(int(epoch), tz=timezone.utc).date().isoformat()
        except ValueError as exc:
            raise ValueError(f"SOURCE_DATE_EPOCH={epoch!r} is not an integer number of seconds") from exc
    # date.today() costs ~3.5 us (a localtime call), a noticeable share of chunking a short document; the local
    # date cannot change within one whole second (UTC offsets are whole seconds), so it is computed once a second
    global _TODAY
    now = int(time.time())
    if _TODAY[0] != now:
        _TODAY = (now, date.fromtimestamp(now).isoformat())
    return _TODAY[1]


_TODAY: tuple[int, str] = (-1, "")  # (second since the epoch, local ISO date in that second)


class ChunkMetadata(BaseModel):
    """Universal chunk metadata of the heritage seed (``ChunkMetadata``), present on every chunk."""

    model_config = ConfigDict(extra="forbid")
    source_type: Literal["document", "website", "conversation", "csv_registry", "yaml_instance", "wikidata"]
    source_id: str
    primary_class: PrimaryClass | None = None
    mentioned_classes: list[str] = Field(default_factory=list)
    custodian_type: str | None = None
    mentioned_entities: list[str] = Field(default_factory=list)
    entity_types: list[str] = Field(default_factory=list)
    ghcid: str | None = None
    country_code: str | None = None
    region_code: str | None = None
    settlement: str | None = None
    data_tier: DataTier = "TIER_4_INFERRED"
    extraction_date: str = Field(default_factory=lambda: extraction_day())
    confidence_score: float = 0.5
    language: str = "und"
    has_identifiers: bool = False
    has_collections: bool = False
    has_relationships: bool = False


class ChunkMeta(ChunkMetadata):
    """Per-chunk metadata: the seed's :class:`ChunkMetadata` plus chunking/enrichment fields.

    Source-specific fields are typed and optional (``None`` where they do not apply) so that every one of them
    can become a LanceDB column.
    """

    source_path: str
    doc_id: str
    anchors: list[str] = Field(default_factory=list)
    context_prefix: str = ""
    # SPEC §3 text contract (heritage_pipeline.chunking.excluded): appended after the text when embedding (the
    # closing fence of a split code piece), and [start, end) character offsets into ``text`` left out of the embedding
    context_suffix: str = ""
    excluded: list[list[int]] = Field(default_factory=list)
    # headings of tiny sibling sections merged into this chunk (in order; [] for a chunk of one section)
    sections: list[str] = Field(default_factory=list)
    # pieces of one split table: the same table_id (<doc_id>#table-<n>) and the data rows they hold (1-based,
    # inclusive, header rows not counted)
    table_id: str | None = None
    table_rows: list[int] | None = None
    keywords: list[str] = Field(default_factory=list)
    entities: dict[str, list[str]] = Field(default_factory=dict)
    len_tokens: int = 0
    lang: str = "und"
    # confidence in [0, 1] of the chunk's own language detection (heritage_pipeline.enrich.langid.chunk_language);
    # below language.chunk_min_confidence ``lang`` is inherited from the document; None before enrichment and for a
    # row of a single-language registry (it takes its file's language, not detected row by row)
    lang_confidence: float | None = None
    domain: str | None = None
    block_kinds: list[str] = Field(default_factory=list)
    table_digest: str | None = None
    # tables and code blocks in the chunk (issue 5; see heritage_pipeline.enrich.tables / .codeblocks); text stays exact
    table_text: str | None = None
    table_summary: str | None = None
    code_languages: list[str] = Field(default_factory=list)
    code_paths: list[str] = Field(default_factory=list)
    code_summary: str | None = None
    duplicates: list[dict[str, str]] = Field(default_factory=list)
    # conversation
    conversation_id: str | None = None
    message_index: int | None = None
    sender: str | None = None
    created_at: str | None = None
    # website
    source_url: str | None = None
    section_type: str | None = None
    section_confidence: float | None = None  # 0-1, heritage_pipeline.sources.section_types.classify_section
    xpath: str | None = None
    has_images: bool | None = None
    html_tag: str | None = None
    # registries / instances
    registry_type: str | None = None
    row_index: int | None = None
    hc_id: str | None = None
    extra: dict[str, str] = Field(default_factory=dict)
    # embedding provenance (filled by the embedding stage)
    embedding_model: str | None = None
    embedding_windows: int | None = None


class Quality(BaseModel):
    """Quality flags and scores; see :mod:`heritage_pipeline.enrich.quality` for the definitions."""

    model_config = ConfigDict(extra="forbid")
    readability: float | None = None
    readability_formula: str | None = None
    readability_ok: bool | None = None
    length_ok: bool = True
    boilerplate: bool = False
    degenerate: bool = False  # no linguistic content (see heritage_pipeline.enrich.quality.degenerate_reason)
    degenerate_reason: str | None = None
    score: float | None = None
    dup_penalty: float = 0.0
    atomic_oversize: bool = False
    oversize_reason: str | None = None
    unclosed_fence: bool = False  # a fenced code block in the chunk has no closing fence (it runs to the file's end)


class Chunk(BaseModel):
    """One chunk record, as written to JSONL (one per line).

    ``text`` is the chunk's source region ``raw[char_start:char_end]`` after the documented normalisation
    (:func:`heritage_pipeline.core.text.normalize`) for Markdown and plain text; for derived sources (HTML, JSON,
    CSV, YAML) it is the extracted text and the span covers the raw region it came from.
    What is embedded is :meth:`embedding_text` (``meta.context_prefix`` + blank line + ``text`` without the
    ``meta.excluded`` ranges + ``meta.context_suffix``); ``len_tokens`` counts exactly that string in cl100k tokens.
    """

    model_config = ConfigDict(extra="forbid")
    id: str
    text: str
    meta: ChunkMeta
    section_emb: list[float] | None = None
    spans: Spans
    quality: Quality = Field(default_factory=Quality)

    # Splitter-style accessors (LangChain / Chonkie users expect these on a chunk).
    @property
    def char_start(self) -> int:
        return self.spans.char_start

    @property
    def char_end(self) -> int:
        return self.spans.char_end

    @property
    def anchors(self) -> list[str]:
        return self.meta.anchors

    @property
    def context_prefix(self) -> str:
        return self.meta.context_prefix

    @property
    def len_tokens(self) -> int:
        return self.meta.len_tokens

    def embedding_text(self) -> str:
        """The exact string whose cl100k token count is ``meta.len_tokens``
        (:func:`heritage_pipeline.chunking.excluded.embedded_text`: prefix, blank line, text without the excluded
        ranges, the suffix)."""
        m = self.meta
        if not m.excluded and not m.context_suffix:
            return join_prefix(m.context_prefix, self.text)
        from heritage_pipeline.chunking.excluded import embedded_text  # (chunking imports this module)

        return embedded_text(m.context_prefix, self.text, m.excluded, m.context_suffix)


def join_prefix(prefix: str, text: str) -> str:
    """Join a context prefix and a chunk text the one way the whole pipeline does (blank line between)."""
    return f"{prefix}\n\n{text}" if prefix else text


class QuarantineRecord(BaseModel):
    """A file (or a part of one) that could not be processed, with a one-line reason naming the problem."""

    model_config = ConfigDict(extra="forbid")
    path: str
    reason: str
    stage: str = "parse"
    source_type: str | None = None


# ---------------------------------------------------------------------------------------------------------------
# Arrow/Parquet conversion. Scalar fields that users filter on are real columns; the full record is kept as JSON
# (schema name + version inside) so nested metadata round-trips exactly; vectors are float32 lists.
# ---------------------------------------------------------------------------------------------------------------

CHUNK_ARROW_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("doc_id", pa.string()),
        ("source_path", pa.string()),
        ("source_type", pa.string()),
        ("lang", pa.string()),
        ("char_start", pa.int64()),
        ("char_end", pa.int64()),
        ("len_tokens", pa.int64()),
        ("text", pa.string()),
        ("record", pa.string()),
        ("section_emb", pa.list_(pa.float32())),
        ("vector", pa.list_(pa.float32())),
    ],
    metadata={"schema_name": SCHEMA_NAME, "schema_version": str(SCHEMA_VERSION)},
)


def chunks_to_table(chunks: list[Chunk], vectors: "list[list[float]] | np.ndarray | None" = None) -> pa.Table:
    """Convert chunks (and optional passage vectors, same order) to an Arrow table of :data:`CHUNK_ARROW_SCHEMA`.

    Args:
        chunks: the chunks.
        vectors: one vector per chunk: Python lists, or a 2-D numpy array [n_chunks, dim] (converted to the
            ``vector`` column without Python floats: building 100,000 × 512 lists cost as much as 3% of embedding
            the rows), or None (the column is null).

    Returns:
        The table.

    Raises:
        ValueError: the number of vectors differs from the number of chunks, or an array is not 2-D.
    """
    if vectors is not None and len(vectors) != len(chunks):
        raise ValueError(f"{len(vectors)} vectors for {len(chunks)} chunks")
    array = None
    if isinstance(vectors, np.ndarray):
        if vectors.ndim != 2:
            raise ValueError(f"vectors: a 2-D array expected, got shape {vectors.shape}")
        n, dim = vectors.shape
        offsets = pa.array(np.arange(0, (n + 1) * dim, dim, dtype=np.int32) if n else np.zeros(1, np.int32))
        array = pa.ListArray.from_arrays(offsets, pa.array(np.ascontiguousarray(vectors, dtype=np.float32).ravel()))
        vectors = None
    cols: dict[str, list[Any]] = {name: [] for name in CHUNK_ARROW_SCHEMA.names}
    for i, c in enumerate(chunks):
        cols["id"].append(c.id)
        cols["doc_id"].append(c.meta.doc_id)
        cols["source_path"].append(c.meta.source_path)
        cols["source_type"].append(c.meta.source_type)
        cols["lang"].append(c.meta.lang)
        cols["char_start"].append(c.spans.char_start)
        cols["char_end"].append(c.spans.char_end)
        cols["len_tokens"].append(c.meta.len_tokens)
        cols["text"].append(c.text)
        cols["record"].append(c.model_dump_json(exclude={"section_emb"}))
        cols["section_emb"].append(c.section_emb)
        cols["vector"].append(vectors[i] if vectors is not None else None)
    if array is not None:
        cols["vector"] = array
    return pa.table(cols, schema=CHUNK_ARROW_SCHEMA)


def table_to_chunks(table: pa.Table) -> list[Chunk]:
    """Inverse of :func:`chunks_to_table` (vectors are read separately with :func:`table_vectors`).

    Raises ValueError when the table was written by another schema version.
    """
    check_schema(table)
    records = table.column("record").to_pylist()
    embs = table.column("section_emb").to_pylist()
    out = []
    for rec, emb in zip(records, embs):
        chunk = Chunk.model_validate_json(rec)
        chunk.section_emb = emb
        out.append(chunk)
    return out


def table_vectors(table: pa.Table) -> list[list[float] | None]:
    """The ``vector`` column of a chunk table as Python lists (None where not embedded)."""
    return table.column("vector").to_pylist()


def table_vector_array(table: pa.Table) -> np.ndarray:
    """The ``vector`` column of an embedded chunk table as one ``float32 [n, dim]`` array, read from the Arrow
    buffers without Python floats (the lists of :func:`table_vectors` for 100,000 rows x 512 dimensions are 51 million
    float objects: seconds of CPU and gigabytes of memory). Equals ``np.asarray(table_vectors(table), np.float32)``.

    Raises:
        ValueError: a row has no vector, or the rows' vectors differ in length.
    """
    col = table.column("vector")
    if col.null_count:
        raise ValueError(f"{col.null_count} of {table.num_rows} rows have no vector")
    if table.num_rows == 0:
        return np.zeros((0,), dtype=np.float32)
    arr = col.combine_chunks()
    lengths = arr.value_lengths().to_numpy(zero_copy_only=False)
    if lengths.min() != lengths.max():
        raise ValueError(f"vectors of {lengths.min()} to {lengths.max()} dimensions in one table")
    values = arr.flatten().to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
    return values.reshape(table.num_rows, int(lengths[0]))


def check_schema(table: pa.Table) -> None:
    """Raise ValueError if an Arrow table was not written with this chunk schema version."""
    meta = table.schema.metadata or {}
    name = meta.get(b"schema_name", b"").decode()
    version = meta.get(b"schema_version", b"").decode()
    if name != SCHEMA_NAME or version != str(SCHEMA_VERSION):
        raise ValueError(
            f"chunk table has schema {name or '?'} v{version or '?'}, expected {SCHEMA_NAME} v{SCHEMA_VERSION}: "
            "re-materialise it with this version of heritage_pipeline"
        )


def chunk_to_json(chunk: Chunk, fields: list[str] | None = None) -> str:
    """One JSONL line for a chunk, restricted to ``fields`` (default: all output fields)."""
    data = chunk.model_dump(mode="json")
    if fields:
        data = {k: v for k, v in data.items() if k in fields}
    return json.dumps(data, ensure_ascii=False)
