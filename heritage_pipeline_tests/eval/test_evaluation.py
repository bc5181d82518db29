"""Retrieval metrics against hand-computed values and trec_eval definitions; relevance, collapse, ties, budget."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_pipeline_eval.metrics import (GoldenQuestion, RetrievedChunk, answer_within_budget, bootstrap_ci,
    collapse, is_relevant, load_golden, per_query_metrics, per_query_metrics_ranx)


def q(qid="q1", doc="d", gold=(100, 300), answer_start=150, answer="needle"):
    return GoldenQuestion(qid, "question?", "en", doc, gold[0], gold[1], answer, answer_start)


def hit(cid, start, end, doc="d", tokens=100):
    return RetrievedChunk(cid, doc, start, end, tokens)


def test_relevance_contains_and_paragraph_variants():
    g = q()  # answer [150, 156), paragraph [100, 300)
    assert is_relevant(g, hit("a", 140, 160))
    assert is_relevant(g, hit("a", 150, 156))  # exact span is enough
    assert not is_relevant(g, hit("a", 151, 400))  # cuts the answer's first character
    assert not is_relevant(g, hit("a", 100, 155))  # cuts its last character
    assert not is_relevant(g, hit("a", 140, 160, doc="other"))  # right offsets, wrong document
    assert is_relevant(g, hit("a", 290, 500), "paragraph") and not is_relevant(g, hit("a", 290, 500))
    assert not is_relevant(g, hit("a", 300, 500), "paragraph")  # half-open: touching is not overlapping


def test_collapse_keeps_best_rank_and_removes_later_relevant_chunks():
    g = q()
    hits = [hit("x", 0, 10), hit("a", 140, 160), hit("y", 400, 500), hit("b", 120, 200)]
    assert collapse(g, hits) == ["x", "q1::answer", "y"]


def test_metrics_match_hand_computed_values():
    qs = [q("q1"), q("q2"), q("q3"), q("q4")]
    rel, non = hit("r", 140, 160), [hit(f"n{i}", 0, 10 + i) for i in range(12)]
    rankings = {
        "q1": [rel] + non[:9],             # rank 1
        "q2": non[:2] + [rel] + non[2:9],  # rank 3
        "q3": non[:5] + [rel] + non[5:9],  # rank 6: outside hit@5, inside MRR@10 / nDCG@10
        "q4": non[:10] + [rel],            # rank 11: outside every cut-off
    }
    m = per_query_metrics(qs, rankings)
    assert m["hit@5"].tolist() == [1, 1, 0, 0]
    assert m["mrr@10"] == pytest.approx([1, 1 / 3, 1 / 6, 0])
    # binary gain, one relevant unit: nDCG@10 = 1 / log2(rank + 1)
    assert m["ndcg@10"] == pytest.approx([1, 1 / math.log2(4), 1 / math.log2(7), 0])


def test_two_relevant_chunks_count_once():
    g = q()
    m = per_query_metrics([g], {"q1": [hit("n", 0, 5), hit("a", 140, 160), hit("b", 100, 200)]})
    assert m["ndcg@10"][0] == pytest.approx(1 / math.log2(3))  # not > 1, not credited twice
    assert m["mrr@10"][0] == pytest.approx(0.5)


def test_question_with_no_hits_scores_zero():
    m = per_query_metrics([q()], {"q1": []})
    assert [m[k][0] for k in m] == [0, 0, 0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=0, max_size=14), min_size=1, max_size=8))
def test_metrics_equal_trec_eval_definitions(pattern):
    """Random rankings: ranx equals the textbook (trec_eval success_5, recip_rank@10, ndcg_cut_10) formulas."""
    qs = [q(f"q{i}") for i in range(len(pattern))]
    rankings = {}
    expect = {"hit@5": [], "mrr@10": [], "ndcg@10": []}
    for g, flags in zip(qs, pattern):
        hits = [hit(f"{g.qid}-{j}", 140, 160) if f else hit(f"{g.qid}-{j}", 0, 10) for j, f in enumerate(flags)]
        rankings[g.qid] = hits
        first = next((j + 1 for j, f in enumerate(flags[:10]) if f), None)  # relevant chunks collapse: best rank
        expect["hit@5"].append(1.0 if first and first <= 5 else 0.0)
        expect["mrr@10"].append(1.0 / first if first else 0.0)
        expect["ndcg@10"].append(1.0 / math.log2(first + 1) if first else 0.0)
    got = per_query_metrics(qs, rankings)
    for k in expect:
        assert got[k] == pytest.approx(expect[k])


@pytest.mark.slow  # ranx JIT-compiles its metrics on first use (a minute or more on 2 cores)
@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=0, max_size=14), min_size=1, max_size=8), st.sampled_from([3, 10]))
def test_closed_form_metrics_equal_ranx(pattern, k):
    qs = [q(f"q{i}") for i in range(len(pattern))]
    rankings = {g.qid: [hit(f"{g.qid}-{j}", 140, 160) if f else hit(f"{g.qid}-{j}", 0, 10) for j, f in enumerate(flags)]
                for g, flags in zip(qs, pattern)}
    ours, ranx = per_query_metrics(qs, rankings, k=k), per_query_metrics_ranx(qs, rankings, k=k)
    for m in ours:
        assert ours[m] == pytest.approx(ranx[m])


def test_budget_counts_tokens_before_and_inside_the_relevant_chunk():
    g = q()
    hits = [hit("n1", 0, 10, tokens=800), hit("n2", 10, 20, tokens=800), hit("a", 140, 160, tokens=800)]
    assert not answer_within_budget(g, hits)  # whole relevant chunk would end at 2400
    assert answer_within_budget(g, hits, answer_tokens=lambda _q, _h: 400)  # answer ends at token 2000
    assert not answer_within_budget(g, hits, answer_tokens=lambda _q, _h: 401)
    assert answer_within_budget(g, hits[2:])
    assert not answer_within_budget(g, hits[:2])  # no relevant chunk
    assert not answer_within_budget(g, [hit("n", 0, 10, tokens=2000)] + hits[2:], answer_tokens=lambda *_: 1)


def test_bootstrap_ci_is_deterministic_and_brackets_the_mean():
    v = np.random.default_rng(0).random(300)
    lo, hi = bootstrap_ci(v, 500, seed=7)
    assert lo < v.mean() < hi
    assert (lo, hi) == bootstrap_ci(v, 500, seed=7)
    assert bootstrap_ci(np.ones(10), 100) == (1.0, 1.0)
    assert bootstrap_ci(v, 0) == (pytest.approx(v.mean()), pytest.approx(v.mean()))


def test_load_golden_errors_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="golden.jsonl"):
        load_golden(tmp_path)
    (tmp_path / "golden.jsonl").write_text('{"qid": "x"}\n')
    with pytest.raises(ValueError, match="golden.jsonl:1"):
        load_golden(tmp_path)


def test_real_golden_offsets_point_at_the_answers(shared_data):
    for lang in ("en", "fr"):
        qs, docs = load_golden(shared_data / "golden" / lang, limit=200)
        assert len(qs) == 200
        for g in qs:
            text = docs[g.doc_id]
            assert text[g.answer_char_start : g.answer_end] == g.answer_text
            assert g.gold_char_start <= g.answer_char_start and g.answer_end <= g.gold_char_end
