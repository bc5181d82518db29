"""The pipeline's stages as plain functions, shared by the Dagster assets and the CLI.

raw sources -> :func:`parse_sources` -> :func:`chunk_documents` -> :func:`enrich_stage` -> :func:`dedup_stage`
-> :func:`embed_stage`. Each takes and returns plain objects (no Dagster types), so it can be tested directly.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from heritage_pipeline.chunking.chunker import Chunker
from heritage_pipeline.core.storage import atomic_write
from heritage_pipeline.core.config import ChunkingConfig, EmbedderConfig
from heritage_pipeline.dedup.identity import dedup_records_and_prose
from heritage_pipeline.dedup.minhash import DedupRecord
from heritage_pipeline.sources.discovery import RawSource
from heritage_pipeline.embed.cache import EmbeddingCache, embed_with_cache
from heritage_pipeline.enrich.keywords import VECTOR_METHODS, is_registry_row
from heritage_pipeline.enrich.stage import enrich_chunks
from heritage_pipeline.enrich.gazetteer import Gazetteer, build_gazetteer, fingerprint, gazetteer_from_json, gazetteer_to_json
from heritage_pipeline.enrich.heritage import annotate_chunks, annotate_heritage
from heritage_pipeline.sources.linkml import type_label
from heritage_pipeline.core.models import Chunk, QuarantineRecord, chunk_to_json
from heritage_pipeline.sources.dispatch import parse_source
from heritage_pipeline.enrich.quality import assess_quality, drop_low_quality
from heritage_pipeline.core.structure import ParsedDocument
from heritage_pipeline.core.tokenizer import Tokenizer

Progress = Callable[[str], None]


@dataclass
class ParseResult:
    docs: list[ParsedDocument]
    quarantined: list[QuarantineRecord] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    accounted: dict[str, str] = field(default_factory=dict)  # source path -> parsed | skipped: ... | quarantined: ...


def parse_sources(sources: Iterable[RawSource], config: ChunkingConfig) -> ParseResult:
    """Parse every source; each one ends up parsed, skipped or quarantined (``accounted`` says which)."""
    result = ParseResult([])
    for src in sources:
        out = parse_source(src, config)
        result.quarantined.extend(out.quarantined)
        result.skipped.extend(out.skipped)
        if out.doc is not None:
            result.docs.append(out.doc)
            result.accounted[src.path] = "parsed"
        elif src.status == "skipped":
            result.accounted[src.path] = f"skipped: {src.reason}"
        elif out.skipped and not out.quarantined:  # the parser skipped the whole file (e.g. a LinkML schema)
            result.accounted[src.path] = f"skipped: {out.skipped[0].removeprefix(src.path + ': ')}"
        else:
            reason = next((q.reason for q in out.quarantined if q.path == src.path), src.reason)
            result.accounted[src.path] = f"quarantined: {reason}"
    return result


def chunk_documents(docs: list[ParsedDocument], config: ChunkingConfig, tokenizer: Tokenizer | None = None) -> list[Chunk]:
    """Chunk parsed documents with the config's mode and per-source-type / per-domain sizes."""
    chunker = Chunker(config, tokenizer)
    out: list[Chunk] = []
    for d in docs:
        out.extend(chunker.chunk_document(d))
    return out


def passage_text(chunk: Chunk, mode: str) -> str:
    """The string embedded for a chunk, by ``embedder.context_prefix``: ``none`` (text), ``breadcrumb``
    (``meta.context_prefix`` + text, exactly what ``len_tokens`` counts), ``heritage`` (``[type] [country]`` + text)
    or ``both``. The embedder's ``passage_prefix`` is added by the embedder itself."""
    if mode == "none":
        return chunk.text
    base = chunk.embedding_text() if mode in ("breadcrumb", "both") else chunk.text
    if mode in ("heritage", "both"):
        tags = [f"[{lbl}]" for lbl in (type_label(chunk.meta.custodian_type), chunk.meta.country_code) if lbl]
        if tags:
            return " ".join(tags) + " " + base
    return base


def passage_vectors(chunks: list[Chunk], embedder, ecfg: EmbedderConfig, cache: EmbeddingCache | None) -> tuple[np.ndarray, list[int], int]:
    """Passage vectors for chunks through the cache: (vectors [n, dim], windows per chunk, newly embedded count)."""
    texts = [passage_text(c, ecfg.context_prefix) for c in chunks]
    return embed_with_cache(embedder, texts, cache, prefix=ecfg.passage_prefix)


