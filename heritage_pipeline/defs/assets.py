"""The eight assets of the pipeline, thin wrappers over :mod:`heritage_pipeline.pipeline`.

``raw_sources -> parsed_sections -> chunks -> enriched_chunks -> deduped_chunks -> embedded_chunks`` are
partitioned by source_type x language and stored as Parquet (one file per partition); ``lancedb_index`` and
``ablation_report`` consume every materialised partition (missing ones allowed).

Code versions fold in a hash of exactly the config sections that shape each asset, so editing
``configs/chunking.yaml`` (then reloading the code location) marks exactly the affected assets unsynced.
"""


import hashlib
import json
import os
from collections import Counter
from functools import lru_cache
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq

from .. import pipeline as P
from ..ablation import distractor_docs, run_ablation
from ..chunking import breadcrumb
from ..config import DEFAULT_CHUNKING_CONFIG, DEFAULT_PIPELINE_CONFIG, load_chunking_config, load_pipeline_config
from ..dedup import log_to_table
from ..discovery import RawSource, discover, sources_to_table, table_to_sources
from ..index import chunk_rows, write_partitions
from ..models import QuarantineRecord, chunks_to_table, table_to_chunks, table_vectors
from ..parsing import docs_to_table, table_to_docs
from ..text import normalize
from .partitions import partition_key_str, source_language_partitions, split_partition_key
from .resources import EmbedderResource, LanceDBResource, SettingsResource, TokenizerResource

CHUNKING_CONFIG_PATH = Path(os.environ.get("HERITAGE_CHUNKING_CONFIG", DEFAULT_CHUNKING_CONFIG))
PIPELINE_CONFIG_PATH = Path(os.environ.get("HERITAGE_PIPELINE_CONFIG", DEFAULT_PIPELINE_CONFIG))


def _code_version(stage: str, *sections: str, embedder: bool = False) -> str:
    """``<stage>-v1-<hash>``: hash of the named chunking.yaml sections (and the embedder section if asked)."""
    ccfg = load_chunking_config(CHUNKING_CONFIG_PATH)
    parts = {s: ccfg.model_dump(mode="json")[s] for s in sections}
    if embedder:
        parts["embedder"] = load_pipeline_config(PIPELINE_CONFIG_PATH).embedder.model_dump(mode="json")
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:12]
    return f"{stage}-v1-{digest}"


@lru_cache(maxsize=8)
def _discover_cached(data_dir: str, stamp: tuple) -> list[RawSource]:
    return discover(data_dir)


def discover_once(data_dir: str | Path) -> list[RawSource]:
    """Discovery memoised per process on the (path, size, mtime) of every file: partitions of one run share it."""
    raw = Path(data_dir) / "raw"
    stamp = tuple(sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in raw.rglob("*") if p.is_file())) if raw.is_dir() else ()
    return _discover_cached(str(data_dir), stamp)


def _partition(context) -> tuple[str, str]:
    return split_partition_key(context.partition_key)


def _md_table(rows: list[tuple], header: tuple) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _histogram(values: list[float], edges: list[float], label: str) -> str:
    counts = [0] * (len(edges) - 1)
    for v in values:
        for i in range(len(edges) - 1):
            if edges[i] <= v < edges[i + 1] or (i == len(edges) - 2 and v >= edges[-1]):
                counts[i] += 1
                break
    rows = [(f"{edges[i]:g}-{edges[i + 1]:g}" if i < len(edges) - 2 else f">= {edges[i]:g}", c, "█" * min(40, c))
            for i, c in enumerate(counts)]
    return _md_table(rows, (label, "chunks", ""))


PARTITIONED = dict(partitions_def=source_language_partitions, io_manager_key="io_manager")


@dg.asset(
    group_name="ingest", kinds={"python", "parquet"}, **PARTITIONED,
    description="Input files of one source type and language: decoded text, encoding, SHA-256, and the status of "
                "every file (ok, skipped or quarantined, with the reason). The data version is the hash of the "
                "partition's file hashes, so an edited file marks its partition stale.",
)
def raw_sources(context: dg.AssetExecutionContext, settings: SettingsResource) -> dg.Output[pa.Table]:
    st, lang = _partition(context)
    sources = [s for s in discover_once(settings.data_dir) if s.partition == (st, lang)]
    table = sources_to_table(sources)
    status = Counter(s.status for s in sources)
    version = hashlib.sha256("".join(sorted(f"{s.path}:{s.sha256}" for s in sources)).encode()).hexdigest()[:16]
    return dg.Output(
        table,
        data_version=dg.DataVersion(version),
        metadata={
            "dagster/row_count": len(sources),
            "files_ok": status.get("ok", 0),
            "files_skipped": status.get("skipped", 0),
            "files_quarantined": status.get("quarantined", 0),
            "bytes": sum(s.n_bytes for s in sources),
            "files": dg.MetadataValue.md(_md_table([(s.path, s.status, s.encoding or "-", s.reason or "") for s in sources],
                                                   ("file", "status", "encoding", "reason")) if sources else "(none)"),
        },
    )


