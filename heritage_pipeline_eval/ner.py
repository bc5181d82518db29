"""Precision / recall per label of the rule-based NER (heritage_pipeline.enrich.ner.extract_entities) on the hand-labelled
sample data/eval/ner/ner_sample.jsonl (docs, legal and FAQ passages of /work/shared/data; README beside it).

Matching: per passage, the predicted and gold *sets* of (label, name); names compared case-insensitively after
whitespace collapsing and stripping of surrounding punctuation. "strict" = equal names; "partial" = one name
contains the other (counted once per gold entity). Micro-averaged per label, per split (dev = tuned on,
holdout = never tuned on).

Usage: python -m heritage_pipeline_eval.ner [--split dev|holdout|all] [--show-errors]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from heritage_pipeline.enrich.ner import LABELS, evaluate_ner, extract_entities

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "eval" / "ner" / "ner_sample.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--show-errors", action="store_true")
    args = ap.parse_args()
    rows = [json.loads(x) for x in SAMPLE.read_text(encoding="utf-8").splitlines() if x.strip()]
    for split in ("dev", "holdout", "all"):
        part = [r for r in rows if split == "all" or r["split"] == split]
        preds = [extract_entities(r["text"], lang="fr" if r["domain"] == "legal" else "en") for r in part]
        res = evaluate_ner(preds, [r["entities"] for r in part])
        print(f"\n== {split}: {len(part)} passages")
        print(f"{'label':8s} {'gold':>5s} {'pred':>5s} {'P':>6s} {'R':>6s} {'F1':>6s} | {'P~':>6s} {'R~':>6s}  (~ partial)")
        for label in LABELS + ["ALL"]:
            s = res[label]
            print(f"{label:8s} {s['gold']:5d} {s['pred']:5d} {s['precision']:6.3f} {s['recall']:6.3f} {s['f1']:6.3f} | "
                  f"{s['precision_partial']:6.3f} {s['recall_partial']:6.3f}")
        if args.show_errors and split != "all":
            for r, p in zip(part, preds):
                for label in LABELS:
                    g = {x.lower() for x in r["entities"].get(label, [])}
                    q = {x.lower() for x in p.get(label, [])}
                    if g != q:
                        print(f"  {r['id']} {label}: missed {sorted(g - q)} spurious {sorted(q - g)}")


if __name__ == "__main__":
    main()
