"""Section-type evaluation on the labelled set of real institution pages (``data/eval/sections``).

Each line of ``labels.jsonl`` names a heading in a saved page (``page``, ``char_start`` of its line, ``heading``,
``heading_level``, ``lang``, ``site``, ``split`` dev|test by site, gold ``label``). The section of a labelled heading
is the raw text from its line to the next labelled heading of the same page; its body is that text without markup
(HTML tags, Markdown heading marks, template syntax), its heading path the enclosing labelled headings by level.
The classifier (:func:`heritage_pipeline.sources.section_types.classify_sections`) gets the heading path and the
body of every labelled section of a page in one call, with the configured minimum confidence and zero-shot
settings and the page kind (:func:`~heritage_pipeline.sources.section_types.page_kind` of the page's labelled
headings, declared schema.org types and citation meta tags, documentation signals of the raw page and its file name), as the website parser gives them; ``other`` is an answer like any other. Reported per split: accuracy, per-language accuracy, the confusion matrix (rows gold, columns predicted), the
accuracy per confidence band and the errors.
"""

from __future__ import annotations

import html as htmllib
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from heritage_pipeline.core.config import REPO_ROOT

DEFAULT_SECTIONS = REPO_ROOT / "data" / "eval" / "sections"
_TAG = re.compile(r"<[^>]*>", re.S)
_MD_MARK = re.compile(r"^\s{0,3}#{1,6}\s*|^\s*[-*+]\s+|[*_`]+", re.M)
_FRONT = re.compile(r"\A---\n.*?\n---\n", re.S)


def _visible(raw: str) -> str:
    """Markup-free text of a page fragment: scripts/styles dropped, tags removed, entities decoded."""
    raw = re.sub(r"<(script|style)\b.*?</\1\s*>", " ", raw, flags=re.S | re.I)
    text = htmllib.unescape(_TAG.sub(" ", raw))
    text = _MD_MARK.sub(" ", text)
    return " ".join(text.split())