@dg.asset(
    group_name="parse", kinds={"python", "docling", "parquet"}, **PARTITIONED,
    code_version=_code_version("parsed_sections", "hierarchy", "sources"),
    description="Parsed documents: blocks (paragraphs, headings, tables, code, messages, rows, entities) with "
                "character offsets, grouped into heading sections with breadcrumbs. HTML through docling; Markdown "
                "through an offset-recording scanner. Files that cannot be parsed are quarantined with a reason.",
)
def parsed_sections(context: dg.AssetExecutionContext, settings: SettingsResource, raw_sources: pa.Table) -> pa.Table:
    result = P.parse_sources(table_to_sources(raw_sources), settings.chunking())
    table = docs_to_table(result.docs)
    q = result.quarantined
    context.add_output_metadata({
        "dagster/row_count": table.num_rows,
        "documents": len(result.docs),
        "sections": sum(len(d.sections) for d in result.docs),
        "quarantined": len(q),
        "skipped": len(result.skipped),
        "quarantine": dg.MetadataValue.md(_md_table([(r.path, r.reason) for r in q], ("path", "reason")) if q else "(none)"),
        "skipped_items": dg.MetadataValue.md("\n".join(f"- {s}" for s in result.skipped[:200]) or "(none)"),
    })
    quarantine_path = settings.output_path / "storage" / "quarantine" / _partition(context)[1] / f"{_partition(context)[0]}.jsonl"
    P.write_quarantine(q, quarantine_path)
    return table


@dg.asset(
    group_name="chunk", kinds={"python", "parquet"}, **PARTITIONED,
    code_version=_code_version("chunks", "mode", "tokenizer", "hierarchy", "sliding_window", "domains", "sources", "quality"),
    description="Chunks with exact cl100k token counts, breadcrumbs (meta.anchors) and spans into the raw file "
                "(hybrid mode by default: heading sections, windows inside sections over 1.5 x the target).",
)
def chunks(context: dg.AssetExecutionContext, settings: SettingsResource, tokenizer: TokenizerResource,
           parsed_sections: pa.Table) -> pa.Table:
    docs = table_to_docs(parsed_sections)
    out = P.chunk_documents(docs, settings.chunking(), tokenizer.get())
    lens = [c.meta.len_tokens for c in out]
    context.add_output_metadata({
        "dagster/row_count": len(out),
        "documents": len(docs),
        "max_len_tokens": max(lens, default=0),
        "mean_len_tokens": round(sum(lens) / len(lens), 1) if lens else 0.0,
        "atomic_oversize": sum(1 for c in out if c.quality.atomic_oversize),
        "length_histogram": dg.MetadataValue.md(_histogram(lens, [0, 100, 300, 500, 700, 900, 1200], "tokens")),
    })
    return chunks_to_table(out)


@dg.asset(
    group_name="enrich", kinds={"python", "keybert", "parquet"}, **PARTITIONED,
    code_version=_code_version("enriched_chunks", "context", "quality", embedder=True),
    description="Chunks with keywords (KeyBERT on the embedder's model), rule-based entities, per-chunk language, "
                "section embeddings of the breadcrumb, readability and quality flags.",
)
def enriched_chunks(context: dg.AssetExecutionContext, settings: SettingsResource, embedder: EmbedderResource,
                    chunks: pa.Table) -> pa.Table:
    items = table_to_chunks(chunks)
    cache = embedder.cache()
    try:
        P.enrich_stage(items, settings.chunking(), embedder.get() if items else None, embedder.config(), cache)
    finally:
        if cache:
            cache.close()
    crumbs = {breadcrumb(c.meta.anchors) for c in items if c.meta.anchors}
    context.add_output_metadata({
        "dagster/row_count": len(items),
        "with_keywords": sum(1 for c in items if c.meta.keywords),
        "with_entities": sum(1 for c in items if c.meta.entities),
        "with_heritage_mentions": sum(1 for c in items if c.meta.mentioned_entities),
        "distinct_breadcrumbs": len(crumbs),
        "chunk_languages": dg.MetadataValue.json(dict(Counter(c.meta.lang for c in items))),
    })
    return chunks_to_table(items)


