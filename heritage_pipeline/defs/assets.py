"""The nine assets of the pipeline, thin wrappers over :mod:`heritage_pipeline.stages`.

``raw_sources -> parsed_sections -> chunks -> enriched_chunks -> deduped_chunks -> embedded_chunks`` are
partitioned by source_type x language and stored as Parquet (one file per partition); ``lancedb_index`` and
``ablation_report`` consume every materialised partition (missing ones allowed).

Versions (see :mod:`.versions` and :mod:`heritage_pipeline.incremental.versions`):

* code version = hash of exactly the config keys and source code that shape the asset, so editing
  ``configs/chunking.yaml`` (then reloading the code location) marks exactly the affected assets unsynced;
* data version = the content chain: for ``raw_sources`` a hash of the partition's file hashes (an edited file gives
  a new data version, and its downstream assets become unsynced), for the others
  ``sha256(asset, code version, input data versions)``.

Incremental work: an asset whose data version would equal the one in its stored Parquet file returns that file
instead of recomputing (a nightly run over unchanged registries parses, enriches and embeds nothing); parsing
reuses the documents of unchanged files (:mod:`heritage_pipeline.incremental.parsing`) and enrichment the rows of
unchanged chunks (:mod:`heritage_pipeline.incremental.enrichment`) when a partition did change; the ablation report
is memoised (:mod:`heritage_pipeline.incremental.ablation`);
the embedding cache serves every passage embedded before; ``lancedb_index`` rewrites only the partitions whose
data version changed, in one LanceDB commit.
"""


import base64
import json
import os
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq

from heritage_pipeline import stages as P
from heritage_pipeline_eval.ablation import distractor_docs, read_distractor_files, run_ablation
from heritage_pipeline.chunking.ids import breadcrumb
from heritage_pipeline.core.config import (DEFAULT_CHUNKING_CONFIG, DEFAULT_PIPELINE_CONFIG, SOURCE_TYPES,
    load_chunking_config, load_pipeline_config)
from heritage_pipeline.dedup.checks import deduped_checks, source_caps, stored_outcomes, write_outcomes
from heritage_pipeline.dedup.minhash import DEDUP_LOG_SCHEMA, DedupRecord, log_to_table
from heritage_pipeline.sources.discovery import sources_to_table, table_to_sources
from heritage_pipeline.enrich.langid import policy_from
from heritage_pipeline.enrich.gazetteer import GAZETTEER_SOURCE_TYPES
from heritage_pipeline.incremental.discovery import discover_once
from heritage_pipeline.incremental.ablation import ablation_memo, forget_report, remember_report, stored_report
from heritage_pipeline.incremental.enrichment import enrich_with_reuse
from heritage_pipeline.incremental.parsing import parse_with_reuse
from heritage_pipeline.incremental.versions import (chained_version, digest, is_current, read_if_code_version,
    read_if_version, stored_versions, with_versions, write_version_marker)
from heritage_pipeline.index.sync import sync_index
from heritage_pipeline.core.handoff import HANDOFF
from heritage_pipeline.core.storage import OutputLayout, atomic_write
from heritage_pipeline.core.models import Chunk, chunks_to_table, table_to_chunks
from heritage_pipeline.sources.dispatch import table_to_docs
from .io_managers import partition_path
from .metadata import histogram, table as table_md
from .partitions import language_partitions, partition_key_str, source_language_partitions, split_partition_key
from .resources import EmbedderResource, LanceDBResource, SettingsResource, TokenizerResource
from .versions import code_version, code_versions

# Output(data_version=...) and MaterializeResult(data_version=...) are marked beta in Dagster 1.13; they are the
# documented way to report content-based data versions, which the incremental runs rely on.
warnings.filterwarnings("ignore", category=dg.BetaWarning, message=".*data_version.*")

CHUNKING_CONFIG_PATH = Path(os.environ.get("HERITAGE_CHUNKING_CONFIG", DEFAULT_CHUNKING_CONFIG))
PIPELINE_CONFIG_PATH = Path(os.environ.get("HERITAGE_PIPELINE_CONFIG", DEFAULT_PIPELINE_CONFIG))


def runtime_code_version(context: dg.AssetExecutionContext, settings: SettingsResource,
                         embedder: EmbedderResource | None = None) -> str:
    """This asset's code version for the config this run really uses (the YAML files as they are now, and the
    embedder resource as configured for the run, e.g. a launchpad override), which keys the reuse of stored outputs.

    Dagster's own code version is the one computed when the code location loaded; when the two differ (a YAML file
    edited without reloading, a resource overridden for one run) a warning says so and outputs are versioned with
    the config actually used, so a stored output is never reused across a config change.
    """
    pcfg = settings.pipeline()
    if embedder is not None:
        pcfg = pcfg.model_copy(update={"embedder": embedder.config()})
    now = code_version(context.asset_key.to_user_string(), settings.chunking(), pcfg)
    loaded = context.assets_def.code_versions_by_key[context.asset_key] or ""
    if loaded and loaded != now:
        context.log.warning(f"{context.asset_key.to_user_string()}: the config used by this run differs from the one the "
                            f"code location loaded (code version {loaded} -> {now}); reload the code location to see "
                            "staleness right in the UI. Outputs are versioned with the config actually used.")
    return now


