"""The heritage golden set: the stored file is what the recipe builds, relevance ranges hold what is asked about,
and the relevance test of the evaluation."""

from __future__ import annotations

import json
from collections import Counter

from heritage_pipeline_eval.heritage_eval import first_relevant_rank, is_relevant
from heritage_pipeline_eval.heritage_golden import LANGS, build

from ..conftest import REPO_ROOT

STORED = REPO_ROOT / "data" / "golden" / "heritage" / "heritage.jsonl"


def test_stored_set_is_the_recipe_output_and_ranges_hold_the_answer(shared_data):
    qs = build(shared_data)
    stored = [json.loads(x) for x in STORED.read_text(encoding="utf-8").splitlines()]
    assert qs == stored  # regenerate with python -m heritage_pipeline_eval.heritage_golden
    fams = Counter(q["family"] for q in qs)
    assert set(fams) == {"identifier", "place_of_named", "type_in_place", "visit"}
    for fam in fams:
        assert {q["lang"] for q in qs if q["family"] == fam} == set(LANGS)
    assert any(q["heldout"] for q in qs) and not all(q["heldout"] for q in qs)
    texts = {}
    for q in qs:
        assert q["relevant"]
        for r in q["relevant"]:
            t = texts.setdefault(r["path"], (shared_data / r["path"]).read_text(encoding="utf-8").lstrip("\ufeff"))
            assert 0 <= r["char_start"] < r["char_end"] <= len(t)
        # the code, name or place asked about is inside at least one relevant range
        assert any(q["answer"] in texts[r["path"]][r["char_start"]:r["char_end"]] for r in q["relevant"]), q["qid"]


def test_relevance_is_same_file_and_overlapping_span():
    rel = {"path": "a/b.csv", "char_start": 100, "char_end": 150}
    assert is_relevant("/x/a/b.csv", 90, 101, rel)
    assert not is_relevant("/x/a/b.csv", 150, 200, rel)  # half-open ranges: touching is not overlapping
    assert not is_relevant("/x/a/c.csv", 100, 150, rel)
    assert first_relevant_rank([("/x/a/c.csv", 100, 150), ("a/b.csv", 120, 130)], [rel]) == 2
    assert first_relevant_rank([], [rel]) is None