CHECKS = [
    dg.AssetCheckSpec("spans_round_trip", asset="deduped_chunks",
                      description="Spans lie inside the raw file and, for Markdown/plain text, normalize(raw[start:end]) == text."),
    dg.AssetCheckSpec("no_chunk_over_max", asset="deduped_chunks",
                      description="No chunk's embedded text (context prefix + text) exceeds the hard maximum, except flagged atomic units."),
    dg.AssetCheckSpec("no_empty_chunk", asset="deduped_chunks", description="No empty or whitespace-only chunk."),
    dg.AssetCheckSpec("ids_unique", asset="deduped_chunks", description="Chunk ids are unique."),
    dg.AssetCheckSpec("inputs_accounted_for", asset="deduped_chunks",
                      description="Every input file is chunked, skipped with a reason, or quarantined."),
    dg.AssetCheckSpec("dedup_log_complete", asset="deduped_chunks",
                      description="Every enriched chunk is either kept or has exactly one dedup-log row."),
]


@dg.asset(
    group_name="quality", kinds={"python", "datasketch", "parquet"}, **PARTITIONED, check_specs=CHECKS,
    code_version=_code_version("deduped_chunks", "quality"),
    description="Chunks after exact and MinHash-LSH near-duplicate removal (every LSH candidate confirmed by exact "
                "Jaccard). Every drop is logged (dedup log Parquet beside the asset) and recorded in the survivor's "
                "meta.duplicates. Asset checks verify spans, sizes, emptiness, id uniqueness and input accounting.",
)
def deduped_chunks(context: dg.AssetExecutionContext, settings: SettingsResource, enriched_chunks: pa.Table,
                   raw_sources: pa.Table, parsed_sections: pa.Table):
    st, lang = _partition(context)
    cfg = settings.chunking()
    items = table_to_chunks(enriched_chunks)
    kept, log = P.dedup_stage(items, cfg)
    log_path = settings.output_path / "storage" / "dedup_log" / lang / f"{st}.parquet"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = log_path.with_name(log_path.name + ".tmp")
    pq.write_table(log_to_table(log, cfg.quality.dedup), tmp)
    tmp.replace(log_path)
    reads = [r.quality.readability for r in kept if r.quality.readability is not None]
    metadata = {
        "dagster/row_count": len(kept),
        "chunks_in": len(items),
        "dropped": len(log),
        "dropped_exact": sum(1 for r in log if r.reason == "exact"),
        "dropped_near": sum(1 for r in log if r.reason.startswith("near")),
        "dedup_log": dg.MetadataValue.path(str(log_path)),
        "dedup_sample": dg.MetadataValue.md(_md_table([(r.dropped_id, r.kept_id, r.similarity, r.reason) for r in log[:20]],
                                                      ("dropped", "kept", "similarity", "reason")) if log else "(none)"),
        "length_histogram": dg.MetadataValue.md(_histogram([c.meta.len_tokens for c in kept], [0, 100, 300, 500, 700, 900, 1200], "tokens")),
        "readability_histogram": dg.MetadataValue.md(_histogram(reads, [-100, 0, 30, 50, 70, 100], "Flesch")),
        "boilerplate_flagged": sum(1 for c in kept if c.quality.boilerplate),
        "length_ok": sum(1 for c in kept if c.quality.length_ok),
    }
    yield dg.Output(chunks_to_table(kept), metadata=metadata)
    yield from _checks(kept, log, cfg.quality.length.max_tokens, raw_sources, parsed_sections, items)


def _checks(kept, log, cap: int, raw_sources: pa.Table, parsed_sections: pa.Table, items=None):
    """The asset checks, computed by :func:`heritage_pipeline.checks.deduped_checks`."""
    from ..checks import deduped_checks

    sources = table_to_sources(raw_sources)
    parsed = parsed_sections.select(["source_path", "text_is_raw", "structure"]).to_pylist()
    raw_docs = {d["source_path"]: d["text_is_raw"] for d in parsed}
    skip_reasons = {d["source_path"]: json.loads(d["structure"]).get("skipped", []) for d in parsed}
    for o in deduped_checks(items if items is not None else kept, kept, log, cap, {s.path: s.text for s in sources},
                            raw_docs, {s.path: s.status for s in sources}, skip_reasons):
        meta = {k: dg.MetadataValue.json(v) if isinstance(v, (list, dict)) else v for k, v in o.metadata.items()}
        yield dg.AssetCheckResult(check_name=o.name, passed=o.passed, metadata=meta,
                                  severity=dg.AssetCheckSeverity.WARN if o.severity == "WARN" else dg.AssetCheckSeverity.ERROR)