class PartitionStep:
    """One partitioned asset's step: its partition, code version, stored output and would-be data version.

    ``inputs``: the input tables whose data versions (schema metadata) key the output; None for the root asset,
    which sets :attr:`data_version` itself.
    """

    def __init__(self, context: dg.AssetExecutionContext, settings: SettingsResource, inputs: list[pa.Table] | None,
                 embedder: EmbedderResource | None = None):
        self.context = context
        self.asset = context.asset_key.to_user_string()
        self.source_type, self.lang = split_partition_key(context.partition_key)
        self.partition = partition_key_str(self.source_type, self.lang)
        self.code_version = runtime_code_version(context, settings, embedder)
        self.path = partition_path(settings.storage, self.asset, self.partition)
        self.data_version = chained_version(self.asset, self.code_version, inputs) if inputs is not None else None

    def stored(self) -> pa.Table | None:
        """The stored output if it was computed from these very inputs by this code and config, else None."""
        return read_if_version(self.path, self.data_version)

    def previous(self) -> pa.Table | None:
        """The stored output if the same code version wrote it (its unchanged rows may be reused), else None."""
        return read_if_code_version(self.path, self.code_version)

    def output(self, table: pa.Table, metadata: dict, *, reused: bool = False,
               chunks: list[Chunk] | None = None) -> dg.Output:
        """The Dagster output of ``table`` with its versions; ``chunks`` (the objects the table was built from,
        not modified afterwards) are handed to the next asset of this process (:mod:`heritage_pipeline.core.handoff`)."""
        if self.data_version is None:  # an input was written before data versions existed: version this content
            self.data_version = digest(self.asset, self.code_version, str(table.num_rows), self.context.run_id)
        metadata = {**metadata, "data_version": self.data_version[:16], "reused": reused}
        table = with_versions(table, self.data_version, self.code_version)
        if chunks is not None:
            HANDOFF.put(table, chunks)
        return dg.Output(table, data_version=dg.DataVersion(self.data_version), metadata=metadata)

    def reuse(self, table: pa.Table, extra: dict | None = None) -> dg.Output:
        """Output the stored table again, with the metadata of the materialisation that wrote it when recorded."""
        self.context.log.info(f"{self.asset} {self.partition}: inputs, config and code unchanged; reusing {self.path}")
        meta = self._recorded_metadata()
        meta.update({"dagster/row_count": table.num_rows, **(extra or {})})
        return self.output(table, meta, reused=True)

    def _recorded_metadata(self) -> dict:
        try:
            records = self.context.instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=self.context.asset_key, asset_partitions=[self.partition]), limit=1).records
        except Exception:  # metadata is a convenience; never fail a reuse for it
            return {}
        mat = records[0].asset_materialization if records else None
        if mat is None or mat.tags.get("dagster/data_version") != self.data_version:
            return {}
        return {k: v for k, v in mat.metadata.items() if k not in ("path", "data_version", "reused")}


PARTITIONED = dict(partitions_def=source_language_partitions, io_manager_key="io_manager")
# Four stage families, so the graph opens as one readable row: ingest (raw_sources, parsed_sections) -> chunk
# (chunks, enriched_chunks, deduped_chunks) -> index (embedded_chunks, lancedb_index) -> evaluate (ablation_report).
PARTITION_NOTE = (" Partitions are source_type x language: a combination without input files (e.g. a language that "
                  "has documents but no conversations) is never materialised and shows as missing; that is expected, "
                  "not a failure.")


@dg.asset(
    group_name="ingest", kinds={"python", "parquet"}, **PARTITIONED,
    description="Input files of one source type and language: decoded text, encoding, SHA-256, and the status of "
                "every file (ok, skipped or quarantined, with the reason). The data version is a hash of the "
                "partition's file hashes and statuses, so an edited file marks its partition's downstream unsynced; "
                "an unchanged partition keeps its data version and the stored file is not rewritten.",
)
def raw_sources(context: dg.AssetExecutionContext, settings: SettingsResource) -> dg.Output[pa.Table]:
    step = PartitionStep(context, settings, None)
    sources = [s for s in discover_once(settings.data_dir, settings.storage, policy_from(settings.chunking())) if s.partition == (step.source_type, step.lang)]
    step.data_version = digest("raw_sources", step.code_version, *sorted(
        "\x00".join((s.path, s.sha256, s.status, s.reason, s.lang, s.encoding)) for s in sources))
    previous = stored_versions(step.path)[0]
    status = Counter(s.status for s in sources)
    return step.output(sources_to_table(sources), {
        "dagster/row_count": len(sources),
        "changed": previous != step.data_version,
        "files_ok": status.get("ok", 0),
        "files_skipped": status.get("skipped", 0),
        "files_quarantined": status.get("quarantined", 0),
        "bytes": sum(s.n_bytes for s in sources),
        "files": table_md(("file", "status", "encoding", "reason"),
                       [(s.path, s.status, s.encoding or "-", s.reason or "") for s in sources]),
    })


