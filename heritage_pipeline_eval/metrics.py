"""Retrieval evaluation on golden sets: relevance of chunks, hit@5 / MRR@10 / nDCG@10 with ranx, bootstrap CIs.

Golden format (``<dir>/golden.jsonl`` + ``<dir>/docs/<doc_id>.md``): ``qid, question, lang, doc_id,
gold_char_start, gold_char_end, answer_text, answer_char_start`` (code-point offsets into the document).

Relevance. A retrieved chunk is relevant to a question when it comes from the question's document and its span
contains the whole answer span ``[answer_char_start, answer_char_start + len(answer_text))`` (``contains``); the
variant ``paragraph`` counts a chunk relevant when its span overlaps the gold paragraph
``[gold_char_start, gold_char_end)``.

Collapsing and ties. The judged unit is the answer (one per question): all relevant chunks in a ranking collapse to
one item ``"<qid>::answer"`` at the best rank; other chunks stay as themselves (chunk ids never collide with the
unit id). Rankings are turned into strictly decreasing scores (``k - rank``), so ranx sees no ties; retrievers
return hits sorted by score, then by chunk id ascending (the deterministic tie-break).

Metrics (closed form for one relevant unit per question, equal to ranx's, :func:`per_query_metrics`): ranx
``hit_rate@5`` (share of questions with the answer in the top 5; = trec_eval ``success_5``),
``mrr@10`` and ``ndcg@10`` (Järvelin & Kekäläinen gain, binary relevance; = trec_eval ``ndcg_cut_10``).
Confidence intervals: percentile bootstrap over questions (``bootstrap_samples`` resamples, fixed seed).
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

METRICS = ("hit@5", "mrr@10", "ndcg@10")
_RANX = {"hit@5": "hit_rate@5", "mrr@10": "mrr@10", "ndcg@10": "ndcg@10"}


@dataclass(frozen=True)
class GoldenQuestion:
    qid: str
    question: str
    lang: str
    doc_id: str
    gold_char_start: int
    gold_char_end: int
    answer_text: str
    answer_char_start: int

    @property
    def answer_end(self) -> int:
        return self.answer_char_start + len(self.answer_text)


@dataclass(frozen=True)
class RetrievedChunk:
    """A ranked hit: chunk id, its document, span and token count (for the context-budget metric)."""

    id: str
    doc_id: str
    char_start: int
    char_end: int
    len_tokens: int
    score: float = 0.0


def load_golden(folder: str | Path, limit: int | None = None) -> tuple[list[GoldenQuestion], dict[str, str]]:
    """Questions and documents of one language folder. Raises FileNotFoundError / ValueError naming the file."""
    folder = Path(folder)
    path = folder / "golden.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"{path}: golden set not found (expected {folder}/golden.jsonl and {folder}/docs/)")
    questions = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            questions.append(GoldenQuestion(**json.loads(line)))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{path}:{n}: invalid golden line ({exc})") from None
    docs: dict[str, str] = {}
    for q in questions:
        if q.doc_id not in docs:
            doc_path = folder / "docs" / f"{q.doc_id}.md"
            try:
                docs[q.doc_id] = doc_path.read_text(encoding="utf-8")
            except OSError as exc:
                raise FileNotFoundError(f"{doc_path}: document of question {q.qid} not readable ({exc})") from None
    if limit is not None and len(questions) > limit:
        step = len(questions) / limit  # a fixed, evenly spaced sample keeps every document represented
        questions = [questions[int(i * step)] for i in range(limit)]
    return questions, docs


def is_relevant(q: GoldenQuestion, hit: RetrievedChunk, variant: str = "contains") -> bool:
    """Relevance rule of the module docstring (``contains`` the answer span, or ``paragraph`` overlap)."""
    if hit.doc_id != q.doc_id:
        return False
    if variant == "paragraph":
        return hit.char_start < q.gold_char_end and q.gold_char_start < hit.char_end
    return hit.char_start <= q.answer_char_start and q.answer_end <= hit.char_end


def collapse(q: GoldenQuestion, hits: list[RetrievedChunk], variant: str = "contains") -> list[str]:
    """Ranked unit ids: relevant chunks collapse to ``<qid>::answer`` at their best rank; duplicates removed."""
    out: list[str] = []
    seen: set[str] = set()
    for h in hits:
        unit = f"{q.qid}::answer" if is_relevant(q, h, variant) else h.id
        if unit not in seen:
            seen.add(unit)
            out.append(unit)
    return out


def answer_within_budget(q: GoldenQuestion, hits: list[RetrievedChunk], budget_tokens: int = 2000,
                         variant: str = "contains",
                         answer_tokens: Callable[[GoldenQuestion, RetrievedChunk], int] | None = None) -> bool:
    """True when the answer lies inside the first ``budget_tokens`` tokens of the ranked chunks laid end to end.

    Chunks ranked before the first relevant one count whole (``len_tokens``: context prefix + text, cl100k). In
    the first relevant chunk, the tokens up to the end of the answer count: ``answer_tokens(q, hit)`` when given
    (the caller knows the chunk text), else the whole chunk (a stricter bound). False when no relevant chunk is
    ranked. This is the context-budget metric: bigger chunks reach the answer later in the reader's window.
    """
    used = 0
    for h in hits:
        if is_relevant(q, h, variant):
            return used + (answer_tokens(q, h) if answer_tokens else h.len_tokens) <= budget_tokens
        used += h.len_tokens
        if used >= budget_tokens:
            return False
    return False


def per_query_metrics(questions: list[GoldenQuestion], rankings: dict[str, list[RetrievedChunk]],
                      variant: str = "contains", k: int = 10) -> dict[str, np.ndarray]:
    """Per-question hit@5, MRR@10, nDCG@10 (arrays in ``questions`` order), the values ranx gives.

    Each question has exactly one relevant unit (the collapsed answer, binary relevance), so with ``r`` its
    1-based rank among the collapsed top-``k`` units: hit@5 = [r <= 5], MRR@10 = 1/r, nDCG@10 = 1/log2(r + 1)
    (the ideal DCG is 1), all 0 when the answer is not ranked. Computed here in closed form rather than with ranx
    because ranx's conversion of each run to numba typed containers plus its JIT compilation took 327 of the 441 s
    of the bundled ablation (measured with cProfile on the 2-core machine); ``tests`` check the values equal
    :func:`per_query_metrics_ranx` on random rankings.

    Args:
        questions: the golden questions.
        rankings: question id -> ranked chunks (best first).
        variant: relevance variant (``contains`` or ``paragraph``, :func:`is_relevant`).
        k: cut-off of the ranking (units beyond it are not seen).

    Returns:
        ``{"hit@5", "mrr@10", "ndcg@10"}`` -> float arrays of ``len(questions)``.
    """
    hit = np.zeros(len(questions))
    mrr = np.zeros(len(questions))
    ndcg = np.zeros(len(questions))
    for i, q in enumerate(questions):
        units = collapse(q, rankings.get(q.qid, [])[:k], variant)
        answer = f"{q.qid}::answer"
        if answer in units:
            r = units.index(answer) + 1
            hit[i] = 1.0 if r <= 5 else 0.0
            mrr[i] = 1.0 / r if r <= 10 else 0.0
            ndcg[i] = 1.0 / np.log2(r + 1) if r <= 10 else 0.0
    return {"hit@5": hit, "mrr@10": mrr, "ndcg@10": ndcg}


def per_query_metrics_ranx(questions: list[GoldenQuestion], rankings: dict[str, list[RetrievedChunk]],
                           variant: str = "contains", k: int = 10) -> dict[str, np.ndarray]:
    """The same per-question metrics computed by ranx (the reference :func:`per_query_metrics` is checked
    against)."""
    from ranx import Qrels, Run, evaluate

    qrels = {q.qid: {f"{q.qid}::answer": 1} for q in questions}
    run: dict[str, dict[str, float]] = {}
    for q in questions:
        units = collapse(q, rankings.get(q.qid, [])[:k], variant)
        run[q.qid] = {u: float(len(units) - r) for r, u in enumerate(units)} or {f"{q.qid}::none": 0.0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = evaluate(Qrels(qrels), Run(run), [_RANX[m] for m in METRICS], return_mean=False, make_comparable=True)
    # ranx orders per-query arrays by sorted query id; map back to the questions' order
    order = {qid: i for i, qid in enumerate(sorted(qrels))}
    idx = np.array([order[q.qid] for q in questions])
    return {m: np.asarray(scores[_RANX[m]], dtype=float)[idx] for m in METRICS}


def bootstrap_ci(values: np.ndarray, samples: int = 1000, seed: int = 13, alpha: float = 0.05) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean of ``values`` (resampling questions with replacement)."""
    if len(values) == 0:
        return (float("nan"), float("nan"))
    if samples <= 0:
        m = float(np.mean(values))
        return (m, m)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(values), size=(samples, len(values)))
    means = values[idx].mean(axis=1)
    return float(np.quantile(means, alpha / 2)), float(np.quantile(means, 1 - alpha / 2))
