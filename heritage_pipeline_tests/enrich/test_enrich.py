"""Enrichment: code blocks, language per chunk, keywords (RAKE; KeyBERT on the real model is a slow test),
section embeddings computed once per breadcrumb, all fields filled."""

from __future__ import annotations

import numpy as np
import pytest

from heritage_pipeline.enrich.codeblocks import code_blocks, code_meta, code_names
from heritage_pipeline.core.config import ChunkingConfig
from heritage_pipeline.enrich.stage import enrich_chunks, section_embeddings
from heritage_pipeline.enrich.keywords import keybert_keywords, rake_keywords, stop_words

from heritage_pipeline_tests._chunks import make_chunk

CODE = '''Intro.

```Python title="app/main.py"
from fastapi import FastAPI

app = FastAPI()


class Item(BaseModel):
    name: str


@app.post("/items/")
async def create_item(item: Item):
    return item
```

{* ../../docs_src/first_steps/tutorial001_py310.py hl[1] *}
'''


def test_code_language_path_and_names():
    blocks = code_blocks(CODE)
    assert [(b.language, b.path, b.include) for b in blocks] == [("python", "app/main.py", False),
                                                                ("python", "../../docs_src/first_steps/tutorial001_py310.py", True)]
    assert code_names(blocks[0].code, "python") == {"FUNC": ["create_item"], "CLASS": ["Item"], "API": ["POST /items/"]}
    assert code_names("function loadData(url) {}\nclass Store {}\nconst f = (x) => x", "javascript") == \
        {"FUNC": ["loadData", "f"], "CLASS": ["Store"]}


def test_long_code_block_summary_keeps_text_exact():
    body = "\n".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(200))
    text = f"```python\n{body}```\n"
    m = code_meta(text, count_tokens=lambda s: len(s.split()))
    assert m.summary.startswith("[python, ") and "- def f0(x):" in m.summary and "more)" in m.summary
    # a continued piece of a split block: language from the fence repeated in the context prefix
    m2 = code_meta("    return x\n\ndef g(y):\n    return y\n", "Title\n```python")
    assert m2.languages == ["python"] and m2.names["FUNC"] == ["g"]


def test_rake_and_stop_words():
    assert {"de", "het", "een"} <= stop_words("nl") and {"der", "die", "und"} <= stop_words("de")
    kws = rake_keywords("Natural history museums hold type specimens. Type specimens anchor species names.", "en", 3)
    assert kws and "type specimens" in " ".join(kws)


class FakeEmbedder:
    """Deterministic stand-in for the sentence-transformers embedder: counts how often each text is embedded."""

    model_id = "fake"
    dim = 8
    passage_prefix = ""

    def __init__(self):
        self.calls: list[str] = []

    def embed_passages(self, texts):
        self.calls.extend(texts)
        vecs = np.stack([np.random.default_rng(abs(hash(t)) % 2**32).normal(size=self.dim) for t in texts]).astype(np.float32)
        return vecs / np.linalg.norm(vecs, axis=1, keepdims=True), [1] * len(texts)

    embed_passages_raw = embed_passages


def test_section_embedding_once_per_breadcrumb(tmp_path):
    from heritage_pipeline.embed.cache import EmbeddingCache

    cs = [make_chunk(i, f"text {i}") for i in range(6)]
    for i, c in enumerate(cs):
        c.meta.anchors = ["Guide", "Install"] if i % 2 else ["Guide", "Usage"]
    cs[5].meta.anchors = []
    emb = FakeEmbedder()
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    assert section_embeddings(cs, emb, cache) == 2
    assert sorted(emb.calls) == ["Guide › Install", "Guide › Usage"]
    assert cs[0].section_emb == cs[2].section_emb and cs[0].section_emb != cs[1].section_emb and cs[5].section_emb is None
    assert section_embeddings(cs, emb, cache) == 0 and len(emb.calls) == 2  # a second run embeds nothing


def test_enrich_fills_every_field_with_rake():
    cfg = ChunkingConfig.model_validate({"context": {"keywords": {"method": "rake"}, "section_embedding": False}})
    cs = [make_chunk(0, CODE), make_chunk(1, "Les articles L. 211-1 et L. 211-2 du Code du patrimoine définissent les archives "
                                            "publiques conservées par le Centre des monuments nationaux.", lang="fr"),
          make_chunk(2, "| a | b |\n|---|---|\n| 1 | 2 |\n")]
    enrich_chunks(cs, cfg)
    assert cs[0].meta.entities["CLASS"] == ["Item"] and cs[0].meta.code_languages == ["python"]
    assert cs[1].meta.entities["LAW"][0] == "articles L. 211-1 et L. 211-2" and "Code du patrimoine" in cs[1].meta.entities["LAW"]
    assert cs[1].meta.lang == "fr" and all(c.meta.keywords for c in cs[:2])
    assert cs[2].meta.table_digest and cs[2].meta.table_text.startswith("| a | b |")


