"""The LanceDB table schema and the rows of a partition (one row per chunk; see ``docs/index.md``).
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from heritage_pipeline.chunking.ids import breadcrumb
from heritage_pipeline.core.models import Chunk

FILTER_COLUMNS = ("lang", "language", "source_type", "custodian_type", "country_code", "data_tier", "doc_id")
# Languages with a Snowball stemmer and stop-word list in LanceDB's (Tantivy) FTS, by ISO 639-1 code.
FTS_LANGUAGE = {"ar": "Arabic", "da": "Danish", "de": "German", "el": "Greek", "en": "English", "es": "Spanish",
                "fi": "Finnish", "fr": "French", "hu": "Hungarian", "it": "Italian", "nl": "Dutch", "no": "Norwegian",
                "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sv": "Swedish", "ta": "Tamil", "tr": "Turkish"}


def fts_config(lang: str | None):
    """The FTS tokenizer for a language: stemming + stop words + ASCII folding for a language in
    :data:`FTS_LANGUAGE`, language-neutral (lower case + ASCII folding only) for ``None`` or any other language."""
    from lancedb.index import FTS

    if lang in FTS_LANGUAGE:
        return FTS(language=FTS_LANGUAGE[lang], stem=True, remove_stop_words=True, ascii_folding=True, lower_case=True)
    return FTS(language="English", stem=False, remove_stop_words=False, ascii_folding=True, lower_case=True)


def lang_column(lang: str) -> str:
    return f"search_text_{lang}"


def index_schema(dim: int, langs: list[str] = (), embedding_model: str = "") -> pa.Schema:
    """Arrow schema of the index table for vectors of ``dim`` floats and stemmed columns for ``langs``."""
    fields = [
        ("id", pa.string()),
        ("partition", pa.string()),
        ("text", pa.string()),
        ("search_text", pa.string()),
        ("vector", pa.list_(pa.float32(), dim)),
        ("section_emb", pa.list_(pa.float32())),
        ("doc_id", pa.string()),
        ("source_path", pa.string()),
        ("source_type", pa.string()),
        ("lang", pa.string()),
        ("language", pa.string()),
        ("anchors", pa.list_(pa.string())),
        ("breadcrumb", pa.string()),
        ("keywords", pa.list_(pa.string())),
        ("entities", pa.string()),
        ("custodian_type", pa.string()),
        ("country_code", pa.string()),
        ("settlement", pa.string()),
        ("data_tier", pa.string()),
        ("char_start", pa.int64()),
        ("char_end", pa.int64()),
        ("len_tokens", pa.int64()),
        ("quality_score", pa.float64()),
        ("readability", pa.float64()),
        ("embedding_model", pa.string()),
        ("embedding_windows", pa.int64()),
        ("record", pa.string()),
    ] + [(lang_column(lg), pa.string()) for lg in sorted(langs)]
    return pa.schema(fields, metadata={"embedding_model": embedding_model, "dim": str(dim)})


def stemmed_languages(chunks: list[Chunk]) -> list[str]:
    """Languages of ``chunks`` (``meta.lang``) that have a stemmed full-text index."""
    return sorted({c.meta.lang for c in chunks if c.meta.lang in FTS_LANGUAGE})


def chunk_rows(chunks: list[Chunk], vectors: np.ndarray, partition: str, *, langs: list[str] | None = None,
               embedding_model: str | None = None, dim: int | None = None) -> pa.Table:
    """Arrow rows of :func:`index_schema` for chunks and their vectors (``float32 [n, dim]``).

    Args:
        chunks: the chunks of one partition.
        vectors: their passage vectors, ``[n, dim]``; for no chunks an empty ``[0, dim]`` array gives the width.
        partition: the partition key (``lang|source_type``).
        langs: stemmed columns to fill (default: the chunks' own languages).
        embedding_model: the model id column (default: the chunks' ``meta.embedding_model``).
        dim: the vector width when ``vectors`` cannot tell it (an empty 1-d array): the embedder's ``dim``.

    Returns:
        The Arrow table.

    Raises:
        ValueError: the number of vectors differs from the number of chunks, or the width is unknown.
    """
    vectors = np.asarray(vectors, dtype=np.float32)
    if len(vectors) != len(chunks):
        raise ValueError(f"partition {partition}: {len(chunks)} chunks but {len(vectors)} vectors")
    if vectors.ndim == 2 and vectors.shape[1]:
        dim = int(vectors.shape[1])  # from the embedder's vectors, never a guessed default
    elif dim is None:
        raise ValueError(f"partition {partition}: no vectors to read the width from; pass dim (the embedder's dim)")
    langs = stemmed_languages(chunks) if langs is None else langs
    model = embedding_model if embedding_model is not None else next((c.meta.embedding_model for c in chunks if c.meta.embedding_model), "")
    search_text = [c.embedding_text() for c in chunks]
    cols = {
        "id": [c.id for c in chunks],
        "partition": [partition] * len(chunks),
        "text": [c.text for c in chunks],
        "search_text": search_text,
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), type=pa.float32()), dim),
        "section_emb": [c.section_emb for c in chunks],
        "doc_id": [c.meta.doc_id for c in chunks],
        "source_path": [c.meta.source_path for c in chunks],
        "source_type": [c.meta.source_type for c in chunks],
        "lang": [c.meta.lang for c in chunks],
        "language": [c.meta.language for c in chunks],
        "anchors": [c.meta.anchors for c in chunks],
        "breadcrumb": [breadcrumb(c.meta.anchors) for c in chunks],
        "keywords": [c.meta.keywords for c in chunks],
        "entities": [json.dumps(c.meta.entities, ensure_ascii=False) for c in chunks],
        "custodian_type": [c.meta.custodian_type for c in chunks],
        "country_code": [c.meta.country_code for c in chunks],
        "settlement": [c.meta.settlement for c in chunks],
        "data_tier": [c.meta.data_tier for c in chunks],
        "char_start": [c.spans.char_start for c in chunks],
        "char_end": [c.spans.char_end for c in chunks],
        "len_tokens": [c.meta.len_tokens for c in chunks],
        "quality_score": [c.quality.score for c in chunks],
        "readability": [c.quality.readability for c in chunks],
        "embedding_model": [c.meta.embedding_model or model for c in chunks],
        "embedding_windows": [c.meta.embedding_windows for c in chunks],
        "record": [c.model_dump_json(exclude={"section_emb"}) for c in chunks],
    }
    for lg in sorted(langs):
        cols[lang_column(lg)] = [t if c.meta.lang == lg else "" for c, t in zip(chunks, search_text)]
    return pa.table(cols, schema=index_schema(dim, langs, model or ""))
