"""Write the helper session's hand judgements (``helper_2026-12-03_batch*.py``: per chunk of the ``--write-missing``
file, the phrases judged relevant; every other listed phrase judged not relevant) into ``judged.jsonl``.

The decisions are the judge's, typed by hand chunk by chunk; this script only merges them. Old judgements keep their
provenance under ``judgements`` (one entry per judge); ``candidates`` / ``relevant`` are the union the bench reads.

Usage: python data/eval/keywords/judging/apply_judgements.py MISSING_JSONL DECISIONS_PY
"""
from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

HERE = Path(__file__).parent
JUDGED = HERE.parent / "judged.jsonl"
BY = "helper session 2026-12-03, not the method's author"


def main() -> None:
    """Merge; raises KeyError when a decision names a chunk or phrase not in the missing file."""
    missing = [json.loads(line) for line in Path(sys.argv[1]).read_text(encoding="utf-8").splitlines()]
    dec = runpy.run_path(str(HERE / sys.argv[2]))["DEC"]
    rows = [json.loads(line) for line in JUDGED.read_text(encoding="utf-8").splitlines()]
    by_id = {r["id"]: r for r in rows}
    for i, rel in dec.items():
        m = missing[i]
        bad = set(rel) - set(m["to_judge"])
        if bad:
            raise KeyError(f"chunk {i} {m['id']}: {sorted(bad)} not among its phrases to judge")
        if m["id"] not in by_id:
            by_id[m["id"]] = {k: m[k] for k in ("id", "lang", "split", "source", "text")}
            by_id[m["id"]].update(candidates=[], relevant=[], judgements=[])
            rows.append(by_id[m["id"]])
        r = by_id[m["id"]]
        if "judgements" not in r:
            r["judgements"] = [{"judged_by": r.pop("judged_by") + " (the method's author, 2026-12-02)",
                                "candidates": list(r["candidates"]), "relevant": list(r["relevant"])}]
        new = [j for j in r["judgements"] if j["judged_by"] == BY]
        if not new:
            new = [{"judged_by": BY, "candidates": [], "relevant": []}]
            r["judgements"].append(new[0])
        j = new[0]
        j["candidates"] = sorted(set(j["candidates"]) | set(m["to_judge"]))
        j["relevant"] = sorted(set(j["relevant"]) | set(rel))
        r["candidates"] = sorted(set(r["candidates"]) | set(m["to_judge"]))
        r["relevant"] = sorted(set(r["relevant"]) | set(rel))
    rej_file = HERE / "helper_2026-12-03_rejudge.py"
    for cid, (cands, rel) in runpy.run_path(str(rej_file))["REJ"].items():
        r = by_id[cid]
        if "judgements" not in r:
            r["judgements"] = [{"judged_by": r.pop("judged_by") + " (the method's author, 2026-12-02)",
                                "candidates": list(r["candidates"]), "relevant": list(r["relevant"])}]
        r["judgements"] = [j for j in r["judgements"] if j["judged_by"] != BY + " (blind re-judgement)"]
        r["judgements"].append({"judged_by": BY + " (blind re-judgement)", "candidates": sorted(cands),
                                "relevant": sorted(rel)})
    JUDGED.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"merged {len(dec)} chunks' judgements into {JUDGED}")


if __name__ == "__main__":
    main()
