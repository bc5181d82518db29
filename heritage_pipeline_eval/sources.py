"""Evaluations of the heritage source adapters: website main content and heritage entity mentions.

Run ``python -m heritage_pipeline_eval.sources web [--data DIR] [--out DIR]``,
``python -m heritage_pipeline_eval.sources sections [--data DIR] [--out DIR]`` (section types on labelled real
pages, see :mod:`heritage_pipeline_eval.sections`) and
``python -m heritage_pipeline_eval.sources entities [--gold FILE] [--out DIR]``. Both print a Markdown report
and write it (plus JSON) to ``--out`` when given.

``web``: boilerplate removal on the page/gold pairs of ``shared/data/web/boilerplate_pairs`` (Zyte/Scrapinghub
article-extraction benchmark: gold ``*.gold.txt``; Mozilla Readability test pages: gold ``expected.html``, read as
text with lxml). Four extractors on the same pages: ``docling`` (docling's items minus the page furniture the HTML
marks: the structure parser alone), ``trafilatura`` (``trafilatura.extract``, the established peer, default
options), ``trafilatura_title`` (the same text with the headline trafilatura finds in front, as ``ours`` keeps it)
``ours`` (what the website parser keeps, see :mod:`heritage_pipeline.sources.main_content`) and the diagnostic
``ours_no_headline`` (``ours`` minus its first heading, the headline the gold leaves out; not a pipeline output). Scores, per page then averaged over pages (macro):

* token level: bag of lower-cased ``\\w+`` tokens with multiplicity; TP = multiset intersection,
  P = TP / predicted tokens, R = TP / gold tokens, F1 = 2PR / (P + R) (the issue's measure);
* shingle level: the same on word 4-grams, as in the article-extraction-benchmark's ``evaluate.py``
  (Zyte/Scrapinghub, MIT), for comparison with published figures.

``entities``: heritage-institution mentions on a hand-labelled JSONL set (``data/eval/entities/gold.jsonl``). Each
line is a passage (or a conversation of messages) with gold mentions ``{"surface", "entity", "type"}``; the
predicted mentions are what :func:`heritage_pipeline.enrich.mentions.annotate_texts` returns for the passage (coreference
within a conversation, in message order). A predicted mention is a true positive when it resolves to the same
canonical entity as a gold mention of the same passage/message (each gold mention matched at most once); surface
forms are reported but not required to match exactly; entities match by name (case, accents and a leading
article ignored) or by a shared identifier. Micro precision/recall/F1 over all mentions, per language
and per mention kind (name, ISIL, abbreviation, coreference), and type accuracy on the matched mentions.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from heritage_pipeline.core.config import REPO_ROOT  # noqa: E402

DEFAULT_WEB_DATA = (Path(os.environ.get("HERITAGE_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))
                    / "web" / "boilerplate_pairs")
DEFAULT_ENTITY_GOLD = REPO_ROOT / "data" / "eval" / "entities" / "gold.jsonl"
from heritage_pipeline.core.text import WORD_RE as _TOKEN  # noqa: E402  (the one word tokenizer)


# ------------------------------------------------------------------------------------------------------ metrics
@dataclass(frozen=True)
class PRF:
    precision: float
    recall: float
    f1: float
    tp: int
    n_pred: int
    n_gold: int


def _prf(tp: int, n_pred: int, n_gold: int) -> PRF:
    p = tp / n_pred if n_pred else (1.0 if n_gold == 0 else 0.0)
    r = tp / n_gold if n_gold else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return PRF(p, r, f, tp, n_pred, n_gold)


def tokens(text: str) -> list[str]:
    """Lower-cased ``\\w+`` tokens (Unicode word characters), the benchmark's tokenisation."""
    return [t.lower() for t in _TOKEN.findall(text or "")]


def overlap_prf(predicted: str, gold: str, n: int = 1) -> PRF:
    """Multiset precision/recall/F1 of word ``n``-grams of ``predicted`` against ``gold`` (see module docstring)."""
    def grams(t: list[str]) -> Counter:
        return Counter(tuple(t[i : i + n]) for i in range(len(t) - n + 1)) if len(t) >= n else Counter([tuple(t)] if t else [])

    p, g = grams(tokens(predicted)), grams(tokens(gold))
    return _prf(sum((p & g).values()), sum(p.values()), sum(g.values()))


# ---------------------------------------------------------------------------------------------------------- web
@dataclass
class WebPair:
    name: str
    html_path: Path
    gold: str
    lang: str | None = None


