"""Resources built from ``configs/``: settings (config files, data and output folders), tokenizer, embedder, LanceDB.

Resource config comes from ``configs/pipeline.yaml`` when the code location loads; a run-config block for a resource
replaces its config (Dagster does not merge), so pass every field when overriding from the launchpad.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import dagster as dg

from heritage_pipeline.core.config import (ChunkingConfig, EmbedderConfig, PipelineConfig, load_chunking_config,
    load_pipeline_config)
from heritage_pipeline.core.storage import OutputLayout
from heritage_pipeline.embed.cache import EmbeddingCache
from heritage_pipeline.embed.embedders import make_embedder
from heritage_pipeline.core.tokenizer import Tokenizer, get_tokenizer


class SettingsResource(dg.ConfigurableResource):
    """Where the configuration, the raw data and the outputs are (absolute paths or URIs)."""

    chunking_config: str
    pipeline_config: str
    data_dir: str
    output_dir: str
    storage_dir: str = ""  # the Parquet IO manager's base (folder or fsspec URI); default <output_dir>/storage

    def chunking(self) -> ChunkingConfig:
        return load_chunking_config(self.chunking_config)

    def pipeline(self) -> PipelineConfig:
        return load_pipeline_config(self.pipeline_config).with_paths(data_dir=self.data_dir, output_dir=self.output_dir)

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir)

    @property
    def output_path(self) -> Path:
        return Path(self.output_dir)

    @property
    def storage(self) -> str:
        """Base folder or URI of the per-partition Parquet intermediates (same as the IO manager's)."""
        return self.storage_dir or str(self.output_path / "storage")


class TokenizerResource(dg.ConfigurableResource):
    """Token counting for every size in the pipeline: ``chunking.yaml``'s ``tokenizer`` and ``tokenizer_backend``
    (cl100k by default, offline; both backends give the same ids)."""

    encoding: str = "cl100k"
    backend: str = "auto"

    def get(self) -> Tokenizer:
        """The shared tokenizer of this encoding and backend.

        Returns:
            A :class:`Tokenizer` (units: tokens of ``encoding``).

        Raises:
            ValueError: unknown encoding or backend, or an encoding not shipped (nothing is downloaded).
        """
        return get_tokenizer(self.encoding, self.backend)


class EmbedderResource(dg.ConfigurableResource):
    """Sentence-embedding model (offline default: all-MiniLM-L6-v2 shipped in a package) and its cache file."""

    model: str = "minilm"
    batch_size: int = 32
    device: str = "cpu"
    query_prefix: str = ""
    passage_prefix: str = ""
    context_prefix: str = "breadcrumb"
    long_text: str = "window_mean"
    window_overlap_tokens: int = 32
    cache_path: str = ""
    backend: str = "torch"
    model_cache: str = ""  # where onnx-int8 / model2vec models are derived: <output>/cache/models

    def config(self) -> EmbedderConfig:
        return EmbedderConfig(model=self.model, batch_size=self.batch_size, device=self.device,
                              query_prefix=self.query_prefix, passage_prefix=self.passage_prefix,
                              context_prefix=self.context_prefix, long_text=self.long_text,  # type: ignore[arg-type]
                              window_overlap_tokens=self.window_overlap_tokens,
                              backend=self.backend)  # type: ignore[arg-type]

    def get(self):
        """The embedder of this config (built once per process and config)."""
        return _embedder(self.config(), self.model_cache)

    def cache(self) -> EmbeddingCache | None:
        return EmbeddingCache(self.cache_path) if self.cache_path else None


@lru_cache(maxsize=4)
def _embedder(cfg: EmbedderConfig, model_cache: str = ""):
    return make_embedder(cfg, model_cache=model_cache or None)


class LanceDBResource(dg.ConfigurableResource):
    """LanceDB location (folder or object-store URI) and table name."""

    uri: str
    table: str = "chunks"


def build_resources(chunking_path: str | Path, pipeline_path: str | Path, *, data_dir: str | Path | None = None,
                    output_dir: str | Path | None = None) -> dict[str, object]:
    """All resources of the code location, from the two config files (paths resolved to absolute)."""
    pcfg = load_pipeline_config(pipeline_path).with_paths(data_dir=data_dir, output_dir=output_dir)
    ccfg = load_chunking_config(chunking_path)
    out = pcfg.output_path
    layout = OutputLayout(out)
    from .io_managers import ParquetIOManagerFactory

    e = pcfg.embedder
    return {
        "settings": SettingsResource(chunking_config=str(Path(chunking_path).resolve()),
                                     pipeline_config=str(Path(pipeline_path).resolve()),
                                     data_dir=str(pcfg.data_path), output_dir=str(out), storage_dir=str(layout.storage)),
        "tokenizer": TokenizerResource(encoding=ccfg.tokenizer, backend=ccfg.tokenizer_backend),
        "embedder": EmbedderResource(model=e.model, batch_size=e.batch_size, device=e.device, query_prefix=e.query_prefix,
                                     passage_prefix=e.passage_prefix, context_prefix=e.context_prefix,
                                     long_text=e.long_text, window_overlap_tokens=e.window_overlap_tokens,
                                     cache_path=str(layout.embedding_cache), backend=e.backend,
                                     model_cache=str(layout.model_cache)),
        "lancedb": LanceDBResource(uri=pcfg.resolve(pcfg.lancedb.uri) if output_dir is None else str(layout.lancedb),
                                   table=pcfg.lancedb.table),
        "io_manager": ParquetIOManagerFactory(base_dir=str(layout.storage)),
    }