def load_sections(root: str | Path = DEFAULT_SECTIONS) -> list[dict[str, Any]]:
    """The labelled sections with ``anchors`` and ``body`` (module docstring). ValueError names a bad line."""
    root = Path(root)
    labels = []
    for n, line in enumerate((root / "labels.jsonl").read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            rec["char_start"] = int(rec["char_start"])
        except (ValueError, KeyError) as exc:
            raise ValueError(f"{root / 'labels.jsonl'}:{n}: {exc}") from None
        labels.append(rec)
    by_page: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for rec in labels:
        by_page[rec["page"]].append(rec)
    out = []
    for page, recs in by_page.items():
        raw = (root / page).read_text(encoding="utf-8")
        recs.sort(key=lambda r: r["char_start"])
        stack: list[tuple[int, str]] = []
        for i, rec in enumerate(recs):
            start = rec["char_start"]
            end = recs[i + 1]["char_start"] if i + 1 < len(recs) else len(raw)
            line_end = raw.find("\n", start)
            body_start = line_end + 1 if 0 <= line_end < end else end
            level = int(rec.get("heading_level") or 1)
            while stack and stack[-1][0] >= level:
                stack.pop()
            heading = " ".join(rec["heading"].split())
            anchors = [t for _, t in stack] + [heading]
            stack.append((level, heading))
            out.append({**rec, "anchors": anchors, "body": _visible(raw[body_start:end])})
    return out


def evaluate_sections(root: str | Path = DEFAULT_SECTIONS, min_confidence: float | None = None,
                      zero_shot: str | None = None, zero_shot_weight: float | None = None,
                      splits: set[str] | None = None) -> dict[str, Any]:
    """Accuracy and confusion matrices per split (module docstring).

    Args:
        root: the labelled set folder.
        min_confidence: default the configured ``sources.website.section_min_confidence``.
        zero_shot: zero-shot model name or ``none``; default ``sources.website.section_zero_shot``.
        zero_shot_weight: default ``sources.website.section_zero_shot_weight``.
        splits: only the sections of these splits are classified and reported (default all), e.g. to tune on the
            earlier rounds without looking at a held-out one.

    Returns:
        ``{"min_confidence", "zero_shot", "zero_shot_weight", "splits": {split: {"n", "correct", "accuracy",
        "by_lang", "confusion", "errors", "reliability"}}}``; ``reliability`` is the accuracy of the answers per
        confidence band (``other`` answers in a row of their own), to see whether a higher confidence is more often
        right.

    Raises:
        ValueError: a bad line in ``labels.jsonl`` (file and line named), or the zero-shot model cannot load.
    """
    from heritage_pipeline.core.config import load_chunking_config
    from heritage_pipeline.sources.section_types import CATEGORIES, classify_sections

    web = load_chunking_config().sources.website
    min_confidence = web.section_min_confidence if min_confidence is None else min_confidence
    zero_shot = web.section_zero_shot if zero_shot is None else zero_shot
    zero_shot_weight = web.section_zero_shot_weight if zero_shot_weight is None else zero_shot_weight
    result: dict[str, Any] = {"min_confidence": min_confidence, "zero_shot": zero_shot,
                              "zero_shot_weight": zero_shot_weight, "splits": {}}
    decided = []
    kinds: dict[str, str] = {}
    for page, recs, kind, is_news in _labelled_pages(root, splits):
        kinds[page] = kind
        answers = classify_sections([(r["anchors"], r["body"]) for r in recs], min_confidence=min_confidence,
                                    page=kind, page_is_news=is_news, zero_shot=zero_shot,
                                    zero_shot_weight=zero_shot_weight)
        decided.extend(zip(recs, answers))
    result["article_pages"] = sorted(p for p, k in kinds.items() if k == "article")
    result["documentation_pages"] = sorted(p for p, k in kinds.items() if k == "documentation")
    for rec, (pred, conf) in decided:
        split = result["splits"].setdefault(rec["split"], {"n": 0, "correct": 0, "by_lang": {}, "confusion": {},
                                                           "errors": [], "reliability": {}})
        split["n"] += 1
        ok = pred == rec["label"]
        split["correct"] += ok
        lang = split["by_lang"].setdefault(rec["lang"], [0, 0])
        lang[0] += ok
        lang[1] += 1
        row = split["confusion"].setdefault(rec["label"], {c: 0 for c in CATEGORIES})
        row[pred] += 1
        band = split["reliability"].setdefault(_band(pred, conf), [0, 0])
        band[0] += ok
        band[1] += 1
        if not ok:
            split["errors"].append({"page": rec["page"], "heading": rec["heading"], "gold": rec["label"],
                                    "predicted": pred, "confidence": conf})
    for split in result["splits"].values():
        split["accuracy"] = round(split["correct"] / split["n"], 4) if split["n"] else None
        split["by_lang"] = {k: {"correct": c, "n": n, "accuracy": round(c / n, 4)} for k, (c, n) in sorted(split["by_lang"].items())}
        split["reliability"] = {k: {"correct": c, "n": n, "accuracy": round(c / n, 4)}
                                for k, (c, n) in sorted(split["reliability"].items())}
    return result


def _labelled_pages(root: str | Path, splits: set[str] | None = None):
    """``(page, its labelled sections, page kind, is_news)`` per labelled page of the chosen splits, the page kind as
    the website parser decides it (labelled headings, declared schema.org types, citation meta, raw page)."""
    from heritage_pipeline.sources.section_types import page_kind
    from heritage_pipeline.sources.website import _CITATION_META, _declared_types

    by_page: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for rec in load_sections(root):
        if splits is None or rec["split"] in splits:
            by_page[rec["page"]].append(rec)
    for page, recs in by_page.items():
        raw = (Path(root) / page).read_text(encoding="utf-8")
        kind, is_news = page_kind([r["heading"] for r in recs], _declared_types(raw),
                                  citation_meta=bool(_CITATION_META.search(raw)), raw=raw, source_path=page)
        yield page, recs, kind, is_news


TUNING_SPLITS = frozenset({"dev", "test", "test2", "test3"})  # the splits the rules and the calibration are fitted on


def raw_answers(root: str | Path = DEFAULT_SECTIONS, splits: set[str] | frozenset[str] = TUNING_SPLITS,
                min_confidence: float | None = None) -> list[dict[str, Any]]:
    """The cue rules' answers with their raw confidence (:func:`~heritage_pipeline.sources.section_types.raw_rule_decisions`)
    for every labelled section of ``splits``: ``{"site", "split", "gold", "answer", "raw"}`` each."""
    from heritage_pipeline.core.config import load_chunking_config
    from heritage_pipeline.sources.section_types import raw_rule_decisions

    if min_confidence is None:
        min_confidence = load_chunking_config().sources.website.section_min_confidence
    out = []
    for _page, recs, kind, is_news in _labelled_pages(root, set(splits)):
        for r, (ans, raw) in zip(recs, raw_rule_decisions([(x["anchors"], x["body"]) for x in recs],
                                                          min_confidence=min_confidence, page=kind,
                                                          page_is_news=is_news)):
            out.append({"site": r["site"], "split": r["split"], "gold": r["label"], "answer": ans, "raw": raw})
    return out


def fit_calibration(answers: list[dict[str, Any]]) -> dict[str, tuple[float, ...]]:
    """The calibration table of :data:`~heritage_pipeline.sources.section_types.CALIBRATION` from raw answers.

    Per kind (``type`` answers, ``other`` answers) and band (:func:`~heritage_pipeline.sources.section_types.calibration_band`):
    the share of right answers, Laplace-smoothed ``(right + 1) / (n + 2)``, then made non-decreasing over the bands
    by pooling adjacent violators (weighted by n), so a higher raw confidence never reports a lower one.

    Args:
        answers: :func:`raw_answers` records.

    Returns:
        ``{"type": (p per band), "other": (p per band)}``, rounded to 3 decimals.
    """
    from heritage_pipeline.sources.section_types import CALIBRATION_EDGES, calibration_band

    out = {}
    for kind, edges in CALIBRATION_EDGES.items():
        right, n = [0] * (len(edges) + 1), [0] * (len(edges) + 1)
        for a in answers:
            k, b = calibration_band(a["answer"], a["raw"])
            if k == kind:
                n[b] += 1
                right[b] += a["answer"] == a["gold"]
        # blocks of (weight, value), merged while a block is below the one before it (pool adjacent violators)
        blocks: list[list[float]] = []
        for r, m in zip(right, n):
            blocks.append([m + 2, (r + 1) / (m + 2), 1])
            while len(blocks) > 1 and blocks[-1][1] < blocks[-2][1]:
                w2, v2, c2 = blocks.pop()
                w1, v1, c1 = blocks.pop()
                blocks.append([w1 + w2, (w1 * v1 + w2 * v2) / (w1 + w2), c1 + c2])
        out[kind] = tuple(round(v, 3) for _w, v, c in blocks for _ in range(c))
    return out


def calibration_report(answers: list[dict[str, Any]]) -> str:
    """Markdown: the fitted table, and a reliability table of the calibrated confidence fitted leaving each site out
    (the confidence a site's answers get from a calibration fitted on the other sites), per band of that confidence:
    answers, right answers, mean calibrated confidence -- close means calibrated out of sample."""
    from heritage_pipeline.sources.section_types import calibration_band

    table = fit_calibration(answers)
    loso = []
    for site in sorted({a["site"] for a in answers}):
        fit = fit_calibration([a for a in answers if a["site"] != site])
        for a in answers:
            if a["site"] == site:
                k, b = calibration_band(a["answer"], a["raw"])
                loso.append((fit[k][b], a["answer"] == a["gold"]))
    lines = ["# Section-type confidence calibration (cue rules, tuning splits)", "",
             f"CALIBRATION = {table!r}", "", "Leave-one-site-out reliability of the calibrated confidence:", "",
             "| calibrated confidence | answers | right | accuracy | mean confidence |", "|---|---:|---:|---:|---:|"]
    for lo, hi in ((0.0, 0.5), (0.5, 0.75), (0.75, 1.01)):
        sel = [(p, ok) for p, ok in loso if lo <= p < hi]
        if sel:
            lines.append(f"| {lo:.2f}-{min(hi, 1.0):.2f} | {len(sel)} | {sum(ok for _, ok in sel)} | "
                         f"{sum(ok for _, ok in sel) / len(sel):.3f} | {sum(p for p, _ in sel) / len(sel):.3f} |")
    brier = sum((p - ok) ** 2 for p, ok in loso) / len(loso)
    lines += ["", f"Brier score (leave-one-site-out): {brier:.4f} over {len(loso)} answers"]
    return "\n".join(lines)


CONFIDENCE_BANDS = (0.5, 0.75)  # upper edges of the lower confidence bands of the reliability table


def _band(pred: str, conf: float) -> str:
    """Reliability-table row of an answer: ``other`` answers apart, the others by confidence band."""
    if pred == "other":
        return "other"
    lo = 0.0
    for hi in CONFIDENCE_BANDS:
        if conf < hi:
            return f"{lo:.2f}-{hi:.2f}"
        lo = hi
    return f"{lo:.2f}-1.00"


def sections_report(result: dict[str, Any]) -> str:
    """Markdown report of :func:`evaluate_sections`: per split accuracy, per language, confusion matrix, errors."""
    from heritage_pipeline.sources.section_types import CATEGORIES

    zs = result.get("zero_shot", "none")
    how = "cue rules" if zs in (None, "none") else f"cue rules + zero-shot {zs} (weight {result['zero_shot_weight']})"
    lines = [f"# Section types on labelled real pages ({how}, min confidence {result['min_confidence']})", ""]
    for kind in ("article", "documentation"):
        pages = result.get(f"{kind}_pages") or []
        lines += [f"Pages decided `{kind}` ({len(pages)}): " + (", ".join(p.split("/", 2)[-1] for p in pages) or "none"), ""]
    for name in sorted(result["splits"], key=lambda s: s != "test"):
        s = result["splits"][name]
        langs = ", ".join(f"{k} {v['accuracy']:.3f} ({v['correct']}/{v['n']})" for k, v in s["by_lang"].items())
        lines += [f"## {name}: accuracy {s['accuracy']:.3f} ({s['correct']}/{s['n']})", "", f"Per language: {langs}", "",
                  "| gold \\ predicted | " + " | ".join(CATEGORIES) + " | n |", "|---|" + "---:|" * (len(CATEGORIES) + 1)]
        for gold in CATEGORIES:
            row = s["confusion"].get(gold)
            if row:
                lines.append(f"| {gold} | " + " | ".join(str(row[c]) for c in CATEGORIES) + f" | {sum(row.values())} |")
        lines += ["", "Accuracy by confidence (non-`other` answers by band; `other` answers apart): " + ", ".join(
            f"{k} {v['accuracy']:.2f} ({v['correct']}/{v['n']})" for k, v in s.get("reliability", {}).items())]
        lines += ["", "Errors:", ""] + [f"- {e['page'].split('/')[-1]}: {e['heading'][:60]!r} gold {e['gold']}, "
                                          f"predicted {e['predicted']} ({e['confidence']:.2f})" for e in s["errors"]] + [""]
    return "\n".join(lines)