def load_web_pairs(root: str | Path) -> list[WebPair]:
    """Page/gold pairs under ``root``: ``scrapinghub/*.html`` + ``*.gold.txt``; ``readability/*/source.html`` +
    ``expected.html`` (text content). Raises FileNotFoundError naming ``root`` when it holds no pair."""
    import lxml.html

    from heritage_pipeline.core.text import decode_bytes

    root = Path(root)
    pairs: list[WebPair] = []
    langs: dict[str, str] = {}
    manifest = root.parent / "MANIFEST.json"
    if manifest.exists():
        for f in json.loads(manifest.read_text(encoding="utf-8")).get("files", []):
            if f.get("pair_id") and f.get("lang"):
                langs[f["pair_id"]] = f["lang"]
    for html in sorted((root / "scrapinghub").glob("*.html")):
        gold = html.with_name(html.stem + ".gold.txt")
        if gold.exists():
            pairs.append(WebPair(html.stem, html, gold.read_text(encoding="utf-8"), langs.get(html.stem)))
    for d in sorted(p for p in (root / "readability").glob("*") if p.is_dir()):
        if (d / "source.html").exists() and (d / "expected.html").exists():
            # decoded by us first: lxml would read bytes without a charset declaration as Latin-1 (mojibake gold)
            gold_html = decode_bytes((d / "expected.html").read_bytes(), name=str(d / "expected.html")).text
            gold = lxml.html.fromstring(gold_html).text_content()
            pairs.append(WebPair(f"readability/{d.name}", d / "source.html", gold, langs.get(f"readability/{d.name}")))
    if not pairs:
        raise FileNotFoundError(f"{root}: no page/gold pairs (expected scrapinghub/*.html + *.gold.txt or readability/*/)")
    return pairs


def _extract_docling(raw: str, name: str) -> str:
    from heritage_pipeline.sources.website import parse_website

    return parse_website(raw, doc_id=name, source_path=name, lang="und", main_content="docling").text


def _extract_ours(raw: str, name: str) -> str:
    """The page text the website parser keeps; its schema.org record chunks (``record`` blocks, built from markup,
    not from page text, e.g. a news site's publisher ``Organization``) are left out: this evaluates main content."""
    from heritage_pipeline.sources.website import parse_website

    doc = parse_website(raw, doc_id=name, source_path=name, lang="und")
    return "".join(doc.text[b.start : b.end] for b in doc.blocks if b.kind != "record")


def _extract_ours_no_headline(raw: str, name: str) -> str:
    """Diagnostic, not what the pipeline outputs: ``ours`` without the page's first heading block (the headline,
    which the website parser keeps as the first section heading and which the gold main content and
    ``trafilatura.extract`` leave out). Separates the headline's cost from any other furniture ``ours`` keeps."""
    from heritage_pipeline.sources.website import parse_website

    doc = parse_website(raw, doc_id=name, source_path=name, lang="und")
    blocks = [b for b in doc.blocks if b.kind != "record"]
    first = next((i for i, b in enumerate(blocks) if b.kind == "heading"), None)
    return "".join(doc.text[b.start : b.end] for i, b in enumerate(blocks) if i != first)


def _extract_trafilatura(raw: str, name: str) -> str:
    import trafilatura

    return trafilatura.extract(raw, include_comments=False, include_tables=True) or ""


def _extract_trafilatura_title(raw: str, name: str) -> str:
    """trafilatura's text with the headline it finds (its metadata ``title``) in front: what ``ours`` outputs too,
    since the website parser keeps the page's H1 as the first section heading, while the gold main content and
    ``trafilatura.extract`` leave the headline out."""
    import trafilatura

    result = trafilatura.bare_extraction(raw, include_comments=False, include_tables=True, with_metadata=True)
    if result is None:
        return ""
    return "\n".join(x for x in ((getattr(result, "title", None) or ""), (getattr(result, "text", None) or "")) if x)


EXTRACTORS: dict[str, Callable[[str, str], str]] = {
    "docling": _extract_docling,
    "trafilatura": _extract_trafilatura,
    "trafilatura_title": _extract_trafilatura_title,
    "ours": _extract_ours,
    "ours_no_headline": _extract_ours_no_headline,
}


