"""heritage_pipeline: RAG ingestion for heritage and documentation sources.

Library entry points (no Dagster needed)::

    from heritage_pipeline import chunk_text
    chunks = chunk_text(markdown, size_tokens=600, overlap_ratio=0.2)   # list[Chunk]

The Dagster code location is :mod:`heritage_pipeline.definitions`; the CLI is ``heritage-pipeline``.
"""

# Names are imported on first use (PEP 562): `import heritage_pipeline.cli` for `search` must not pay for the
# chunker (tiktoken, parsers) it does not use.
_LAZY = {
    "Chunker": "heritage_pipeline.chunking.chunker", "chunk_text": "heritage_pipeline.chunking.chunker",
    "ChunkingConfig": "heritage_pipeline.core.config", "ConfigError": "heritage_pipeline.core.config",
    "PipelineConfig": "heritage_pipeline.core.config", "load_chunking_config": "heritage_pipeline.core.config",
    "load_pipeline_config": "heritage_pipeline.core.config",
    "Chunk": "heritage_pipeline.core.models", "ChunkMetadata": "heritage_pipeline.core.models",
    "search": "heritage_pipeline.index.api", "SearchHit": "heritage_pipeline.index.api",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'heritage_pipeline' has no attribute {name!r}")


__all__ = [
    "Chunk",
    "ChunkMetadata",
    "Chunker",
    "ChunkingConfig",
    "ConfigError",
    "PipelineConfig",
    "SearchHit",
    "chunk_text",
    "load_chunking_config",
    "load_pipeline_config",
    "search",
]
__version__ = "0.1.0"
