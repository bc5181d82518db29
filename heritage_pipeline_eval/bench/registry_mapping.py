"""Precision and recall of the automatic registry column mapping against hand-labelled real registries.

Reads ``data/eval/registries/labels.yaml`` (true column -> slot per file, a ``tune`` / ``held_out`` split), parses
every file with :func:`heritage_pipeline.sources.registry.parse_registry` with **no configured mapping** (so the
Dutch and Wikidata files, which ``configs/csv_mappings.yaml`` maps by name, are mapped automatically too) and
scores the column -> slot pairs:

* precision = correct pairs / pairs the mapper produced (a column mapped to a slot its label does not give, or a
  column labelled ``null`` that got a slot, is a false positive);
* recall = correct pairs / labelled pairs (columns with a non-null label).

Columns with no value in the file count like the others (they are mapped from their header alone). Prints one line
per file (split, headerless detection right or wrong, P, R, the wrong pairs) and the micro-averaged P/R per split.

Usage: ``.venv/bin/python -m heritage_pipeline_eval.bench.registry_mapping [--labels FILE] [--json]``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from heritage_pipeline.core.text import decode_bytes  # noqa: E402
from heritage_pipeline.sources.registry import MappingsFile, parse_registry  # noqa: E402

DEFAULT_LABELS = REPO / "data" / "eval" / "registries" / "labels.yaml"


def score_file(path: Path, truth: dict[str, str | None]) -> dict:
    """Parse one registry with the automatic mapping only and compare its column -> slot pairs with ``truth``.

    Returns:
        ``{"predicted", "tp", "fp", "fn", "wrong": [...], "headerless", "rows"}`` (counts of column pairs).
    """
    text = decode_bytes(path.read_bytes(), name=str(path)).text
    doc, _ = parse_registry(text, doc_id=path.name, source_path=str(path), lang="und", mappings=MappingsFile())
    pred: dict[str, str] = doc.meta["column_mapping"]
    tp = sum(1 for c, s in pred.items() if truth.get(c) == s)
    fp = len(pred) - tp
    fn = sum(1 for c, s in truth.items() if s is not None and pred.get(c) != s)
    wrong = [f"{c}: {pred.get(c)} (true {truth.get(c)})" for c in sorted(set(pred) | {c for c, s in truth.items() if s})
             if pred.get(c) != truth.get(c)]
    return {"predicted": pred, "tp": tp, "fp": fp, "fn": fn, "wrong": wrong, "headerless": bool(doc.meta["headerless"]),
            "rows": len(doc.sections), "registry_type": doc.meta["registry_type"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--labels", default=str(DEFAULT_LABELS))
    ap.add_argument("--json", action="store_true", help="print the per-file results as JSON too")
    args = ap.parse_args(argv)
    labels = yaml.safe_load(Path(args.labels).read_text(encoding="utf-8"))
    data = REPO / "data"
    totals: dict[str, list[int]] = {}
    results = {}
    for rel, entry in labels["registries"].items():
        r = score_file(data / rel, entry["columns"])
        split = entry["split"]
        t = totals.setdefault(split, [0, 0, 0, 0, 0])
        t[0] += r["tp"]
        t[1] += r["fp"]
        t[2] += r["fn"]
        t[3] += int(r["headerless"] == bool(entry.get("headerless")))
        t[4] += 1
        results[rel] = r
        p = r["tp"] / (r["tp"] + r["fp"]) if r["tp"] + r["fp"] else 1.0
        rc = r["tp"] / (r["tp"] + r["fn"]) if r["tp"] + r["fn"] else 1.0
        hl = "ok" if r["headerless"] == bool(entry.get("headerless")) else "WRONG"
        print(f"{split:8s} {rel}: {r['rows']} rows, {r['registry_type']}, headerless {hl}, P {p:.3f} R {rc:.3f}"
              + (f"; wrong: {'; '.join(r['wrong'])}" if r["wrong"] else ""))
    for split, (tp, fp, fn, hl_ok, n) in sorted(totals.items(), key=lambda kv: kv[0] != "tune"):
        p = tp / (tp + fp) if tp + fp else 1.0
        rc = tp / (tp + fn) if tp + fn else 1.0
        print(f"{split}: {n} files, {tp + fn} labelled pairs, precision {p:.3f}, recall {rc:.3f}, "
              f"headerless detected right {hl_ok}/{n}")
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
