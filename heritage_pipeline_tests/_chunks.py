"""Small helpers to build Chunk records in tests."""

from heritage_pipeline.core.models import Chunk, ChunkMeta, Spans


def make_chunk(i: int, text: str, *, tier: str = "TIER_4_INFERRED", source: str | None = None, lang: str = "en",
               len_tokens: int = 400, source_type: str = "document", domain: str | None = None, prefix: str = "") -> Chunk:
    return Chunk(id=f"doc#sec#{i:04d}", text=text,
                 meta=ChunkMeta(source_type=source_type, source_id="doc", source_path=source or f"file{i}.md",
                                doc_id="doc", data_tier=tier, lang=lang, language=lang, len_tokens=len_tokens,
                                domain=domain, context_prefix=prefix),
                 spans=Spans(char_start=0, char_end=len(text)))