@dg.asset(
    group_name="ingest", kinds={"python", "docling", "parquet"}, **PARTITIONED,
    description="Parsed documents: blocks (paragraphs, headings, tables, code, messages, rows, entities) with "
                "character offsets, grouped into heading sections with breadcrumbs. HTML through docling; Markdown "
                "through an offset-recording scanner. Files that cannot be parsed are quarantined with a reason. "
                "Unchanged files (same SHA-256, same parser version) are not parsed again.",
)
def parsed_sections(context: dg.AssetExecutionContext, settings: SettingsResource, raw_sources: pa.Table) -> dg.Output[pa.Table]:
    step = PartitionStep(context, settings, [raw_sources])
    quarantine_path = OutputLayout(settings.output_path).partition_quarantine(step.source_type, step.lang)
    if (stored := step.stored()) is not None and is_current(quarantine_path, step.data_version):
        return step.reuse(stored, {"files_parsed_now": 0, "files_reused": len(set(stored.column("source_path").to_pylist()))})
    res = parse_with_reuse(table_to_sources(raw_sources), step.previous(), lambda todo: P.parse_sources(todo, settings.chunking()))
    P.write_quarantine(res.quarantined, quarantine_path)
    if step.data_version is not None:  # the quarantine file belongs to this version (a crash or revert recomputes)
        write_version_marker(quarantine_path, step.data_version)
    table, quarantined, skipped = res.table, res.quarantined, res.skipped
    skip_path = OutputLayout(settings.output_path).partition_skipped(step.source_type, step.lang)
    skips = json.dumps(P.parser_skip_reasons(raw_sources.column("path").to_pylist(), skipped,
                                             set(table.column("source_path").to_pylist()) if table.num_rows else set()),
                       ensure_ascii=False, indent=0)
    skip_path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(skip_path, lambda tmp: tmp.write_text(skips, encoding="utf-8"))
    return step.output(table, {
        "dagster/row_count": table.num_rows,
        "documents": table.num_rows,
        "sections": sum(table.column("n_sections").to_pylist()) if table.num_rows else 0,
        "files_parsed_now": res.files_parsed_now,
        "files_reused": res.files_reused,
        "quarantined": len(quarantined),
        "skipped": len(skipped),
        "quarantine": table_md(("path", "reason"), [(r.path, r.reason) for r in quarantined]),
        "skipped_items": dg.MetadataValue.md("\n".join(f"- {s}" for s in skipped[:200]) or "(none)"),
        **_removed_content_metadata(table),
        **_registry_mapping_metadata(res.docs_parsed_now),
    })


def _registry_mapping_metadata(docs) -> dict:
    """``registry_mappings``: per registry file parsed now, the column -> slot mapping it got and how (configured,
    inferred from header and values, headerless, identifier list); see sources/columns.py."""
    from heritage_pipeline.sources.accounting import registry_mapping_line

    lines = [registry_mapping_line(d.source_path, d.meta) for d in docs if d.source_type == "csv_registry"]
    return {"registry_mappings": dg.MetadataValue.md("\n".join(f"- {ln}" for ln in lines))} if lines else {}


def _removed_content_metadata(table: pa.Table) -> dict:
    """Per web page: what main-content selection removed and why (``removed_summary`` of
    :func:`heritage_pipeline.sources.main_content.removal_summary`), and the total removed characters per reason."""
    if not table.num_rows:
        return {}
    rows, totals = [], Counter()
    for path, st, structure in zip(table.column("source_path").to_pylist(), table.column("source_type").to_pylist(),
                                   table.column("structure").to_pylist()):
        if st != "website":
            continue
        meta = json.loads(structure).get("meta", {})
        if "removed_summary" in meta:
            rows.append((path, meta["removed_summary"]))
            totals.update(meta.get("removed_chars", {}))
    if not rows:
        return {}
    return {"website_removed_chars": table_md(("reason", "characters"), totals.most_common()),
            "website_main_content": table_md(("page", "main content"), rows[:200])}


def _excluded_summary(docs) -> dict[str, Any]:
    """Markup ranges and running header / footer lines excluded from the embedded text: totals and the documents
    that have any (``doc.meta["excluded_counts"]`` of the Markdown / plain-text parser)."""
    per_doc = {d.source_path: d.meta["excluded_counts"] for d in docs if d.meta.get("excluded_counts")}
    return {"excluded_markup_ranges": sum(v["markup"] for v in per_doc.values()),
            "running_header_footer_lines": sum(v["running_lines"] for v in per_doc.values()),
            "running_lines_per_document": table_md(("document", "running lines"),
                                                   [(p, v["running_lines"]) for p, v in sorted(per_doc.items()) if v["running_lines"]])}