def gazetteer_stage(docs: Iterable[ParsedDocument], config: ChunkingConfig, data_dir: str | Path | None = None) -> Gazetteer:
    """The entity gazetteer of the parsed registries and LinkML entities under ``context.entities.gazetteer``
    (:func:`heritage_pipeline.enrich.gazetteer.build_gazetteer`): the ``gazetteer`` asset over the stored
    ``parsed_sections`` of the registry / LinkML partitions, the ``chunk`` command over the same files parsed now.

    Args:
        docs: parsed documents (those of other source types or outside the configured paths are ignored).
        config: the chunking config (``context.entities.gazetteer``).
        data_dir: the run's data folder (relative paths resolve against it), default the bundled ``data/``.

    Returns:
        The gazetteer (empty when ``context.entities.heritage`` is false: nothing reads it then).
    """
    if not config.context.entities.heritage:
        return Gazetteer()
    return build_gazetteer(docs, config.context.entities.gazetteer, data_dir)


# The gazetteer last written or loaded by this process, keyed by the SHA-256 of its stored JSON: the enrichment of a
# `heritage-pipeline run` loads what the gazetteer asset wrote seconds before in the same process (for a registry of
# 100,000 rows, seconds of JSON parsing and indexing). A file with other bytes is loaded again.
_GAZETTEER_MEMO: dict[str, tuple[Gazetteer, str]] = {}


def _remember_gazetteer(data: bytes, gaz: Gazetteer, version: str) -> None:
    _GAZETTEER_MEMO.clear()
    _GAZETTEER_MEMO[hashlib.sha256(data).hexdigest()] = (gaz, version)


def write_gazetteer(gaz: Gazetteer, path: str | Path, *, inputs: str | None = None, metadata: dict | None = None) -> str:
    """Store ``gaz`` as JSON atomically; returns its fingerprint (the gazetteer asset's data version).

    The gazetteer is also kept for :func:`load_gazetteer` of the same bytes in this process (``gazetteer_from_json``
    of the stored JSON rebuilds an equal gazetteer, so the object itself is handed on), and a record beside the file
    (``<path>.record.json``: its SHA-256, the fingerprint, ``inputs`` and ``metadata``) lets a later run take the
    fingerprint without loading it (:func:`stored_gazetteer_version`) or skip the build (:func:`reusable_gazetteer`).

    Args:
        gaz: the gazetteer.
        path: where to store it.
        inputs: a key of what it was built from (input data versions, code version), for :func:`reusable_gazetteer`.
        metadata: JSON-able facts about it to report again on reuse (counts).

    Returns:
        The fingerprint (:func:`~heritage_pipeline.enrich.gazetteer.fingerprint`)."""
    text = gazetteer_to_json(gaz)
    atomic_write(Path(path), lambda tmp: tmp.write_text(text, encoding="utf-8"))
    version = fingerprint(gaz)
    data = text.encode("utf-8")
    _remember_gazetteer(data, gaz, version)
    record = {"sha256": hashlib.sha256(data).hexdigest(), "fingerprint": version, "inputs": inputs or "",
              "metadata": metadata or {}}
    atomic_write(_gazetteer_record_path(path), lambda tmp: tmp.write_text(json.dumps(record), encoding="utf-8"))
    return version


def _gazetteer_record_path(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".record.json")


def _gazetteer_record(path: str | Path) -> dict | None:
    """The record :func:`write_gazetteer` left beside ``path`` when it still describes the file there, else None."""
    try:
        record = json.loads(_gazetteer_record_path(path).read_text(encoding="utf-8"))
        return record if record.get("sha256") == hashlib.sha256(Path(path).read_bytes()).hexdigest() else None
    except (OSError, ValueError, AttributeError):
        return None


def stored_gazetteer_version(path: str | Path) -> str | None:
    """The fingerprint of the gazetteer stored at ``path`` without loading it when :func:`write_gazetteer` recorded
    it for these very bytes (else loaded); None when nothing is stored there."""
    if not Path(path).is_file():
        return None
    record = _gazetteer_record(path)
    return record["fingerprint"] if record is not None else load_gazetteer(path)[1]