@pytest.mark.slow
def test_keybert_on_the_embedder_model():
    from heritage_pipeline.core.config import EmbedderConfig
    from heritage_pipeline.embed.embedders import make_embedder

    emb = make_embedder(EmbedderConfig(model="minilm"))
    texts = ["Natural history museums hold type specimens that anchor species names for taxonomists.",
             "Le musée conserve des archives publiques ouvertes aux chercheurs chaque mardi."]
    kws = keybert_keywords(texts, ["en", "fr"], emb, top_k=6, diversity=0.5)
    assert all(1 <= len(k) <= 6 for k in kws)
    assert not ({"the", "le", "des"} & {w for k in kws for p in k for w in p.split()})


class _RecordingEmbedder:
    """A tiny deterministic embedder (8-d hash vectors) that records every passage it embeds, prefix included."""

    model_id = "fake"
    cache_id = "fake|test"
    dim = 8
    max_tokens = None

    def __init__(self, passage_prefix: str = "") -> None:
        self.passage_prefix = passage_prefix
        self.seen: list[str] = []

    def _vec(self, text: str):
        import hashlib

        import numpy as np

        v = np.frombuffer(hashlib.sha256(text.encode()).digest()[:32], dtype=np.uint8).astype(np.float32)[:8] + 1
        return v / np.linalg.norm(v)

    def embed_passages(self, texts):
        import numpy as np

        self.seen += [self.passage_prefix + t for t in texts]
        return np.stack([self._vec(self.passage_prefix + t) for t in texts]), [1] * len(texts)

    def embed_passages_raw(self, texts):  # KeyBERT's own document embeddings (not recorded)
        import numpy as np

        return np.stack([self._vec(t) for t in texts]), [1] * len(texts)

    def embed_query(self, text):
        return self._vec(text)


def test_keybert_candidate_cache_is_keyed_by_the_passage_prefix(tmp_path):
    """After a passage-prefix change the candidates are embedded again (with the new prefix), not served from the
    vectors cached under the old one."""
    from heritage_pipeline.embed.cache import EmbeddingCache

    texts = ["Natural history museums hold type specimens that anchor species names for taxonomists."]
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    first = _RecordingEmbedder("passage: ")
    keybert_keywords(texts, ["en"], first, top_k=3, diversity=0.5, cache=cache)
    assert first.seen and all(t.startswith("passage: ") for t in first.seen)
    again = _RecordingEmbedder("passage: ")
    keybert_keywords(texts, ["en"], again, top_k=3, diversity=0.5, cache=cache)
    assert again.seen == []  # same prefix: every candidate from the cache
    changed = _RecordingEmbedder("search_document: ")
    keybert_keywords(texts, ["en"], changed, top_k=3, diversity=0.5, cache=cache)
    assert changed.seen and all(t.startswith("search_document: ") for t in changed.seen)


def test_passages_embedded_now_counts_only_passages(tmp_path):
    """``passages_embedded_now`` counts chunk passages, not the keyword candidates and breadcrumbs that go through
    the same cache."""
    from heritage_pipeline import stages as P
    from heritage_pipeline.core.config import ChunkingConfig, EmbedderConfig
    from heritage_pipeline.embed.cache import EmbeddingCache

    cfg = ChunkingConfig()
    assert cfg.context.keywords.method in ("embedding", "keybert")  # both rank against the passage vectors
    chunks = [make_chunk(i, t, source="a.md", prefix="Guide > Visits") for i, t in enumerate([
        "Natural history museums hold type specimens that anchor species names for taxonomists.",
        "The reading room opens at ten; rare books and maps are for consultation on site only."])]
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    stats: dict[str, int] = {}
    P.enrich_stage(chunks, cfg, _RecordingEmbedder(), EmbedderConfig(), cache, stats=stats)
    assert stats["passages_embedded_now"] == 2
    assert cache.misses > 2  # the candidates (and breadcrumbs) were looked up too, and are not counted


# ------------------------------------------------------------------------------- embedding-ranked keywords
from hypothesis import given, settings, strategies as st  # noqa: E402

from heritage_pipeline.enrich.keywords import CANDIDATE_PREFIX, candidate_phrases, embedding_keywords, mmr  # noqa: E402

_WORDS = ["archives", "publiques", "musée", "the", "de", "museum", "Archief", "erfgoed", "Denkmal", "und", "path",
          "FastAPI", "l'État", "x", "42", "mise-en-scène"]


@given(st.lists(st.sampled_from(_WORDS + [".", ",", "\n", "(", ")"]), max_size=60), st.sampled_from(["en", "fr", "nl", "de"]))
@settings(max_examples=150, deadline=None)
def test_candidates_are_phrases_of_the_chunk_without_stop_words(words, lang):
    text = " ".join(words)
    cands = candidate_phrases(text, lang, 12)
    assert len(cands) == len(set(cands)) <= 12
    stops = stop_words(lang)
    low = text.lower()
    for p in cands:
        ws = p.split()
        assert 1 <= len(ws) <= 2 and not any(w in stops or len(w) < 2 or w.isdigit() for w in ws)
        assert all(w in low for w in ws)