@dg.asset(
    group_name="chunk", kinds={"python", "parquet"}, **PARTITIONED,
    description="Chunks with exact cl100k token counts, breadcrumbs (meta.anchors) and spans into the raw file "
                "(hybrid mode by default: heading sections, windows inside sections over 1.5 x the target).",
)
def chunks(context: dg.AssetExecutionContext, settings: SettingsResource, tokenizer: TokenizerResource,
           parsed_sections: pa.Table) -> dg.Output[pa.Table]:
    step = PartitionStep(context, settings, [parsed_sections])
    if (stored := step.stored()) is not None:
        return step.reuse(stored)
    docs = table_to_docs(parsed_sections)
    out = P.chunk_documents(docs, settings.chunking(), tokenizer.get())
    lens = [c.meta.len_tokens for c in out]
    return step.output(chunks_to_table(out), chunks=out, metadata={
        "dagster/row_count": len(out),
        "documents": len(docs),
        "max_len_tokens": max(lens, default=0),
        "mean_len_tokens": round(sum(lens) / len(lens), 1) if lens else 0.0,
        "atomic_oversize": sum(1 for c in out if c.quality.atomic_oversize),
        # documents with a fenced code block that has no closing fence (its chunks: quality.unclosed_fence)
        "unclosed_fences": len({c.meta.doc_id for c in out if c.quality.unclosed_fence}),
        # SPEC §3 excluded ranges found per document (sources.markdown.markup_ranges / running_lines)
        **_excluded_summary(docs),
        "length_histogram": histogram(lens, [0, 100, 300, 500, 700, 900, 1200], "tokens"),
    })


# The gazetteer follows the registry / LinkML partitions it is built from as soon as none is still being parsed; a
# new gazetteer (another fingerprint) makes every partition's enriched_chunks stale, which the UI shows.
GAZETTEER_AUTOMATION = (dg.AutomationCondition.any_deps_match(dg.AutomationCondition.data_version_changed()).since_last_handled()
                        & ~dg.AutomationCondition.any_deps_in_progress()
                        & ~dg.AutomationCondition.in_progress()).with_label("after registry updates")


def _gazetteer_partition_paths(context: dg.AssetExecutionContext, settings: SettingsResource) -> dict[str, Any]:
    """``{partition key: path}`` of the stored ``parsed_sections`` of every registry / LinkML instance partition of a
    registered language."""
    out = {}
    for lang in sorted(context.instance.get_dynamic_partitions(language_partitions.name)):
        for st in GAZETTEER_SOURCE_TYPES:
            key = partition_key_str(st, lang)
            path = partition_path(settings.storage, "parsed_sections", key)
            if path.exists():
                out[key] = path
    return out


def _gazetteer_partitions(context: dg.AssetExecutionContext, settings: SettingsResource) -> list[pa.Table]:
    """The stored ``parsed_sections`` of every registry / LinkML instance partition of a registered language."""
    out = []
    for path in _gazetteer_partition_paths(context, settings).values():
        with path.open("rb") as f:
            out.append(pq.read_table(f))
    return out


def _gazetteer_inputs(context: dg.AssetExecutionContext, settings: SettingsResource) -> str | None:
    """A key of what the gazetteer is built from: the data versions of its input partitions (Parquet footers), the
    asset's code version (config included) and the data folder; None when an input carries no data version."""
    versions = {k: stored_versions(p)[0] for k, p in _gazetteer_partition_paths(context, settings).items()}
    if any(v is None for v in versions.values()):
        return None
    return digest("gazetteer", runtime_code_version(context, settings), str(settings.data_path),
                  *(f"{k}={v}" for k, v in sorted(versions.items())))


@dg.asset(
    group_name="chunk", kinds={"python", "json"}, automation_condition=GAZETTEER_AUTOMATION,
    deps=[dg.AssetDep("parsed_sections", partition_mapping=dg.AllPartitionMapping())],
    description="The heritage-institution gazetteer (names, types, ISIL / Wikidata / GHCID identifiers) built from "
                "the parsed registries and LinkML entities under context.entities.gazetteer, i.e. the "
                "parsed_sections of the csv_registry and yaml_instance partitions. Its data version is the "
                "fingerprint of its entities: a registry edit that changes a name or an identifier marks every "
                "partition's enriched_chunks unsynced (their heritage mentions resolve against it); one that does "
                "not (an address) keeps them fresh. Other partitions' parsed_sections may mark it unsynced too; "
                "re-materialising it then gives the same data version and nothing downstream.",
)
def gazetteer(context: dg.AssetExecutionContext, settings: SettingsResource) -> dg.MaterializeResult:
    path = OutputLayout(settings.output_path).gazetteer
    inputs = _gazetteer_inputs(context, settings)
    if (memo := P.reusable_gazetteer(path, inputs)) is not None:  # the same inputs, code and config: not rebuilt
        version, facts = memo
        context.log.info(f"gazetteer: input partitions, config and code unchanged; reusing {path}")
    else:
        docs = [d for t in _gazetteer_partitions(context, settings) for d in table_to_docs(t)]
        gaz = P.gazetteer_stage(docs, settings.chunking(), settings.data_path)
        facts = {"entities": len(gaz), "documents": len(docs),
                 "types": sorted(Counter(e.type_code for e in gaz.entities).items()),
                 "identifiers": sum(len(e.ids) for e in gaz.entities)}
        version = P.write_gazetteer(gaz, path, inputs=inputs, metadata=facts)
    return dg.MaterializeResult(data_version=dg.DataVersion(version), metadata={
        "dagster/row_count": facts["entities"], "documents": facts["documents"], "path": dg.MetadataValue.path(str(path)),
        "entities_by_type": table_md(("type", "entities"), [tuple(t) for t in facts["types"]]),
        "identifiers": facts["identifiers"], "fingerprint": version[:16], "reused": memo is not None})