def reusable_gazetteer(path: str | Path, inputs: str | None) -> tuple[str, dict] | None:
    """``(fingerprint, metadata)`` of the gazetteer stored at ``path`` when :func:`write_gazetteer` wrote it from the
    inputs ``inputs`` (a key of the input data versions and the code version), so it need not be built again; else
    None."""
    record = _gazetteer_record(path) if inputs else None
    if record is None or record.get("inputs") != inputs:
        return None
    return record["fingerprint"], record.get("metadata", {})


def load_gazetteer(path: str | Path) -> tuple[Gazetteer, str]:
    """The gazetteer stored by :func:`write_gazetteer` and its fingerprint (the one this process wrote or loaded
    last when the file holds the same bytes; read-only: callers must not modify it).

    Raises:
        FileNotFoundError: nothing is stored at ``path`` (the ``gazetteer`` asset was never materialised).
    """
    data = Path(path).read_bytes()
    hit = _GAZETTEER_MEMO.get(hashlib.sha256(data).hexdigest())
    if hit is not None:
        return hit
    gaz = gazetteer_from_json(data.decode("utf-8"))
    version = fingerprint(gaz)
    _remember_gazetteer(data, gaz, version)
    return gaz, version


def gazetteer_for_enrichment(path: str | Path, config: ChunkingConfig,
                             data_dir: str | Path | None = None) -> tuple[Gazetteer, str, bool]:
    """The gazetteer enrichment resolves mentions against: the stored ``gazetteer`` asset, or, when it was never
    materialised (a partition launched from the UI or the nightly schedule before any full run), the gazetteer of
    the registry files under ``data_dir`` parsed now (what the ``chunk`` command uses), so the run does not fail.

    Args:
        path: where the gazetteer asset is stored (:attr:`~heritage_pipeline.core.storage.OutputLayout.gazetteer`).
        config: the chunking config (``context.entities.gazetteer``).
        data_dir: the run's data folder.

    Returns:
        ``(gazetteer, fingerprint, from_raw_files)``; ``from_raw_files`` is True for the fallback.
    """
    try:
        gaz, version = load_gazetteer(path)
        return gaz, version, False
    except FileNotFoundError:
        from heritage_pipeline.enrich.gazetteer import default_gazetteer

        gaz = default_gazetteer(config.context.entities.gazetteer, data_dir)
        return gaz, fingerprint(gaz), True


def enrich_stage(chunks: list[Chunk], config: ChunkingConfig, embedder=None, ecfg: EmbedderConfig | None = None,
                 cache: EmbeddingCache | None = None, data_dir: str | Path | None = None,
                 stats: dict[str, int] | None = None, timings: dict[str, float] | None = None,
                 gazetteer: Gazetteer | None = None) -> list[Chunk]:
    """Keywords, NER, heritage mentions, per-chunk language, section embeddings and quality flags, in place.

    Keywords rank against the chunk's passage vector computed here once through the cache (the embedding stage finds
    it there and does not embed it again). Registry rows take their slot values as keywords and get no vector here.

    Args:
        chunks: the chunks to enrich (modified in place).
        config: the chunking config (``context`` and ``quality`` sections).
        embedder: the passage embedder (keywords and section embeddings), or None to skip both.
        ecfg: the embedder config (context prefix, passage prefix); default the model defaults.
        cache: the embedding cache, or None.
        data_dir: the data folder whose registries build the gazetteer when ``gazetteer`` is None (through the
            same :func:`gazetteer_stage`; default the bundled data).
        stats: if given, receives ``passages_embedded_now``: chunk passages embedded now for keywords (keyword
            candidates and breadcrumbs are not passages and are not counted).
        timings: if given, receives wall seconds per sub-step (``heritage_mentions``, ``passage_vectors``, the
            sub-steps of :func:`~heritage_pipeline.enrich.stage.enrich_chunks`, ``quality``).
        gazetteer: the gazetteer the heritage mentions resolve against (the ``gazetteer`` asset's); None builds the
            one of ``data_dir``'s registries.

    Returns:
        ``chunks``.
    """
    from heritage_pipeline.enrich.stage import timed

    with timed(timings, "heritage_mentions"):
        if gazetteer is None:  # heritage mentions + coreference -> meta.mentioned_entities
            annotate_heritage(chunks, config, data_dir)
        elif config.context.entities.heritage and chunks:
            annotate_chunks(chunks, gazetteer)
    doc_vectors = None
    embedded = 0
    prose = [c for c in chunks if not is_registry_row(c)]  # registry rows take their slot values as keywords: no vectors
    if embedder is not None and config.context.keywords.method in VECTOR_METHODS and prose:
        with timed(timings, "passage_vectors"):
            doc_vectors, _, embedded = passage_vectors(prose, embedder, ecfg or EmbedderConfig(), cache)
    if stats is not None:
        stats["passages_embedded_now"] = embedded
    enrich_chunks(chunks, config, embedder, doc_vectors, cache, timings)
    with timed(timings, "quality"):
        assess_quality(chunks, config)
    return chunks


