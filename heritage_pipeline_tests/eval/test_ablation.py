"""Ablation: distractor sampling, the recommendation rule, and a small end-to-end run (report files, determinism)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from heritage_pipeline_eval.ablation import default_distractors, recommend, run_ablation
from heritage_pipeline.core.config import AblationConfig, LanceDBConfig, load_chunking_config
from heritage_pipeline.embed.windows import WindowedEmbedder

REQUIRED = ["lang", "mode", "size_tokens", "overlap_ratio", "retriever", "hit@5", "mrr@10", "ndcg@10", "hit@5_ci",
            "mrr@10_ci", "ndcg@10_ci", "answer_in_2000_tokens", "n_queries", "n_chunks", "index_bytes", "build_s",
            "p50_ms", "p95_ms", "recommended"]


class BagOfWords(WindowedEmbedder):
    """Deterministic test embedder: hashed bag of lower-cased words (no model download, milliseconds)."""

    model_id = "bag-of-words"
    backend = "test"
    dim = 64

    def _encode(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"\w+", t.lower()):
                out[i, sum(map(ord, w)) % self.dim] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def test_default_distractors_sample_is_fixed_per_language_and_budget(shared_data):
    fr = default_distractors(shared_data, "fr", 300_000, ["docs", "legal_*/raw", "faq"])
    again = default_distractors(shared_data, "fr", 300_000, ["docs", "legal_*/raw", "faq"])
    assert [d.doc_id for d in fr] == [d.doc_id for d in again]
    total = sum(len(d.text) for d in fr)
    assert 300_000 <= total < 350_000
    kinds = {d.doc_id.split("/")[1] for d in fr}
    assert kinds == {"docs", "legal_fr", "faq"}  # docs, legal and FAQ are all represented
    assert all("/fr/" in d.doc_id or "legal_fr" in d.doc_id for d in fr)
    assert all(len(d.text) <= 50_000 for d in fr)  # the 287 KB annex and similar are skipped
    en = default_distractors(shared_data, "en", 300_000, ["docs", "legal_*/raw", "faq"])
    assert en and all("/en/" in d.doc_id for d in en) and "release-notes" not in " ".join(d.doc_id for d in en)


def _row(lang, size, overlap, retriever, ndcg, budget, mode="hybrid", n=100):
    return {"lang": lang, "mode": mode, "size_tokens": size, "overlap_ratio": overlap, "retriever": retriever,
            "ndcg@10": ndcg, "ndcg@10_ci": [ndcg - 0.02, ndcg + 0.02], "mrr@10": ndcg, "hit@5": ndcg,
            "answer_in_2000_tokens": budget, "n_chunks": n, "recommended": False}


def test_recommendation_rule():
    rows = [
        _row("fr", 400, 0.15, "bm25", 0.80, 0.95), _row("fr", 800, 0.15, "bm25", 0.82, 0.90),
        _row("fr", 400, 0.15, "hybrid", 0.850, 0.95), _row("fr", 600, 0.15, "hybrid", 0.862, 0.94),
        _row("fr", 800, 0.15, "hybrid", 0.866, 0.90), _row("fr", 800, 0.25, "hybrid", 0.864, 0.90),
        _row("en", 400, 0.15, "bm25", 0.97, 0.99), _row("en", 600, 0.15, "bm25", 0.97, 0.99),
    ]
    recs = recommend(rows, 0.0)  # no context-budget floor: the tie rule alone
    # fr: hybrid has the best mean; 600 and 800 are within 0.005 of 0.866; 600 puts the answer in budget more often
    assert (recs["fr"]["retriever"], recs["fr"]["size_tokens"]) == ("hybrid", 600)
    # en: a tie everywhere -> the smaller size
    assert recs["en"]["size_tokens"] == 400
    assert sum(r["recommended"] for r in rows) == 2
    assert "within 0.005" in recs["fr"]["why"] and "0.866" in recs["fr"]["why"]
    # the context-budget floor: 800 tokens rank best but miss the floor, so 600 is chosen even without the tie
    rows = [_row("fr", 600, 0.20, "hybrid", 0.860, 0.935), _row("fr", 800, 0.20, "hybrid", 0.890, 0.925)]
    recs = recommend(rows, 0.93)
    assert recs["fr"]["size_tokens"] == 600 and "were not eligible" in recs["fr"]["why"]
    assert [r["recommended"] for r in rows] == [True, False]
    # no row reaches the floor: every row is eligible, and the report says so
    recs = recommend(rows, 0.99)
    assert recs["fr"]["size_tokens"] == 800 and "No setting puts the answer" in recs["fr"]["why"]
    assert [r["recommended"] for r in rows] == [False, True]


def _golden(tmp_path, lang, docs: dict[str, str], questions: list[tuple[str, str, str]]):
    folder = tmp_path / lang
    (folder / "docs").mkdir(parents=True)
    lines = []
    for doc_id, text in docs.items():
        (folder / "docs" / f"{doc_id}.md").write_text(text, encoding="utf-8")
    for i, (doc_id, question, answer) in enumerate(questions):
        text = docs[doc_id]
        a = text.index(answer)
        p0 = text.rfind("\n\n", 0, a) + 2 if "\n\n" in text[:a] else 0
        p1 = text.find("\n\n", a)
        lines.append(json.dumps({"qid": f"{lang}-{i}", "question": question, "lang": lang, "doc_id": doc_id,
                                 "gold_char_start": p0, "gold_char_end": p1 if p1 > 0 else len(text),
                                 "answer_text": answer, "answer_char_start": a}))
    (folder / "golden.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_small_end_to_end_run_writes_a_complete_deterministic_report(tmp_path):
    filler = " ".join(f"word{i}" for i in range(260))
    docs = {
        "rivers": f"# Rivers\n\nThe Loire is the longest river in France.\n\n{filler}\n\nThe Seine flows through Paris.",
        "museums": f"# Museums\n\nThe Louvre holds the Mona Lisa.\n\n{filler}\n\nThe Orsay museum shows impressionists.",
    }
    qs = [("rivers", "Which is the longest river in France?", "Loire"),
          ("rivers", "Which river flows through Paris?", "Seine"),
          ("museums", "Which museum holds the Mona Lisa?", "Louvre"),
          ("museums", "Where are the impressionists shown?", "Orsay")]
    golden = {"en": _golden(tmp_path, "en", docs, qs)}
    abl = AblationConfig(sizes=[300, 400], overlaps=[0.15], modes=["hybrid"], bootstrap_samples=200)
    cfg = load_chunking_config()
    results = []
    for run in ("a", "b"):
        res = run_ablation(golden, {}, cfg, abl, BagOfWords(), None, tmp_path / run, lcfg=LanceDBConfig(rrf_k=5, vector_weight=0.5))
        results.append(res)
    rows = results[0].rows
    assert len(rows) == 2 * 3  # sizes x retrievers
    for r in rows:
        for key in REQUIRED:
            assert key in r, key
        for m in ("hit@5", "mrr@10", "ndcg@10", "answer_in_2000_tokens"):
            assert 0.0 <= r[m] <= 1.0
            if m != "answer_in_2000_tokens":
                assert r[f"{m}_ci"][0] <= r[m] <= r[f"{m}_ci"][1]
        assert r["n_queries"] == 4 and r["index_bytes"] > 0
    assert sum(r["recommended"] for r in rows) == 1
    bm25 = [r for r in rows if r["retriever"] == "bm25"]
    assert max(r["ndcg@10"] for r in bm25) == 1.0  # the answers' words are in the questions: BM25 finds them all
    metrics = lambda rs: [(r["mode"], r["size_tokens"], r["overlap_ratio"], r["retriever"], r["ndcg@10"], r["ndcg@10_ci"],
                           r["answer_in_2000_tokens"]) for r in rs]
    assert metrics(results[0].rows) == metrics(results[1].rows)  # fixed seeds: same numbers twice
    for name in ("ablation.json", "ablation.csv", "ablation.md", "ablation.png"):
        assert (tmp_path / "a" / name).stat().st_size > 0
    assert json.loads((tmp_path / "a" / "ablation.json").read_text()) == results[0].rows
    md = (tmp_path / "a" / "ablation.md").read_text()
    assert "## Recommendation" in md and "**★**" in md


def test_bulk_rankings_equal_the_index_search(tmp_path):
    """rank_all (numpy cosine + rrf_fuse) ranks exactly like search_table through LanceDB (vector, fts, hybrid)."""
    from heritage_pipeline_eval.ablation import CorpusDoc, chunk_corpus, rank_all
    from heritage_pipeline_eval.metrics import GoldenQuestion
    from heritage_pipeline.index.schema import chunk_rows
    from heritage_pipeline.index.writer import open_table, write_partitions
    from heritage_pipeline.index.search import search_table

    topics = ["rivers and lakes", "museums and paintings", "railways and stations", "archives and records",
              "libraries and books", "castles and towers"]
    docs = [CorpusDoc(f"d{i}", f"# {t}\n\n" + " ".join(f"{t} fact{j}." for j in range(40)), True)
            for i, t in enumerate(topics)]
    chunks = chunk_corpus(docs, load_chunking_config(), "sliding", 300, 0.15, "en")
    emb = BagOfWords()
    vecs, _ = emb.embed_passages([c.embedding_text() for c in chunks])
    write_partitions(str(tmp_path), "chunks", {"en|document": chunk_rows(chunks, vecs, "en|document", langs=["en"])})
    tbl = open_table(str(tmp_path), "chunks")
    qs = [GoldenQuestion(f"q{i}", f"where are the {t}?", "en", "d0", 0, 1, "x", 0) for i, t in enumerate(topics)]
    qvecs = emb.embed_queries([q.question for q in qs])
    abl = AblationConfig()
    lcfg = LanceDBConfig(rrf_k=5, vector_weight=0.5, candidates=20)
    ranked = rank_all(tbl, qs, qvecs, chunks, vecs, "en", abl, lcfg)
    for i, q in enumerate(qs):
        for retriever, mode in (("bm25", "fts"), ("vector", "vector"), ("hybrid", "hybrid")):
            via_index = search_table(tbl, q.question, mode=mode, k=10, query_vector=qvecs[i], fts_lang="en",
                                     candidates=20, rrf_k=5, vector_weight=0.5)
            assert [h["id"] for h in via_index] == [d for d, _ in ranked[retriever][q.qid]], (retriever, q.question)


def test_report_without_golden_sets_says_so(tmp_path):
    from heritage_pipeline_eval.ablation import write_report

    result = write_report([], tmp_path)
    assert "No golden set was evaluated" in result.markdown
    assert json.loads((tmp_path / "ablation.json").read_text()) == []


def test_report_prose_is_computed_from_the_rows_and_the_config(tmp_path):
    """No fixed sentence: a best row of the same size as the chosen one is not called "larger chunks"; the presets
    and the corpus description come from the config and the golden sets."""
    from heritage_pipeline.core.config import ChunkingConfig, DomainPreset
    from heritage_pipeline_eval.ablation import CorpusDoc, describe_corpus, to_markdown

    rows = [_row("fr", 600, 0.15, "hybrid", 0.860, 0.95), _row("fr", 600, 0.25, "hybrid", 0.890, 0.90)]
    recs = recommend(rows, 0.93)
    why = recs["fr"]["why"]
    assert "larger chunks" not in why and "same size (600 tokens)" in why and "+0.030 nDCG@10" in why
    assert "less often (-0.050)" in why
    rows = [_row("en", 400, 0.15, "hybrid", 0.860, 0.95), _row("en", 800, 0.15, "hybrid", 0.890, 0.90)]
    assert "larger chunks (800 vs 400 tokens)" in recommend(rows, 0.93)["en"]["why"]

    presets = ChunkingConfig().domains.presets | {"faq": DomainPreset(size_tokens=450, overlap_ratio=0.10)}
    folder = tmp_path / "en"
    folder.mkdir()
    (folder / "manifest.json").write_text('{"src": "xquad.en.json"}', encoding="utf-8")
    corpus = describe_corpus({"en": folder}, {"en": ([1, 2, 3], {"a": "x"}, [CorpusDoc("a", "x", True)])})
    assert corpus == [f"en: 3 questions on 1 golden documents from xquad.en.json ({folder}), with no distractor documents."]
    for r in rows:  # the columns of the full table
        r.update({"ndcg@10_paragraph": r["ndcg@10"], "index_bytes": 4096, "build_s": 1.0, "p50_ms": 1.0, "p95_ms": 2.0})
    md = to_markdown(rows, recommend(rows), corpus=corpus, presets=presets)
    assert "faq 450/10%" in md and "legal 600/25%" in md and "no distractor documents" in md
    assert "XQuAD" not in md and "distractors" not in md.replace("no distractor documents", "")


class CountingBagOfWords(BagOfWords):
    """BagOfWords that counts the texts it embeds."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.embedded = 0

    def _encode(self, texts):
        self.embedded += len(texts)
        return super()._encode(texts)


