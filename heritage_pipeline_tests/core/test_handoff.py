"""The in-process chunk hand-off between assets (core/handoff.py): what a consumer takes equals the decoded table."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from heritage_pipeline import stages as P
from heritage_pipeline.core.config import load_chunking_config
from heritage_pipeline.core.handoff import ChunkHandoff
from heritage_pipeline.core.models import chunks_to_table, table_to_chunks
from heritage_pipeline.incremental.versions import with_versions
from heritage_pipeline.sources.discovery import discover

from heritage_pipeline_tests.ops_fixtures import BUNDLED


class _HashEmbedder:
    """Deterministic vectors from the text's SHA-256 (the hand-off does not depend on what the vectors mean)."""

    model_id, dim, passage_prefix, cache_id = "hash", 16, "", "hash"

    def embed_passages(self, texts):
        vecs = np.stack([np.frombuffer(hashlib.sha256(t.encode()).digest()[: self.dim], dtype=np.uint8)
                         for t in texts]).astype(np.float32) / 255.0 + 0.01 if texts else np.zeros((0, self.dim),
                                                                                                  np.float32)
        return vecs / np.linalg.norm(vecs, axis=1, keepdims=True), [1] * len(texts)

    embed_passages_raw = embed_passages


def _dumps(chunks):
    return [(c.model_dump(exclude={"section_emb"}), c.section_emb) for c in chunks]


def _hand_over(chunks, version: str):
    """(what the consumer takes through a hand-off, what it would decode) for one stage's output."""
    table = with_versions(chunks_to_table(chunks), version, "code")
    h = ChunkHandoff()
    h.put(table, chunks)
    decoded = table_to_chunks(table)
    taken = h.take(table)
    assert h.taken == 1 and h.decoded == 0
    return taken, decoded


@pytest.fixture(scope="module")
def bundled_docs():
    cfg = load_chunking_config()
    sources = [s for s in discover(BUNDLED) if s.status == "ok"]
    assert {s.source_type for s in sources} == {"document", "website", "conversation", "csv_registry", "yaml_instance"}
    return P.parse_sources(sources, cfg).docs


def test_every_stage_of_the_bundled_data_hands_over_what_its_table_decodes_to(bundled_docs):
    """Chunks, enriched chunks (keywords, section embeddings, mentions, quality), deduped and embedded chunks of every
    source type: the objects a producer hands over equal ``table_to_chunks`` of its table, field by field."""
    cfg = load_chunking_config()
    emb = _HashEmbedder()
    chunks = P.chunk_documents(bundled_docs, cfg)
    taken, decoded = _hand_over(chunks, "v-chunks")
    assert _dumps(taken) == _dumps(decoded)
    P.enrich_stage(taken, cfg, emb, None, None, data_dir=BUNDLED)
    assert any(c.section_emb for c in taken) and any(c.meta.mentioned_entities for c in taken)
    taken, decoded = _hand_over(taken, "v-enriched")
    assert _dumps(taken) == _dumps(decoded)
    kept, log = P.dedup_stage(taken, cfg)
    assert log  # the bundled data has duplicates: survivors carry meta.duplicates
    taken, decoded = _hand_over(kept, "v-deduped")
    assert _dumps(taken) == _dumps(decoded)
    vecs, _ = P.embed_stage(taken, emb, P.EmbedderConfig(), None)
    table = with_versions(chunks_to_table(taken, vecs), "v-embedded", "code")
    assert _dumps(taken) == _dumps(table_to_chunks(table))


def test_a_table_without_kept_objects_is_decoded_and_each_list_is_taken_once(bundled_docs):
    cfg = load_chunking_config()
    chunks = P.chunk_documents(bundled_docs[:3], cfg)
    table = with_versions(chunks_to_table(chunks), "v1", "code")
    h = ChunkHandoff()
    assert _dumps(h.take(table)) == _dumps(table_to_chunks(table)) and h.decoded == 1
    h.put(table, chunks)
    assert h.take(table) is chunks
    second = h.take(table)  # taken once: the first caller owns (and may modify) the objects
    assert second is not chunks and _dumps(second) == _dumps(chunks) and h.decoded == 2
    other = with_versions(table, "v2", "code")  # same rows, another data version: not these objects
    h.put(table, chunks)
    assert h.take(other) is not chunks and h.take(table) is chunks
    h.put(chunks_to_table(chunks), chunks)  # no data version: nothing to key it by, not kept
    assert not h._kept
    h.put(table, chunks)
    h.drop(table)  # its consumer reused a stored output
    assert not h._kept
    for i in range(5):
        h.put(with_versions(table, f"v{i}", "code"), chunks)
    assert len(h._kept) == h.max_kept
    with pytest.raises(ValueError):
        h.put(table, chunks[:-1])