@dg.asset(
    group_name="chunk", kinds={"python", "keybert", "parquet"}, **PARTITIONED, deps=[gazetteer],
    description="Chunks with keywords (candidates from the chunk ranked by the embedder's own model against the "
                "chunk's passage vector, MMR), rule-based entities, per-chunk language, "
                "section embeddings of the breadcrumb, readability and quality flags. A chunk identical to one "
                "enriched before by the same code and config is not enriched again.",
)
def enriched_chunks(context: dg.AssetExecutionContext, settings: SettingsResource, embedder: EmbedderResource,
                    chunks: pa.Table) -> dg.Output[pa.Table]:
    step = PartitionStep(context, settings, [chunks], embedder)
    cfg = settings.chunking()
    # heritage mentions also depend on the registries' names (the gazetteer asset): its fingerprint keys the data
    # version, so an edited registry makes every partition recompute, reusing its enriched rows (below)
    gaz_path = OutputLayout(settings.output_path).gazetteer
    gaz, gazetteer_version = None, ""
    if cfg.context.entities.heritage:  # the stored gazetteer's fingerprint without loading it, when recorded
        gazetteer_version = P.stored_gazetteer_version(gaz_path)
        if gazetteer_version is None:  # never materialised: the registries parsed now (with a warning)
            gaz, gazetteer_version = _stored_gazetteer(context, settings)
    if step.data_version is not None and chunks.num_rows:  # (no chunks: no mentions to depend on it)
        step.data_version = digest(step.data_version, gazetteer_version)
    if (stored := step.stored()) is not None:
        HANDOFF.drop(chunks)
        return step.reuse(stored, {"enriched_now": 0, "passages_embedded_now": 0})
    if cfg.context.entities.heritage and gaz is None:
        gaz, _ = P.load_gazetteer(gaz_path)

    def enrich(todo: list[Chunk]) -> tuple[int, dict[str, float]]:
        cache, stats, seconds = embedder.cache(), {}, {}
        try:
            P.enrich_stage(todo, cfg, embedder.get() if todo else None, embedder.config(), cache,
                           data_dir=settings.data_path, stats=stats, timings=seconds, gazetteer=gaz)
        finally:
            if cache:
                cache.close()
        return stats["passages_embedded_now"], seconds

    res = enrich_with_reuse(chunks, step.previous(), gaz, gazetteer_version, enrich, items=HANDOFF.take(chunks))
    items, table, seconds = res.items, res.table, res.seconds
    crumbs = {breadcrumb(c.meta.anchors) for c in items if c.meta.anchors}
    return step.output(table, chunks=items, metadata={
        "dagster/row_count": len(items),
        "enriched_now": res.enriched_now,
        "reused_rows": res.reused_rows,
        "mentions_refreshed": res.mentions_refreshed,
        "passages_embedded_now": res.passages_embedded_now,
        "with_keywords": sum(1 for c in items if c.meta.keywords),
        "with_entities": sum(1 for c in items if c.meta.entities),
        "with_heritage_mentions": sum(1 for c in items if c.meta.mentioned_entities),
        "distinct_breadcrumbs": len(crumbs),
        "chunk_languages": table_md(("language", "chunks"), sorted(Counter(c.meta.lang for c in items).items())),
        "seconds_by_substep": table_md(("sub-step", "seconds"), [(k, round(v, 3)) for k, v in sorted(seconds.items())]),
    })


def _stored_gazetteer(context: dg.AssetExecutionContext, settings: SettingsResource):
    """The stored gazetteer asset and its fingerprint; when it was never built, the registries' gazetteer parsed now,
    with a warning that says how to make Dagster track it (see :func:`~heritage_pipeline.stages.gazetteer_for_enrichment`)."""
    path = OutputLayout(settings.output_path).gazetteer
    gaz, version, from_raw = P.gazetteer_for_enrichment(path, settings.chunking(), settings.data_path)
    if from_raw:
        context.log.warning(f"no gazetteer asset at {path}: heritage mentions resolved against the registries under "
                            f"{settings.data_path} parsed now; materialise the gazetteer asset (`heritage-pipeline run` "
                            "does) so registry edits show up as stale partitions")
    return gaz, version