def test_grid_points_with_the_same_chunks_share_parsing_vectors_index_and_scores(tmp_path, monkeypatch):
    import heritage_pipeline_eval.ablation as A

    filler = " ".join(f"word{i}" for i in range(120))
    docs = {"rivers": f"# Rivers\n\nThe Loire is the longest river in France.\n\n{filler}\n\nThe Seine flows through Paris.",
            "museums": f"# Museums\n\nThe Louvre holds the Mona Lisa.\n\n{filler}\n\nThe Orsay museum shows impressionists."}
    qs = [("rivers", "Which is the longest river in France?", "Loire"), ("museums", "Which museum holds the Mona Lisa?", "Louvre")]
    golden = {"en": _golden(tmp_path, "en", docs, qs)}
    # short documents: every size and overlap here gives one chunk per section, the same chunking 4 times
    abl = AblationConfig(sizes=[400, 600], overlaps=[0.15, 0.25], modes=["hybrid"], bootstrap_samples=100)
    cfg = load_chunking_config()
    parses, writes = [], []
    real_parse, real_write = A.parse_markdown, A.write_partitions
    monkeypatch.setattr(A, "parse_markdown", lambda *a, **k: parses.append(k["doc_id"]) or real_parse(*a, **k))
    monkeypatch.setattr(A, "write_partitions", lambda *a, **k: writes.append(1) or real_write(*a, **k))
    emb = CountingBagOfWords()
    shared = run_ablation(golden, {}, cfg, abl, emb, None, tmp_path / "shared")
    assert sorted(parses) == sorted(docs)  # each document parsed once for the whole grid
    assert len(writes) == 1  # one index build for the four identical chunkings
    n_chunks = shared.rows[0]["n_chunks"]
    assert emb.embedded == n_chunks + len(qs)  # every chunk embedded once (no cache given), plus the queries
    assert [r["shared_with"] for r in shared.rows if r["retriever"] == "bm25"] == [None] + ["hybrid 400/0.15"] * 3
    # the shared rows are the rows a full recomputation of each point gives
    import itertools

    fresh = itertools.count()
    monkeypatch.setattr(A, "chunking_key", lambda chunks: str(next(fresh)))  # no two points ever match: no sharing
    full = run_ablation(golden, {}, cfg, abl, CountingBagOfWords(), None, tmp_path / "full")
    # (timings differ, and two builds of the same LanceDB table differ by a few bytes of manifest on disk)
    skip = ("build_s", "p50_ms", "p95_ms", "shared_with", "index_bytes")
    strip = lambda rs: [{k: v for k, v in r.items() if k not in skip} for r in rs]
    assert strip(shared.rows) == strip(full.rows)
    assert all(r["shared_with"] is None for r in full.rows)


