"""Code versions of the assets: a hash of exactly the config that shapes each stage, plus a hash of its source.

Dagster marks an asset *unsynced* ("has a new code version") when its ``code_version`` differs from the one recorded
at its last materialisation; resource and run config never do. So every asset's code version is
``cfg-<hash of the config keys that shape it>.src-<hash of the stage's source code>``:

* editing ``sliding_window.size_tokens`` in ``configs/chunking.yaml`` changes only ``chunks`` (and
  ``ablation_report``, which chunks the golden documents with the whole chunking config);
* editing ``context.keywords.top_k`` changes only ``enriched_chunks``; ``quality.dedup.threshold`` only
  ``deduped_chunks``; the embedder model or prefixes ``enriched_chunks`` (keywords use the model),
  ``embedded_chunks`` and ``ablation_report``. ``embedder.batch_size`` and ``device`` do not change outputs and
  are left out on purpose; the search-time ``lancedb`` weights (RRF k, vector/FTS weights, candidates) change only
  ``ablation_report``;
* a code change in a stage's modules (or in a module they import) changes that stage's source hash.

The config is read when the code location loads: after editing a YAML file, reload the location (UI "Reload").
The same versions key the reuse of stored outputs (:mod:`heritage_pipeline.incremental.versions`), so a stored output is
never reused across a config or code change.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heritage_pipeline.core.config import ChunkingConfig, PipelineConfig
from heritage_pipeline.incremental.versions import source_hash
from heritage_pipeline.sources.linkml import DEFAULT_LINKML_MAPPINGS, DEFAULT_SCHEMA, SCHEMA_ENUM
from heritage_pipeline.sources.registry import DEFAULT_MAPPINGS

EMBEDDER_OUTPUT_KEYS = ("model", "backend", "query_prefix", "passage_prefix", "context_prefix", "long_text",
                        "window_overlap_tokens")
# search-time settings: they shape the ablation's retrieval results, not the index content
RETRIEVAL_KEYS = tuple(f"lancedb.{k}" for k in ("rrf_k", "vector_weight", "fts_weight", "candidates", "flagged", "tiers"))
PACKAGE = Path(__file__).resolve().parent.parent
# Row reuse and the ablation memo are plain modules of incremental/ listed in the stages below; the asset shells
# still route what is stored beside the outputs (quarantine files, dedup logs, markers): every asset's code
# version hashes that file too, so changing it never reuses outputs stored by the old logic.
ASSETS_FILE = PACKAGE / "defs" / "assets.py"


@dataclass(frozen=True)
class StageInputs:
    """What shapes one asset's output: dotted keys of chunking.yaml, of pipeline.yaml, package modules, data files."""

    chunking: tuple[str, ...] = ()
    pipeline: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    files: tuple[Path, ...] = ()


EMBEDDER = tuple(f"embedder.{k}" for k in EMBEDDER_OUTPUT_KEYS)
STAGES: dict[str, StageInputs] = {
    "raw_sources": StageInputs(modules=("sources.discovery", "incremental.discovery")),
    "parsed_sections": StageInputs(chunking=("hierarchy", "sources", "domains"),
                                   modules=("sources.dispatch", "incremental.parsing"),
                                   files=(Path(DEFAULT_MAPPINGS), Path(SCHEMA_ENUM), Path(DEFAULT_LINKML_MAPPINGS),
                                          Path(DEFAULT_SCHEMA))),
    "chunks": StageInputs(chunking=("mode", "tokenizer", "hierarchy", "sliding_window", "domains", "sources",
                                    "quality.length", "context.parent_titles"),
                          modules=("chunking",)),
    # the registries' names are data: the gazetteer asset's data version (their fingerprint), upstream of
    # enriched_chunks, not part of any code version
    "gazetteer": StageInputs(chunking=("context.entities.heritage", "context.entities.gazetteer"),
                             modules=("enrich.gazetteer",), files=(PACKAGE / "stages.py",)),
    # stages.py is hashed as a file, so the modules it calls into are listed here
    "enriched_chunks": StageInputs(chunking=("context.keywords", "context.entities", "context.section_embedding",
                                             "context.tables", "quality.readability", "quality.length"),
                                   pipeline=EMBEDDER, modules=("enrich.stage", "enrich.heritage", "enrich.quality", "embed.embedders", "embed.cache",
                                                                 "enrich.langid", "incremental.enrichment"),
                                   files=(PACKAGE / "stages.py",)),
    "deduped_chunks": StageInputs(chunking=("quality.dedup", "quality.length", "quality.drop_low_quality",
                                            "quality.drop_reasons"),
                                  modules=("dedup.minhash", "enrich.quality"), files=(PACKAGE / "stages.py",)),
    "embedded_chunks": StageInputs(pipeline=EMBEDDER, modules=("embed.embedders", "embed.cache"), files=(PACKAGE / "stages.py",)),
    "lancedb_index": StageInputs(chunking=("outputs",), modules=("index.sync", "index.writer", "index.search", "index.schema",
                                                                 "index.analysis")),
    "ablation_report": StageInputs(chunking=("*",), pipeline=EMBEDDER + RETRIEVAL_KEYS + ("ablation",),
                                   modules=("heritage_pipeline_eval.ablation", "incremental.ablation")),
}


def _select(dumped: dict[str, Any], key: str) -> Any:
    if key == "*":
        return dumped
    node: Any = dumped
    for part in key.split("."):
        node = node[part]
    return node


def config_hash(stage: str, chunking: ChunkingConfig, pipeline: PipelineConfig) -> str:
    """12-hex-digit SHA-256 of the config keys that shape ``stage`` (JSON, sorted keys)."""
    spec = STAGES[stage]
    c, p = chunking.model_dump(mode="json"), pipeline.model_dump(mode="json")
    parts = {f"chunking:{k}": _select(c, k) for k in spec.chunking} | {f"pipeline:{k}": _select(p, k) for k in spec.pipeline}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:12]


def code_version(stage: str, chunking: ChunkingConfig, pipeline: PipelineConfig) -> str:
    """``cfg-<config hash>.src-<source hash>`` for ``stage`` (see the module docstring)."""
    spec = STAGES[stage]
    return f"cfg-{config_hash(stage, chunking, pipeline)}.src-{source_hash(*spec.modules, files=hashed_files(stage))}"


def hashed_files(stage: str) -> tuple[Path, ...]:
    """The data and source files hashed into ``stage``'s code version besides its modules' import closure: the
    stage's own files plus ``defs/assets.py`` (see :data:`ASSETS_FILE`)."""
    return tuple(STAGES[stage].files) + (ASSETS_FILE,)


def code_versions(chunking: ChunkingConfig, pipeline: PipelineConfig) -> dict[str, str]:
    """Code version of every asset."""
    return {stage: code_version(stage, chunking, pipeline) for stage in STAGES}