CHECKS = [
    dg.AssetCheckSpec("spans_round_trip", asset="deduped_chunks",
                      description="Spans lie inside the raw file and, for Markdown/plain text, normalize(raw[start:end]) == text."),
    dg.AssetCheckSpec("no_chunk_over_max", asset="deduped_chunks",
                      description="No chunk's embedded text (context prefix + text), recounted with the run's tokenizer, "
                                  "exceeds its source type's hard maximum (websites and conversations have their own "
                                  "caps under sources:), except flagged atomic units."),
    dg.AssetCheckSpec("no_empty_chunk", asset="deduped_chunks", description="No empty or whitespace-only chunk."),
    dg.AssetCheckSpec("ids_unique", asset="deduped_chunks", description="Chunk ids are unique."),
    dg.AssetCheckSpec("inputs_accounted_for", asset="deduped_chunks",
                      description="Every input file is chunked, skipped with a reason, or quarantined."),
    dg.AssetCheckSpec("dedup_log_complete", asset="deduped_chunks",
                      description="Every enriched chunk is either kept or has exactly one dedup-log row."),
]


@dg.asset(
    group_name="chunk", kinds={"python", "datasketch", "parquet"}, **PARTITIONED, check_specs=CHECKS,
    description="Chunks after exact and MinHash-LSH near-duplicate removal (every LSH candidate confirmed by exact "
                "Jaccard). Every drop is logged (dedup log Parquet beside the asset) and recorded in the survivor's "
                "meta.duplicates. Asset checks verify spans, sizes, emptiness, id uniqueness and input accounting. "
                "Deduplication is within the partition only (a partition's rows must not depend on another "
                "partition), so the same passage may remain in two partitions.",
)
def deduped_chunks(context: dg.AssetExecutionContext, settings: SettingsResource, tokenizer: TokenizerResource,
                   enriched_chunks: pa.Table, raw_sources: pa.Table, parsed_sections: pa.Table):
    step = PartitionStep(context, settings, [enriched_chunks, raw_sources, parsed_sections])
    cfg = settings.chunking()
    log_path = OutputLayout(settings.output_path).dedup_log(step.source_type, step.lang)
    checks_path = log_path.with_name(f"{log_path.stem}.checks.json")
    stored = step.stored()
    log_table = read_if_version(log_path, step.data_version) if stored is not None else None
    outcomes = stored_outcomes(checks_path, step.data_version) if log_table is not None else None
    if outcomes is not None:  # an unchanged partition: nothing to decode, its checks are those of the stored output
        HANDOFF.drop(enriched_chunks)
        yield step.reuse(stored)
        yield from _check_results(outcomes, step.partition)
        return
    items = HANDOFF.take(enriched_chunks)
    if stored is not None and log_table is not None:  # (checks stored by no earlier run: computed once more)
        kept = table_to_chunks(stored)
        log = [DedupRecord(**r) for r in log_table.select(list(DEDUP_LOG_SCHEMA.names)).to_pylist()]
        yield step.reuse(stored)
    else:
        kept, log = P.dedup_stage(items, cfg)
        if step.data_version is None:
            step.data_version = digest(step.asset, step.code_version, context.run_id)
        log_table = with_versions(log_to_table(log, cfg.quality.dedup), step.data_version, step.code_version)
        atomic_write(log_path, lambda tmp: pq.write_table(log_table, tmp))
        reads = [r.quality.readability for r in kept if r.quality.readability is not None]
        yield step.output(chunks_to_table(kept), chunks=kept, metadata={
            "dagster/row_count": len(kept),
            "chunks_in": len(items),
            "dropped": len(log),
            "dropped_exact": sum(1 for r in log if r.reason == "exact"),
            "dropped_near": sum(1 for r in log if r.reason.startswith("near")),
            "dedup_log": dg.MetadataValue.path(str(log_path)),
            "dedup_sample": table_md(("dropped", "kept", "similarity", "reason"),
                                  [(r.dropped_id, r.kept_id, r.similarity, r.reason) for r in log[:20]]),
            "length_histogram": histogram([c.meta.len_tokens for c in kept], [0, 100, 300, 500, 700, 900, 1200], "tokens"),
            "readability_histogram": histogram(reads, [-100, 0, 30, 50, 70, 100], "Flesch"),
            "boilerplate_flagged": sum(1 for c in kept if c.quality.boilerplate),
            "length_ok": sum(1 for c in kept if c.quality.length_ok),
        })
    outcomes = _check_outcomes(kept, log, source_caps(cfg), tokenizer.get().count, raw_sources, parsed_sections, items)
    write_outcomes(checks_path, step.data_version, outcomes)
    yield from _check_results(outcomes, step.partition)


def _check_outcomes(kept, log, caps, count, raw_sources: pa.Table, parsed_sections: pa.Table, items=None):
    """The asset checks' outcomes, computed by :func:`heritage_pipeline.dedup.checks.deduped_checks`."""
    sources = table_to_sources(raw_sources)
    parsed = parsed_sections.select(["source_path", "text_is_raw", "structure"]).to_pylist()
    raw_docs = {d["source_path"]: d["text_is_raw"] for d in parsed}
    skip_reasons = {d["source_path"]: json.loads(d["structure"]).get("skipped", []) for d in parsed}
    return deduped_checks(items if items is not None else kept, kept, log, caps, {s.path: s.text for s in sources},
                          raw_docs, {s.path: s.status for s in sources}, skip_reasons, count=count)