def test_distractor_docs_read_once_same_as_read_per_language(tmp_path):
    """Files read and language-detected once (read_distractor_files) give the same distractors per language as
    distractor_docs reading and detecting them itself."""
    from heritage_pipeline_eval.ablation import distractor_docs, read_distractor_files

    texts = {"a.md": "# Titre\n\nLe château de Versailles est une ancienne résidence royale située dans les Yvelines, "
                     "en France. Il a été construit sous le règne de Louis XIV.",
             "b.md": "# Title\n\nThe museum holds a large collection of paintings and sculptures from the Dutch "
                     "Golden Age, with works by Rembrandt and Vermeer on display.",
             "c.md": "\ufeff# Autre\n\nLa bibliothèque municipale conserve des manuscrits médiévaux et des "
                     "incunables, consultables sur rendez-vous."}
    paths = []
    for name, t in texts.items():
        (tmp_path / name).write_text(t, encoding="utf-8")
        paths.append(tmp_path / name)
    files = read_distractor_files(paths)
    assert not any(t.startswith("\ufeff") for t, _ in files.values())
    for lang in ("fr", "en", None):
        for budget in (None, 150):
            plain = distractor_docs(paths, lang, budget, tmp_path)
            shared = distractor_docs(paths, lang, budget, tmp_path, files)
            assert [(d.doc_id, d.text) for d in plain] == [(d.doc_id, d.text) for d in shared]
    assert {d.doc_id for d in distractor_docs(paths, "fr", None, tmp_path, files)} == {"distractor/a.md",
                                                                                       "distractor/c.md"}