@dg.asset(
    group_name="embed", kinds={"python", "pytorch", "parquet"}, **PARTITIONED,
    code_version=_code_version("embedded_chunks", embedder=True),
    description="Final chunks with their passage vectors (embedding cache keyed by model, prefix and text hash: an "
                "unchanged chunk is never embedded twice). Long texts are embedded as the mean of model-window "
                "embeddings and say so in meta.embedding_windows.",
)
def embedded_chunks(context: dg.AssetExecutionContext, embedder: EmbedderResource, deduped_chunks: pa.Table) -> pa.Table:
    items = table_to_chunks(deduped_chunks)
    if not items:
        context.add_output_metadata({"dagster/row_count": 0})
        return chunks_to_table([], [])
    cache = embedder.cache()
    try:
        vecs, stats = P.embed_stage(items, embedder.get(), embedder.config(), cache)
    finally:
        if cache:
            cache.close()
    hit_rate = stats["cache_hits"] / len(items) if items else 0.0
    context.add_output_metadata({"dagster/row_count": len(items), "embedded_now": stats["embedded_now"],
                                 "cache_hit_rate": round(hit_rate, 3), "multi_window_chunks": stats["multi_window_chunks"],
                                 "dim": stats["dim"], "model": stats["model"]})
    return chunks_to_table(items, [v.tolist() for v in vecs])


@dg.asset(
    group_name="index", kinds={"lancedb"},
    ins={"embedded_chunks": dg.AssetIn(partition_mapping=dg.AllPartitionMapping(),
                                       metadata={"allow_missing_partitions": True})},
    description="LanceDB table of every materialised partition (vector, metadata columns, native full-text index); "
                "each partition's rows are replaced as a whole. Also writes the final chunks as JSONL.",
)
def lancedb_index(context: dg.AssetExecutionContext, settings: SettingsResource, lancedb: LanceDBResource,
                  embedded_chunks: dict[str, pa.Table]) -> dg.MaterializeResult:
    import numpy as np

    parts: dict[str, pa.Table] = {}
    all_chunks = []
    per_partition = {}
    for key in sorted(embedded_chunks):
        t = embedded_chunks[key]
        st, lang = split_partition_key(key)
        pkey = partition_key_str(st, lang)
        items = table_to_chunks(t)
        vecs = table_vectors(t)
        per_partition[pkey] = len(items)
        all_chunks.extend(items)
        if items:
            parts[pkey] = chunk_rows(items, np.asarray(vecs, dtype=np.float32), pkey)
        else:
            parts[pkey] = pa.table({})
    stats = write_partitions(lancedb.uri, lancedb.table, parts, drop_missing=True)
    jsonl = settings.output_path / "chunks.jsonl"
    fields = settings.chunking().outputs.fields
    n = P.write_jsonl(sorted(all_chunks, key=lambda c: c.id), jsonl, fields)
    return dg.MaterializeResult(metadata={
        "dagster/row_count": stats.rows, "partitions": stats.partitions, "index_bytes": stats.bytes_on_disk,
        "lancedb_version": stats.version, "uri": dg.MetadataValue.path(lancedb.uri), "jsonl": dg.MetadataValue.path(str(jsonl)),
        "jsonl_lines": n,
        "chunks_per_partition": dg.MetadataValue.md(_md_table(sorted(per_partition.items()), ("partition", "chunks"))),
    })


@dg.asset(
    group_name="evaluate", kinds={"python", "lancedb"}, deps=[lancedb_index],
    description="Ablation over chunk size x overlap (x mode) on the golden sets, per language, for BM25, vector and "
                "hybrid retrieval: hit@5, MRR@10, nDCG@10 with bootstrap 95% CIs, context budget, index size, build "
                "time and latency; JSON, CSV, Markdown and a plot, with a recommended setting per language.",
)
def ablation_report(context: dg.AssetExecutionContext, settings: SettingsResource, embedder: EmbedderResource) -> dg.MaterializeResult:
    pcfg = settings.pipeline()
    abl = pcfg.ablation
    golden_root = settings.data_path / "golden"
    golden = {lang: golden_root / lang for lang in abl.languages if (golden_root / lang / "golden.jsonl").exists()}
    doc_root = settings.data_path / "raw" / "document"
    md_files = sorted(doc_root.rglob("*.md")) if doc_root.is_dir() else []
    distractors = {lang: distractor_docs(md_files, lang, abl.distractor_chars, doc_root) for lang in golden}
    cache = embedder.cache()
    try:
        result = run_ablation(golden, distractors, settings.chunking(), abl, embedder.get(), cache,
                              settings.output_path / "ablation", progress=context.log.info,
                              lcfg=pcfg.lancedb, ecfg=embedder.config())
    finally:
        if cache:
            cache.close()
    md = result.markdown
    return dg.MaterializeResult(metadata={
        "report": dg.MetadataValue.md(md),
        "recommendations": dg.MetadataValue.json(result.recommendations),
        "rows": len(result.rows),
        "languages": dg.MetadataValue.json(sorted(golden)),
        "json": dg.MetadataValue.path(result.paths.get("json", "")),
        "plot": dg.MetadataValue.path(result.paths.get("plot", "")),
    })


ASSETS = [raw_sources, parsed_sections, chunks, enriched_chunks, deduped_chunks, embedded_chunks, lancedb_index, ablation_report]
PARTITIONED_ASSETS = ASSETS[:6]
