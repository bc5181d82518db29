"""The plain asset-check functions behind deduped_chunks."""

from __future__ import annotations

from heritage_pipeline.dedup.checks import deduped_checks
from heritage_pipeline.dedup.minhash import DedupRecord

from heritage_pipeline_tests._chunks import make_chunk


def _count(text: str) -> int:
    from heritage_pipeline.core.tokenizer import get_tokenizer

    return get_tokenizer("cl100k").count(text)


def test_checks_pass_and_fail():
    raw = "# T\n\nSome text here.\n"
    good = make_chunk(0, "Some text here.", source="a.md")
    good.spans.char_start, good.spans.char_end = 5, 20
    out = {o.name: o for o in deduped_checks([good], [good], [], {"*": 1200}, {"a.md": raw}, {"a.md": True}, {"a.md": "ok", "b.md": "ok"},
                                             {"b.md": ["all messages under 100 characters"]}, count=_count)}
    assert all(o.passed for o in out.values()), {k: o.metadata for k, o in out.items() if not o.passed}
    bad = make_chunk(1, " ".join(["Other"] * 1300), source="a.md", len_tokens=5)  # 1,300 tokens, stored count stale
    bad.spans.char_start, bad.spans.char_end = 0, 999
    lost = make_chunk(2, "vanished", source="a.md")
    log = [DedupRecord("doc#sec#0009", "c.md", "doc#sec#0000", "a.md", 0.95, "near-duplicate (minhash)")]
    out = {o.name: o for o in deduped_checks([good, bad, lost], [good, bad, bad], log, {"*": 1200}, {"a.md": raw}, {"a.md": True, "d.md": True},
                                             {"a.md": "ok", "d.md": "ok"}, count=_count)}
    assert not out["spans_round_trip"].passed and not out["no_chunk_over_max"].passed and not out["ids_unique"].passed
    assert out["inputs_accounted_for"].metadata["not_accounted"] == ["d.md"] and out["inputs_accounted_for"].severity == "WARN"
    assert not out["dedup_log_complete"].passed and any("disappeared" in p for p in out["dedup_log_complete"].metadata["problems"])


def test_no_chunk_over_max_recounts_and_uses_the_source_type_caps():
    """A stored ``len_tokens`` that lies does not hide an oversize chunk, and a website chunk is held to the
    website cap (800 tokens by default), not the global 1200."""
    from heritage_pipeline.core.config import ChunkingConfig
    from heritage_pipeline.dedup.checks import over_max, source_caps

    caps = source_caps(ChunkingConfig())
    assert caps["website"] == 800 and caps["conversation"] == 1000 and caps["document"] == 1200
    text = "word " * 900  # 900 tokens: over the website cap, under the document cap
    web = make_chunk(0, text, source="page.html", len_tokens=10)  # a stale, too small stored count
    web.meta.source_type = "website"
    doc = make_chunk(1, text, source="a.md", len_tokens=10)
    over = over_max([web, doc], caps, _count)
    assert [(i, cap) for i, _n, cap in over] == [(web.id, 800)]
    assert over[0][1] == _count(web.embedding_text()) > 800


def test_over_max_counts_only_texts_longer_in_bytes_than_the_cap():
    """A token covers at least one UTF-8 byte (cl100k is byte-level BPE): a text of at most ``cap`` bytes is under
    the cap without a recount, a longer one is recounted; the answer equals the full recount either way."""
    from heritage_pipeline.dedup.checks import over_max

    calls = []

    def counting(t: str) -> int:
        calls.append(t)
        return _count(t)

    row = make_chunk(0, "preferred_label: Stadtbibliothek Köln\nsettlement: Köln\nisil_code: DE-38", source="r.csv")
    long_ = make_chunk(1, "ä " * 400, source="a.md")  # 400 characters of 2 bytes + 400 spaces: 1,200 bytes > 1,000
    over = over_max([row, long_], {"*": 1000}, counting)
    assert calls == [long_.embedding_text()]
    full = [(c.id, _count(c.embedding_text()), 1000) for c in (row, long_) if _count(c.embedding_text()) > 1000]
    assert over == full
    dense = make_chunk(2, "".join(chr(0x4E00 + i) for i in range(700)), source="b.md")  # 700 CJK characters, 2,100 bytes
    assert [i for i, _n, _c in over_max([dense], {"*": 600}, _count)] == ([dense.id] if _count(dense.embedding_text()) > 600 else [])


def test_stored_outcomes_are_those_written_for_the_same_data_version_only(tmp_path):
    """A reused deduped_chunks output reports the checks stored with it (failed ones too, with their metadata)."""
    from heritage_pipeline.dedup.checks import stored_outcomes, write_outcomes

    raw = "# T\n\nSome text here.\n"
    bad = make_chunk(1, "Other", source="a.md", len_tokens=5000)
    bad.spans.char_start, bad.spans.char_end = 0, 999
    outcomes = deduped_checks([bad], [bad, bad], [], {"*": 1200}, {"a.md": raw}, {"a.md": True, "d.md": True},
                              {"a.md": "ok", "d.md": "ok"}, count=lambda t: 5000)
    assert not all(o.passed for o in outcomes)
    path = tmp_path / "dedup_log" / "en" / "document.checks.json"
    assert stored_outcomes(path, "v1") is None  # nothing stored yet
    write_outcomes(path, "v1", outcomes)
    assert stored_outcomes(path, "v1") == outcomes
    assert stored_outcomes(path, "v2") is None and stored_outcomes(path, None) is None
    path.write_text("{not json", encoding="utf-8")
    assert stored_outcomes(path, "v1") is None