def _check_results(outcomes, partition: str):
    """The outcomes as Dagster asset check results; each result names its partition (the UI lists one row per
    partition run)."""
    for o in outcomes:
        meta = {k: dg.MetadataValue.json(v) if isinstance(v, (list, dict)) else v for k, v in o.metadata.items()}
        meta["partition"] = partition
        yield dg.AssetCheckResult(check_name=o.name, passed=o.passed, metadata=meta,
                                  description=f"{o.name} on partition {partition}: {'passed' if o.passed else 'failed'}",
                                  severity=dg.AssetCheckSeverity.WARN if o.severity == "WARN" else dg.AssetCheckSeverity.ERROR)


@dg.asset(
    group_name="index", kinds={"python", "pytorch", "parquet"}, **PARTITIONED,
    description="Final chunks with their passage vectors (embedding cache keyed by model, prefix and text hash: an "
                "unchanged chunk is never embedded twice). Long texts are embedded as the mean of model-window "
                "embeddings and say so in meta.embedding_windows.",
)
def embedded_chunks(context: dg.AssetExecutionContext, settings: SettingsResource, embedder: EmbedderResource,
                    deduped_chunks: pa.Table) -> dg.Output[pa.Table]:
    step = PartitionStep(context, settings, [deduped_chunks], embedder)
    if (stored := step.stored()) is not None:
        return step.reuse(stored, {"embedded_now": 0, "cache_hit_rate": 1.0})
    items = HANDOFF.take(deduped_chunks)
    if not items:
        return step.output(chunks_to_table([], []), {"dagster/row_count": 0, "embedded_now": 0})
    cache = embedder.cache()
    try:
        vecs, stats = P.embed_stage(items, embedder.get(), embedder.config(), cache)
    finally:
        if cache:
            cache.close()
    hit_rate = stats["cache_hits"] / len(items) if items else 0.0
    # the chunk objects go to lancedb_index of the same process (core/handoff.py): no second decode of the table
    return step.output(chunks_to_table(items, vecs), {
        "dagster/row_count": len(items), "embedded_now": stats["embedded_now"], "cache_hit_rate": round(hit_rate, 3),
        "multi_window_chunks": stats["multi_window_chunks"], "dim": stats["dim"], "model": stats["model"]},
        chunks=items)


# lancedb_index runs (through the automation sensor) when the data version of an embedded_chunks partition changed,
# e.g. after a nightly registry run over an edited registry, once no partition is still running. A partition
# re-materialised with an unchanged data version (an unchanged night) does not trigger it. `eager()` would also
# wait for every partition of every language to exist.
INDEX_AUTOMATION = (dg.AutomationCondition.any_deps_match(dg.AutomationCondition.data_version_changed()).since_last_handled()
                    & ~dg.AutomationCondition.any_deps_in_progress()
                    & ~dg.AutomationCondition.in_progress()).with_label("after partition updates")


def _embedded_partitions(context: dg.AssetExecutionContext, settings: SettingsResource) -> dict[str, Path]:
    """``{partition key: path}`` of every stored embedded_chunks partition of a registered language."""
    out = {}
    for lang in sorted(context.instance.get_dynamic_partitions(language_partitions.name)):
        for st in SOURCE_TYPES:
            key = partition_key_str(st, lang)
            path = partition_path(settings.storage, "embedded_chunks", key)
            if path.exists():
                out[key] = path
    return out


@dg.asset(
    group_name="index", kinds={"lancedb"}, automation_condition=INDEX_AUTOMATION,
    deps=[dg.AssetDep("embedded_chunks", partition_mapping=dg.AllPartitionMapping())],
    description="LanceDB table of every materialised partition (vector, metadata columns, native full-text index). "
                "Only partitions whose data version changed are rewritten, all of them in one merge_insert commit "
                "(a crash leaves the previous version whole); nothing is written when nothing changed. Also writes "
                "the final chunks as chunks.jsonl and every quarantined file as quarantine.jsonl. Index writes are "
                "serialised by a file lock (a concurrent run waits) and, for daemon-launched runs, by the "
                "index_writes run-tag concurrency limit of configs/dagster.yaml.",
)
def lancedb_index(context: dg.AssetExecutionContext, settings: SettingsResource, lancedb: LanceDBResource) -> dg.MaterializeResult:
    res = sync_index(lancedb.uri, lancedb.table, _embedded_partitions(context, settings),
                     runtime_code_version(context, settings), settings.output_path, settings.chunking().outputs.fields,
                     log=context.log.info)
    return dg.MaterializeResult(data_version=dg.DataVersion(res.data_version), metadata={
        "dagster/row_count": res.rows, "partitions": res.partitions, "index_bytes": res.index_bytes,
        "lancedb_version": res.lancedb_version,
        "partitions_rewritten": table_md(("partition",), [(k,) for k in res.rewritten]),
        "partitions_removed": table_md(("partition",), [(k,) for k in res.removed]),
        "uri": dg.MetadataValue.path(lancedb.uri), "jsonl": dg.MetadataValue.path(str(OutputLayout(settings.output_path).chunks_jsonl)),
        "jsonl_lines": res.jsonl_lines, "quarantined_files": res.quarantined,
        "quarantine": dg.MetadataValue.path(str(OutputLayout(settings.output_path).quarantine_jsonl)),
        "waited_for_lock_s": res.waited_for_lock_s, "data_version": res.data_version[:16],
        "chunks_per_partition": table_md(("partition", "chunks"), sorted(res.per_partition.items())),
    })