def dedup_stage(chunks: list[Chunk], config: ChunkingConfig) -> tuple[list[Chunk], list[DedupRecord]]:
    """Optional quality drops (logged), then dedup (logged): registry rows and LinkML entities by identity
    (dedup/identity.py: same ISIL / QID / hc_id / GHCID... = same institution), prose by exact hash + MinHash."""
    kept, low = drop_low_quality(chunks, config)
    kept, log = dedup_records_and_prose(kept, config.quality.dedup, min_tokens=config.quality.length.min_tokens,
                                        max_tokens=config.quality.length.max_tokens)
    log = [DedupRecord(c.id, c.meta.source_path, "", "", None, f"dropped: {why}") for c, why in low] + log
    return kept, log


def embed_stage(chunks: list[Chunk], embedder, ecfg: EmbedderConfig, cache: EmbeddingCache | None) -> tuple[np.ndarray, dict[str, Any]]:
    """Passage vectors for the final chunks; sets ``meta.embedding_model`` / ``embedding_windows``."""
    vecs, wins, embedded_now = passage_vectors(chunks, embedder, ecfg, cache)
    for c, w in zip(chunks, wins):
        c.meta.embedding_model = embedder.model_id
        c.meta.embedding_windows = w
    stats = {"chunks": len(chunks), "embedded_now": embedded_now, "cache_hits": len(chunks) - embedded_now if cache else 0,
             "multi_window_chunks": sum(1 for w in wins if w > 1), "dim": int(embedder.dim), "model": embedder.model_id}
    return vecs, stats


def write_jsonl(chunks: Iterable[Chunk], path: str | Path, fields: list[str] | None = None) -> int:
    """Write chunks as JSON Lines atomically (:func:`heritage_pipeline.core.storage.atomic_write`).

    Returns:
        The number of lines.
    """
    lines = [chunk_to_json(c, fields) + "\n" for c in chunks]
    atomic_write(Path(path), lambda tmp: tmp.write_text("".join(lines), encoding="utf-8"))
    return len(lines)


def parser_skip_reasons(paths: Iterable[str], skipped: Iterable[str], parsed_paths: set[str]) -> dict[str, str]:
    """The reason each file that its parser skipped whole was skipped for (e.g. ``LinkML schema, not instance data``),
    as :func:`parse_sources` words it for ``chunk`` (``accounted``), so that ``run`` can print the same reason.

    Args:
        paths: the source paths of a partition; skipped: the parse stage's ``"<path>: <why>"`` items;
        parsed_paths: the paths that parsed into a document (their skipped items are parts, not the file).
    Returns:
        ``{path: why}`` of the files with no document and a skipped item (the first one).
    """
    out: dict[str, str] = {}
    todo = [p for p in paths if p not in parsed_paths]
    items = list(skipped)
    for p in todo:
        why = next((x.removeprefix(p + ": ") for x in items if x.startswith(p + ": ")), None)
        if why:
            out[p] = why
    return out


def write_quarantine(records: Iterable[QuarantineRecord], path: str | Path) -> int:
    """Write quarantine records (path, reason, stage) as JSON Lines atomically.

    Returns:
        The number of records.
    """
    lines = [json.dumps({"path": r.path, "reason": r.reason, "stage": r.stage}, ensure_ascii=False) + "\n"
             for r in records]
    atomic_write(Path(path), lambda tmp: tmp.write_text("".join(lines), encoding="utf-8"))
    return len(lines)