def test_candidates_prefer_rare_repeated_words():
    cands = candidate_phrases("The Code du patrimoine governs public archives. Public archives are inalienable. "
                              "The archives are kept.", "en", 6)
    assert cands[0] == "archives" and "public archives" in cands and "public" not in cands  # repeated + rare first
    assert candidate_phrases("the of and . , 42", "en") == []


@given(st.integers(2, 30), st.integers(1, 8), st.floats(0, 1), st.integers(0, 10_000))
@settings(max_examples=60, deadline=None)
def test_mmr_picks_what_keyberts_mmr_picks(n, k, diversity, seed):
    from keybert._mmr import mmr as keybert_mmr

    rng = np.random.default_rng(seed)
    cand = rng.normal(size=(n, 16)).astype(np.float32)
    cand /= np.linalg.norm(cand, axis=1, keepdims=True)
    doc = rng.normal(size=16).astype(np.float32)
    doc /= np.linalg.norm(doc)
    words = [f"w{i}" for i in range(n)]
    ours = {words[i] for i in mmr(doc, cand, k, diversity)}
    theirs = {w for w, _ in keybert_mmr(doc[None, :], cand, words, top_n=k, diversity=diversity)}
    assert ours == theirs


def test_embedding_keywords_per_chunk_independent_of_batch_and_cached(tmp_path):
    from heritage_pipeline.embed.cache import EmbeddingCache

    texts = ["Natural history museums hold type specimens that anchor species names.",
             "Le musée conserve des archives publiques ouvertes aux chercheurs.",
             "De gemeente beheert het archief van de polder.", "1234 5678"]
    langs = ["en", "fr", "nl", "en"]
    emb = FakeEmbedder()
    docs, _ = emb.embed_passages(texts)
    emb.calls.clear()
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    together = embedding_keywords(texts, langs, emb, docs, top_k=6, diversity=0.5, cache=cache)
    assert together[3] == [] and all(1 <= len(k) <= 6 for k in together[:3])
    assert len(emb.calls) == len(set(emb.calls))  # each candidate phrase embedded once
    n = len(emb.calls)
    alone = [embedding_keywords([t], [lang], emb, docs[i : i + 1], top_k=6, diversity=0.5, cache=cache)[0]
             for i, (t, lang) in enumerate(zip(texts, langs))]
    assert alone == together  # a chunk's keywords do not depend on its neighbours
    assert len(emb.calls) == n  # ... and the second time every candidate vector came from the cache
    assert EmbeddingCache.key("fake", CANDIDATE_PREFIX, together[0][0]) in cache.get_many(
        [EmbeddingCache.key("fake", CANDIDATE_PREFIX, together[0][0])])
    with pytest.raises(ValueError, match="chunk vectors"):
        embedding_keywords(texts, langs, emb, docs[:2], top_k=6, diversity=0.5)


def test_enrich_with_embedding_keywords_needs_chunk_vectors():
    cfg = ChunkingConfig.model_validate({"context": {"keywords": {"method": "embedding"}, "section_embedding": False}})
    cs = [make_chunk(0, "Le musée conserve des archives publiques ouvertes aux chercheurs.", lang="fr")]
    emb = FakeEmbedder()
    with pytest.raises(ValueError, match="embedding"):
        enrich_chunks(cs, cfg, emb)
    vecs, _ = emb.embed_passages([cs[0].text])
    enrich_chunks(cs, cfg, emb, vecs)
    assert cs[0].meta.keywords and "le" not in cs[0].meta.keywords


def test_enrich_then_embed_computes_every_passage_vector_once(tmp_path):
    """The enrichment stage embeds the passages (keywords rank against them); the embedding stage then finds every
    one in the cache: each passage, breadcrumb and keyword candidate goes through the model exactly once."""
    from heritage_pipeline.core.config import EmbedderConfig
    from heritage_pipeline.embed.cache import EmbeddingCache
    from heritage_pipeline.stages import embed_stage, enrich_stage, passage_text

    cfg = ChunkingConfig.model_validate({"context": {"keywords": {"method": "embedding"}}})
    ecfg = EmbedderConfig()
    cs = [make_chunk(i, t, prefix="Guide › Archives") for i, t in enumerate([
        "The municipal archive keeps the registers of births and marriages since 1811.",
        "Le musée conserve des archives publiques ouvertes aux chercheurs chaque mardi.",
        "Het Rijksmuseum in Amsterdam toont schilderijen uit de Gouden Eeuw."])]
    for c in cs:
        c.meta.anchors = ["Guide", "Archives"]
    emb = FakeEmbedder()
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    enrich_stage(cs, cfg, emb, ecfg, cache)
    assert all(c.meta.keywords for c in cs) and cs[0].section_emb is not None
    n_enrich = len(emb.calls)
    _, stats = embed_stage(cs, emb, ecfg, cache)
    assert len(emb.calls) == n_enrich and stats["embedded_now"] == 0  # the embedding stage embedded nothing again
    assert len(emb.calls) == len(set(emb.calls))  # nothing went through the model twice
    assert {passage_text(c, ecfg.context_prefix) for c in cs} <= set(emb.calls)
