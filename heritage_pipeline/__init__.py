"""heritage_pipeline: RAG ingestion for heritage and documentation sources.

Library entry points (no Dagster needed)::

    from heritage_pipeline import chunk_text
    chunks = chunk_text(markdown, size_tokens=600, overlap_ratio=0.2)   # list[Chunk]

The Dagster code location is :mod:`heritage_pipeline.definitions`; the CLI is ``heritage-pipeline``.
"""

from heritage_pipeline.chunking.chunker import Chunker, chunk_text
from heritage_pipeline.core.config import (ChunkingConfig, ConfigError, PipelineConfig, load_chunking_config,
    load_pipeline_config)
from heritage_pipeline.core.models import Chunk, ChunkMetadata

__all__ = [
    "Chunk",
    "ChunkMetadata",
    "Chunker",
    "ChunkingConfig",
    "ConfigError",
    "PipelineConfig",
    "chunk_text",
    "load_chunking_config",
    "load_pipeline_config",
]
__version__ = "0.1.0"
