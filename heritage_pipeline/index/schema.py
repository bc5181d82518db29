"""The LanceDB table schema and the rows of a partition (one row per chunk; see ``docs/index.md``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from .analysis import ascii_fold, extract_identifiers, has_cjk

if TYPE_CHECKING:  # the search path reads the schema helpers without importing the chunker (60 ms)
    from heritage_pipeline.core.models import Chunk

FILTER_COLUMNS = ("lang", "language", "source_type", "custodian_type", "country_code", "data_tier", "doc_id",
                  "settlement")
# Column of chunks holding Han/Kana/Hangul text, indexed by character bigrams (scripts without spaces).
CJK = "cjk"
CJK_NGRAM = 2
# Languages with a Snowball stemmer and stop-word list in LanceDB's (Tantivy) FTS, by ISO 639-1 code.
FTS_LANGUAGE = {"ar": "Arabic", "da": "Danish", "de": "German", "el": "Greek", "en": "English", "es": "Spanish",
                "fi": "Finnish", "fr": "French", "hu": "Hungarian", "it": "Italian", "nl": "Dutch", "no": "Norwegian",
                "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sv": "Swedish", "ta": "Tamil", "tr": "Turkish"}


def fts_config(lang: str | None):
    """The FTS tokenizer of a full-text column.

    Args:
        lang: an ISO 639-1 code of :data:`FTS_LANGUAGE` (stemming + stop words + ASCII folding; the column's text is
            already folded by :func:`~heritage_pipeline.index.analysis.ascii_fold`, so folding before stemming holds
            on both sides), :data:`CJK` (Tantivy's n-gram tokenizer, character bigrams: a CJK word of two or more
            characters matches the bigrams it is made of), or ``None``/any other code (lower case + ASCII folding).
    Returns:
        A ``lancedb.index.FTS`` configuration.
    """
    from lancedb.index import FTS

    if lang == CJK:
        return FTS(base_tokenizer="ngram", ngram_min_length=CJK_NGRAM, ngram_max_length=CJK_NGRAM, stem=False,
                   remove_stop_words=False, ascii_folding=True, lower_case=True)
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
        ("identifiers", pa.list_(pa.string())),
        ("flagged", pa.bool_()),
        ("name", pa.string()),
        ("source_url", pa.string()),
        ("row_index", pa.int64()),
    ] + [(lang_column(lg), pa.string()) for lg in sorted(langs)]
    return pa.schema(fields, metadata={"embedding_model": embedding_model, "dim": str(dim)})


def stemmed_languages(chunks: list[Chunk]) -> list[str]:
    """Languages of ``chunks`` (``meta.lang``) that have a stemmed full-text index."""
    return sorted({c.meta.lang for c in chunks if c.meta.lang in FTS_LANGUAGE})


def chunk_rows(chunks: list[Chunk], vectors: np.ndarray, partition: str, *, langs: list[str] | None = None,
               embedding_model: str | None = None, dim: int | None = None) -> pa.Table:
    """Arrow rows of :func:`index_schema` for chunks and their vectors (``float32 [n, dim]``).

    Besides the chunk's own fields, each row carries what the search side analyses (see
    :mod:`heritage_pipeline.index.analysis`): ``identifiers`` (lower-cased identifiers of the embedded text and of
    the record's field values, matched exactly), ``flagged`` (boilerplate or degenerate: kept, filtered at search
    time), the record slots ``settlement`` / ``custodian_type`` / ``name`` (typed ``ChunkMeta`` fields, else
    ``meta.extra["slot:<slot>"]``), the stemmed language column holding the folded text, and ``search_text_cjk``
    (present when a chunk holds CJK text).

    Args:
        chunks: the chunks of one partition.
        vectors: their passage vectors, ``[n, dim]``; for no chunks an empty ``[0, dim]`` array gives the width.
        partition: the partition key (``lang|source_type``).
        langs: stemmed columns to fill (default: the chunks' own languages).
        embedding_model: the model id column (default: the chunks' ``meta.embedding_model``).
        dim: the vector width when ``vectors`` cannot tell it (an empty 1-d array): the embedder's ``dim``.

    Returns:
        A ``pyarrow.Table`` of :func:`index_schema`.

    Raises:
        ValueError: the number of vectors differs from the number of chunks, or the width is unknown.
    """
    from heritage_pipeline.chunking.ids import breadcrumb

    vectors = np.asarray(vectors, dtype=np.float32)
    if len(vectors) != len(chunks):
        raise ValueError(f"partition {partition}: {len(chunks)} chunks but {len(vectors)} vectors")
    if vectors.ndim == 2 and vectors.shape[1]:
        dim = int(vectors.shape[1])  # from the embedder's vectors, never a guessed default
    elif dim is None:
        raise ValueError(f"partition {partition}: no vectors to read the width from; pass dim (the embedder's dim)")
    langs = list(stemmed_languages(chunks) if langs is None else langs)
    cjk = [has_cjk(c.text) for c in chunks]
    if any(cjk) and CJK not in langs:
        langs.append(CJK)
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
        "identifiers": [_identifiers(c, t) for c, t in zip(chunks, search_text)],
        "flagged": [bool(c.quality.boilerplate or c.quality.degenerate) for c in chunks],
        "name": [_slot(c, "name") for c in chunks],
        "source_url": [c.meta.source_url for c in chunks],
        "row_index": [c.meta.row_index for c in chunks],
    }
    cols["settlement"] = [c.meta.settlement or _slot(c, "settlement") for c in chunks]
    cols["custodian_type"] = [c.meta.custodian_type or _slot(c, "custodian_type") for c in chunks]
    for lg in sorted(langs):
        if lg == CJK:
            cols[lang_column(lg)] = [t if j else "" for j, t in zip(cjk, search_text)]
        else:
            cols[lang_column(lg)] = [ascii_fold(t) if c.meta.lang == lg else "" for c, t in zip(chunks, search_text)]
    return pa.table(cols, schema=index_schema(dim, langs, model or ""))


def _slot(c: Chunk, slot: str) -> str | None:
    """A record slot from ``meta.extra["slot:<slot>"]`` (registry column mapping), else None."""
    v = c.meta.extra.get(f"slot:{slot}")
    return v.strip() or None if isinstance(v, str) else None


def _identifiers(c: Chunk, embedded: str) -> list[str]:
    """Identifiers of a record's field values (``meta.extra``: not its column names, which in a headerless file
    are the first row's values), else of the embedded text."""
    if c.meta.extra:
        found: dict[str, None] = {}
        for v in c.meta.extra.values():  # raw columns, slot:<role> and identifier:<scheme> values
            found.update(dict.fromkeys(extract_identifiers(v)))
        return list(found)
    return extract_identifiers(embedded)