def evaluate_web(root: str | Path = DEFAULT_WEB_DATA, extractors: list[str] | None = None) -> dict[str, Any]:
    """Token and 4-gram-shingle P/R/F1 of each extractor on every pair; returns ``{"pages": [...], "mean": {...}}``.

    Times are wall seconds per page (the first docling call includes loading docling).
    """
    from heritage_pipeline.core.text import decode_bytes

    names = extractors or list(EXTRACTORS)
    pages = []
    for pair in load_web_pairs(root):
        raw = decode_bytes(pair.html_path.read_bytes(), name=str(pair.html_path)).text
        row: dict[str, Any] = {"page": pair.name, "lang": pair.lang, "gold_tokens": len(tokens(pair.gold))}
        for ex in names:
            t0 = time.perf_counter()
            out = EXTRACTORS[ex](raw, pair.html_path.name)
            row[ex] = {"token": overlap_prf(out, pair.gold).__dict__, "shingle4": overlap_prf(out, pair.gold, 4).__dict__,
                       "seconds": round(time.perf_counter() - t0, 3)}
        pages.append(row)
    mean = {}
    for ex in names:
        mean[ex] = {level: {m: round(statistics.mean(p[ex][level][m] for p in pages), 4) for m in ("precision", "recall", "f1")}
                    for level in ("token", "shingle4")}
        mean[ex]["seconds_total"] = round(sum(p[ex]["seconds"] for p in pages), 2)
    return {"pages": pages, "mean": mean, "extractors": names, "n_pages": len(pages)}


