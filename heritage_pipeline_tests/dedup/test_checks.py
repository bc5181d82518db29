"""The plain asset-check functions behind deduped_chunks."""

from __future__ import annotations

from heritage_pipeline.dedup.checks import deduped_checks
from heritage_pipeline.dedup.minhash import DedupRecord

from heritage_pipeline_tests._chunks import make_chunk


def test_checks_pass_and_fail():
    raw = "# T\n\nSome text here.\n"
    good = make_chunk(0, "Some text here.", source="a.md")
    good.spans.char_start, good.spans.char_end = 5, 20
    out = {o.name: o for o in deduped_checks([good], [good], [], 1200, {"a.md": raw}, {"a.md": True}, {"a.md": "ok", "b.md": "ok"},
                                             {"b.md": ["all messages under 100 characters"]})}
    assert all(o.passed for o in out.values()), {k: o.metadata for k, o in out.items() if not o.passed}
    bad = make_chunk(1, "Other", source="a.md", len_tokens=5000)
    bad.spans.char_start, bad.spans.char_end = 0, 999
    lost = make_chunk(2, "vanished", source="a.md")
    log = [DedupRecord("doc#sec#0009", "c.md", "doc#sec#0000", "a.md", 0.95, "near-duplicate (minhash)")]
    out = {o.name: o for o in deduped_checks([good, bad, lost], [good, bad, bad], log, 1200, {"a.md": raw}, {"a.md": True, "d.md": True},
                                             {"a.md": "ok", "d.md": "ok"})}
    assert not out["spans_round_trip"].passed and not out["no_chunk_over_max"].passed and not out["ids_unique"].passed
    assert out["inputs_accounted_for"].metadata["not_accounted"] == ["d.md"] and out["inputs_accounted_for"].severity == "WARN"
    assert not out["dedup_log_complete"].passed and any("disappeared" in p for p in out["dedup_log_complete"].metadata["problems"])