@dg.asset(
    group_name="evaluate", kinds={"python", "lancedb"}, deps=[lancedb_index],
    description="Ablation over chunk size x overlap (x mode) on the golden sets, per language, for BM25, vector and "
                "hybrid retrieval: hit@5, MRR@10, nDCG@10 with bootstrap 95% CIs, context budget, index size, build "
                "time and latency; JSON, CSV, Markdown and a plot, with a recommended setting per language. Not "
                "recomputed while the golden sets, distractor documents, config and code are unchanged.",
)
def ablation_report(context: dg.AssetExecutionContext, settings: SettingsResource, embedder: EmbedderResource) -> dg.MaterializeResult:
    pcfg = settings.pipeline()
    abl = pcfg.ablation
    golden_root = settings.data_path / "golden"
    golden = {lang: golden_root / lang for lang in abl.languages if (golden_root / lang / "golden.jsonl").exists()}
    doc_root = settings.data_path / "raw" / "document"
    md_files = sorted(doc_root.rglob("*.md")) if doc_root.is_dir() else []
    out_dir = settings.output_path / "ablation"
    code_version = runtime_code_version(context, settings, embedder)
    golden_files = sorted(p for d in golden.values() for p in d.rglob("*") if p.is_file())
    memo = ablation_memo(code_version, golden_files + md_files)
    stored = stored_report(out_dir, memo)
    reused = stored is not None
    if stored is not None:
        context.log.info("golden sets, distractors, config and code unchanged: reusing the stored ablation report")
        rows, md, recommendations, paths = stored.rows, stored.markdown, stored.recommendations, stored.paths
    else:
        forget_report(out_dir)
        md_read = read_distractor_files(md_files)  # read and language-detected once, not once per golden language
        distractors = {lang: distractor_docs(md_files, lang, abl.distractor_chars, doc_root, md_read) for lang in golden}
        cache = embedder.cache()
        try:
            result = run_ablation(golden, distractors, settings.chunking(), abl, embedder.get(), cache, out_dir,
                                  progress=context.log.info, lcfg=pcfg.lancedb, ecfg=embedder.config())
        finally:
            if cache:
                cache.close()
        rows, md, recommendations, paths = result.rows, result.markdown, result.recommendations, result.paths
        remember_report(out_dir, memo, recommendations)  # written last: a crash before this recomputes the report
    plot = Path(paths.get("plot", ""))
    metadata = {
        "report": dg.MetadataValue.md(md),
        "recommendations": table_md(("language", "retriever", "mode", "size_tokens", "overlap_ratio", "ndcg@10", "mrr@10",
                                   "hit@5", "answer_in_2000_tokens"),
                                  [(lang, r.get("retriever"), r.get("mode"), r.get("size_tokens"), r.get("overlap_ratio"),
                                    r.get("ndcg@10"), r.get("mrr@10"), r.get("hit@5"), r.get("answer_in_2000_tokens"))
                                   for lang, r in sorted(recommendations.items())]),
        "rows": len(rows),
        "languages": dg.MetadataValue.text(", ".join(sorted(golden))),
        "json": dg.MetadataValue.path(paths.get("json", "")),
        "reused": reused,
    }
    if plot.is_file():
        # an image the catalog shows inline (Markdown with a data URI), not only a link to the file
        metadata["plot"] = dg.MetadataValue.md(f"![ablation](data:image/png;base64,{base64.b64encode(plot.read_bytes()).decode()})")
        metadata["plot_path"] = dg.MetadataValue.path(str(plot))
    return dg.MaterializeResult(data_version=dg.DataVersion(memo), metadata=metadata)


_DEFINED = [raw_sources, parsed_sections, chunks, gazetteer, enriched_chunks, deduped_chunks, embedded_chunks, lancedb_index, ablation_report]


def build_assets(chunking_path: str | Path = CHUNKING_CONFIG_PATH, pipeline_path: str | Path = PIPELINE_CONFIG_PATH) -> list[dg.AssetsDefinition]:
    """The nine assets, in graph order, with code versions computed from the given config files (:mod:`.versions`)."""
    versions = code_versions(load_chunking_config(chunking_path), load_pipeline_config(pipeline_path))

    def finish(spec: dg.AssetSpec) -> dg.AssetSpec:
        note = PARTITION_NOTE if spec.partitions_def is not None else ""
        return spec.replace_attributes(code_version=versions[spec.key.to_user_string()],
                                       description=(spec.description or "") + note)

    return [a.map_asset_specs(finish) for a in _DEFINED]