def web_report(result: dict[str, Any]) -> str:
    names = result["extractors"]
    lines = [f"# Website main-content extraction ({result['n_pages']} pages)", "",
             "Token-level F1 (bag of lower-cased words) per page; P/R/F1 are means over pages.", "",
             "| page | lang | gold tokens | " + " | ".join(f"{n} F1" for n in names) + " |",
             "|---|---|---:|" + "---:|" * len(names)]
    for p in result["pages"]:
        best = max(p[n]["token"]["f1"] for n in names)
        cells = [(f"**{p[n]['token']['f1']:.3f}**" if p[n]["token"]["f1"] == best else f"{p[n]['token']['f1']:.3f}")
                 for n in names]
        lines.append(f"| {p['page']} | {p['lang'] or '?'} | {p['gold_tokens']} | " + " | ".join(cells) + " |")
    lines += ["", "| extractor | token P | token R | token F1 | 4-gram P | 4-gram R | 4-gram F1 | seconds (all pages) |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for n in names:
        m = result["mean"][n]
        lines.append(f"| {n} | {m['token']['precision']:.3f} | {m['token']['recall']:.3f} | {m['token']['f1']:.3f} | "
                     f"{m['shingle4']['precision']:.3f} | {m['shingle4']['recall']:.3f} | {m['shingle4']['f1']:.3f} | "
                     f"{m['seconds_total']:.1f} |")
    pairs = [("ours", "trafilatura"), ("ours", "trafilatura_title"), ("ours_no_headline", "trafilatura")]
    if any(a in names and b in names for a, b in pairs):
        lines.append("")
    for mine, peer in pairs:
        if mine not in names or peer not in names:
            continue
        ours, ref = result["mean"][mine]["token"], result["mean"][peer]["token"]
        dr, dp = ours["recall"] - ref["recall"], ours["precision"] - ref["precision"]
        met = dr >= 0 and dp >= -0.01
        note = " (diagnostic: the headline left out)" if mine == "ours_no_headline" else ""
        lines.append(f"- {mine} vs {peer}{note}: token recall {dr:+.3f}, precision {dp:+.3f} (target: recall not "
                     f"lower, precision within 0.01): {'met' if met else 'NOT met'}")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------------------- entities
def load_entity_gold(path: str | Path = DEFAULT_ENTITY_GOLD) -> list[dict[str, Any]]:
    """The hand-labelled passages (one JSON object per line). ValueError names the file and line when malformed."""
    out = []
    path = Path(path)
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{path}:{n}: not JSON ({exc})") from None
        if "messages" not in item or not isinstance(item["messages"], list):
            raise ValueError(f"{path}:{n}: expected 'messages': [{{'text', 'mentions'}}]")
        out.append(item)
    return out


def _entity_key(name: str) -> str:
    from heritage_pipeline.enrich.names import ARTICLES, fold

    toks = [t for t in re.findall(r"\w+", fold(name))]
    while toks and toks[0] in ARTICLES:
        toks = toks[1:]
    return " ".join(toks)


def same_entity(predicted, gold: dict[str, Any]) -> bool:
    """A predicted mention refers to a gold mention's entity: same name (case, accents and a leading article
    ignored) or a shared identifier (``isil:...``)."""
    if _entity_key(predicted.entity) == _entity_key(gold["entity"]):
        return True
    return bool(set(predicted.ids) & set(gold.get("ids", ())))


def _rule_ner_baseline(texts: list[str]) -> list[list[Any]]:
    """The pipeline's generic rule NER (:func:`heritage_pipeline.enrich.ner.simple_ner`, label ORG) as a baseline:
    every ORG name is a predicted mention of the entity of that name, type ``U`` (it has no types, no
    identifiers, no abbreviations and no coreference)."""
    from heritage_pipeline.enrich.ner import simple_ner
    from heritage_pipeline.enrich.gazetteer import Mention

    out = []
    for t in texts:
        names = simple_ner(t, ("ORG",)).get("ORG", [])
        out.append([Mention(n, 0, 0, n, "U", "name") for n in names])
    return out


def evaluate_entities(gold_path: str | Path = DEFAULT_ENTITY_GOLD, gazetteer=None, method: str = "heritage") -> dict[str, Any]:
    """Micro P/R/F1 of heritage mentions on the gold set (see module docstring). ``method``: ``heritage``
    (:mod:`heritage_pipeline.enrich`) or ``rule_ner`` (the generic ORG rules, :func:`_rule_ner_baseline`)."""
    from heritage_pipeline.enrich.mentions import annotate_texts
    from heritage_pipeline.enrich.gazetteer import default_gazetteer

    gaz = gazetteer or default_gazetteer()
    items = load_entity_gold(gold_path)
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # key -> tp, pred, gold
    type_ok = type_n = 0
    errors: list[dict[str, Any]] = []
    for item in items:
        lang = item.get("lang", "und")
        texts = [m["text"] for m in item["messages"]]
        predicted = annotate_texts(texts, gaz) if method == "heritage" else _rule_ner_baseline(texts)
        for mi, (msg, pred) in enumerate(zip(item["messages"], predicted)):
            gold = list(msg.get("mentions", []))
            unmatched = list(range(len(gold)))
            for p in pred:
                hit = next((gi for gi in unmatched if same_entity(p, gold[gi])), None)
                pkind = "name" if p.kind == "pattern" else p.kind  # a pattern match is a name mention
                for k in ("all", f"lang:{lang}", f"kind:{pkind}"):
                    totals[k][1] += 1
                if hit is None:
                    errors.append({"id": item.get("id"), "message": mi, "error": "false positive", "surface": p.surface,
                                   "predicted": p.entity, "kind": p.kind})
                    continue
                unmatched.remove(hit)
                g = gold[hit]
                for k in ("all", f"lang:{lang}"):
                    totals[k][0] += 1
                totals[f"kind:{pkind}"][0] += 1  # per kind: TP/predicted by predicted kind (precision) ...
                totals[f"goldkind:{g.get('kind', 'name')}"][0] += 1  # ... and TP/gold by gold kind (recall)
                type_n += 1
                type_ok += int(p.type_code == g["type"])
                if p.type_code != g["type"]:
                    errors.append({"id": item.get("id"), "message": mi, "error": "wrong type", "surface": p.surface,
                                   "entity": p.entity, "predicted_type": p.type_code, "gold_type": g["type"]})
            for gi, g in enumerate(gold):
                for k in ("all", f"lang:{lang}", f"goldkind:{g.get('kind', 'name')}"):
                    totals[k][2] += 1
                if gi in unmatched:
                    errors.append({"id": item.get("id"), "message": mi, "error": "missed", "surface": g["surface"],
                                   "entity": g["entity"], "kind": g.get("kind", "name")})
    # per-kind precision counts predictions by predicted kind and recall by gold kind: report them separately
    scores = {}
    for k, (tp, n_pred, n_gold) in sorted(totals.items()):
        s = _prf(tp, n_pred, n_gold)
        scores[k] = {"precision": round(s.precision, 4), "recall": round(s.recall, 4), "f1": round(s.f1, 4),
                     "tp": tp, "predicted": n_pred, "gold": n_gold}
    return {"scores": scores, "type_accuracy": round(type_ok / type_n, 4) if type_n else None,
            "matched": type_n, "passages": len(items), "errors": errors, "gazetteer_entries": len(gaz),
            "gold_file": str(gold_path), "method": method}


def entity_report(result: dict[str, Any]) -> str:
    s = result["scores"]
    lines = [f"# Heritage entity mentions ({result['method']}): {result['gold_file']} ({result['passages']} passages, "
             f"{s['all']['gold']} gold mentions, gazetteer of {result['gazetteer_entries']} entities)", "",
             "| slice | precision | recall | F1 | TP | predicted | gold |", "|---|---:|---:|---:|---:|---:|---:|"]
    for k, v in s.items():
        if k.startswith("kind:"):
            lines.append(f"| predicted {k} | {v['precision']:.3f} | | | {v['tp']} | {v['predicted']} | |")
        elif k.startswith("goldkind:"):
            lines.append(f"| gold {k[4:]} | | {v['recall']:.3f} | | {v['tp']} | | {v['gold']} |")
        else:
            lines.append(f"| {k} | {v['precision']:.3f} | {v['recall']:.3f} | {v['f1']:.3f} | {v['tp']} | {v['predicted']} | {v['gold']} |")
    lines += ["", "Per kind, precision is over the mentions predicted with that kind and recall over the gold mentions of "
              "that kind (a gold abbreviation may be found as a name).", "",
              f"Type accuracy on matched mentions: {result['type_accuracy']}", "", "## Errors", ""]
    for e in result["errors"]:
        lines.append("- " + ", ".join(f"{k}={v}" for k, v in e.items()))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m heritage_pipeline_eval.sources", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    w = sub.add_parser("web", help="main-content extraction vs gold (docling, trafilatura, ours)")
    w.add_argument("--data", default=str(DEFAULT_WEB_DATA), help="boilerplate_pairs folder (default: under "
                   "$HERITAGE_SHARED_DATA, else ../shared/data next to the repository)")
    w.add_argument("--extractors", default=",".join(EXTRACTORS), help="comma-separated: " + ",".join(EXTRACTORS))
    w.add_argument("--out", help="folder for web_eval.md / web_eval.json")
    s = sub.add_parser("sections", help="section_type accuracy and confusion matrix on the labelled real pages")
    s.add_argument("--data", default=None, help="labelled set folder (default data/eval/sections)")
    s.add_argument("--min-confidence", type=float, default=None,
                   help="below it a section is `other` (default: sources.website.section_min_confidence)")
    s.add_argument("--zero-shot", default=None, help="zero-shot model (use-multilingual, minilm) or none "
                   "(default: sources.website.section_zero_shot)")
    s.add_argument("--zero-shot-weight", type=float, default=None,
                   help="its weight in the mixture (default: sources.website.section_zero_shot_weight)")
    s.add_argument("--splits", default=None, help="comma-separated splits to classify and report (default: all)")
    s.add_argument("--fit-calibration", action="store_true",
                   help="fit the confidence calibration on the tuning splits (dev,test,test2,test3) and report it")
    s.add_argument("--out", help="folder for sections_eval.md / sections_eval.json")
    e = sub.add_parser("entities", help="heritage mention precision/recall on the hand-labelled set")
    e.add_argument("--gold", default=str(DEFAULT_ENTITY_GOLD), help="gold JSONL (default: the development set; "
                   "data/eval/entities/test.jsonl is the held-out set)")
    e.add_argument("--method", choices=("heritage", "rule_ner"), default="heritage",
                   help="heritage (enrich/heritage.py) or rule_ner (the generic ORG rules of enrich/ner.py, as a baseline)")
    e.add_argument("--gazetteer", action="append", help="registry file or folder for the gazetteer (repeatable; "
                   "default: the bundled data/raw/csv_registry and data/raw/yaml_instance)")
    e.add_argument("--out", help="folder for entity_eval.md / entity_eval.json")
    args = ap.parse_args(argv)
    if args.what == "web":
        result = evaluate_web(args.data, [x for x in args.extractors.split(",") if x])
        report, stem = web_report(result), "web_eval"
    elif args.what == "sections":
        from .sections import DEFAULT_SECTIONS, calibration_report, evaluate_sections, raw_answers, sections_report

        if args.fit_calibration:
            print(calibration_report(raw_answers(args.data or DEFAULT_SECTIONS, min_confidence=args.min_confidence)))
            return 0
        result = evaluate_sections(args.data or DEFAULT_SECTIONS, args.min_confidence, args.zero_shot,
                                   args.zero_shot_weight,
                                   set(args.splits.split(",")) if args.splits else None)
        report, stem = sections_report(result), "sections_eval"
    else:
        from heritage_pipeline.enrich.gazetteer import default_gazetteer

        result = evaluate_entities(args.gold, default_gazetteer(args.gazetteer) if args.gazetteer else None, args.method)
        report, stem = entity_report(result), "entity_eval"
    print(report)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{stem}.md").write_text(report, encoding="utf-8")
        (out / f"{stem}.json").write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
