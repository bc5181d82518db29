"""Registry rows take their slot values as keywords: no KeyBERT, no section embedding (issue 12 performance)."""

from __future__ import annotations

from heritage_pipeline import stages as P
from heritage_pipeline.core.config import load_chunking_config
from heritage_pipeline.enrich.stage import enrich_chunks
from heritage_pipeline.sources.registry import MappingsFile, parse_registry


class _NoEmbedder:
    """Fails the test if anything asks it for a vector."""

    model_id, dim, passage_prefix = "none", 3, ""

    def encode(self, *a, **k):
        raise AssertionError("a registry row was embedded during enrichment")

    embed = encode


def _chunks(text: str):
    doc, _ = parse_registry(text, doc_id="r.csv", source_path="r.csv", lang="und", mappings=MappingsFile())
    return P.chunk_documents([doc], load_chunking_config())


def test_record_keywords_are_slot_values_and_nothing_is_embedded():
    cfg = load_chunking_config()
    assert cfg.context.keywords.method in ("embedding", "keybert") and cfg.context.section_embedding
    chunks = _chunks("naam;plaats;ISIL;type\nZeeuws Archief;Middelburg;NL-MdbZA;archief\n"
                     "Fries Museum;Leeuwarden;;museum; dierentuin\n")
    enrich_chunks(chunks, cfg, _NoEmbedder(), None, None)
    assert chunks[0].meta.keywords == ["Zeeuws Archief", "archief", "Middelburg", "NL-MdbZA"]
    assert chunks[1].meta.keywords[:2] == ["Fries Museum", "museum"]
    assert all(c.section_emb is None for c in chunks)


def test_enrich_stage_computes_no_passage_vector_for_records():
    cfg = load_chunking_config()
    chunks = _chunks("name,city\nTeylers Museum,Haarlem\n")
    P.enrich_stage(chunks, cfg, _NoEmbedder(), None, None)
    assert chunks[0].meta.keywords == ["Teylers Museum", "Haarlem"]
