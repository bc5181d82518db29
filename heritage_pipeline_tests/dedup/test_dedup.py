"""Dedup: exact + MinHash LSH with exact-Jaccard confirmation, survivor rule, and nothing dropped without a log row."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from heritage_pipeline.core.config import ChunkingConfig, DedupConfig
from heritage_pipeline.dedup.minhash import (REASON_EXACT, REASON_NEAR, DedupStats, check_dedup_accounting,
    content_hash, dedup_chunks, jaccard, log_to_table, shingle_hashes, shingles)
from heritage_pipeline.stages import dedup_stage

from heritage_pipeline_tests._chunks import make_chunk

VOCAB = [f"w{i}" for i in range(400)]


def _text(rng: random.Random, n: int = 120) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(n))


def test_shingle_hash_sets_give_the_same_jaccard_as_string_shingles():
    rng = random.Random(1)
    for _ in range(20):
        a, b = _text(rng, 60), _text(rng, 60)
        b = " ".join(a.split()[:40] + b.split()[:20])
        assert jaccard(shingle_hashes(a, 5), shingle_hashes(b, 5)) == pytest.approx(jaccard(shingles(a, 5), shingles(b, 5)))


def test_content_hash_ignores_case_and_whitespace_only():
    assert content_hash("Hello  World\n") == content_hash("hello world")
    assert content_hash("Hello World.") != content_hash("Hello World")


def test_cjk_text_is_shingled_per_character():
    assert len(shingle_hashes("数据集成功发布到全球生物多样性信息网络", 5)) == 19 - 5 + 1


def test_survivor_is_higher_tier_then_longer_then_smaller_id():
    rng = random.Random(2)
    base = _text(rng)
    words = base.split()
    cs = [make_chunk(0, base), make_chunk(1, " ".join(words[:-1])), make_chunk(2, base.upper(), tier="TIER_1_AUTHORITATIVE"),
          make_chunk(3, _text(rng))]
    kept, log = dedup_chunks(cs, DedupConfig())
    assert [c.id for c in kept] == [cs[2].id, cs[3].id]
    by_dropped = {r.dropped_id: r for r in log}
    assert by_dropped[cs[0].id].reason == REASON_EXACT and by_dropped[cs[0].id].similarity == 1.0
    assert by_dropped[cs[1].id].reason == REASON_NEAR and by_dropped[cs[1].id].similarity >= 0.9
    assert {d["id"] for d in cs[2].meta.duplicates} == {cs[0].id, cs[1].id}
    # equal tier: the longer text survives
    kept2, _ = dedup_chunks([make_chunk(5, " ".join(words[:-1])), make_chunk(6, base)], DedupConfig())
    assert [c.id for c in kept2] == ["doc#sec#0006"]


def test_no_chain_drops_every_drop_has_a_direct_pair_above_threshold():
    # A ~ B and B ~ C but A !~ C: C must survive (it is not a near-duplicate of the kept A)
    rng = random.Random(3)
    words = _text(rng, 400).split()
    a = " ".join(words[:380])
    b = " ".join(words[10:390])
    c = " ".join(words[20:400])
    cs = [make_chunk(0, a + " extra words here to be longest"), make_chunk(1, b), make_chunk(2, c)]
    sa, sb, sc = (shingle_hashes(x.text, 5) for x in cs)
    assert jaccard(sa, sb) >= 0.9 and jaccard(sb, sc) >= 0.9 and jaccard(sa, sc) < 0.9
    kept, log = dedup_chunks(cs, DedupConfig())
    kept_text = {c.id: c.text for c in kept}
    for r in log:
        s_drop = shingle_hashes(next(x.text for x in cs if x.id == r.dropped_id), 5)
        s_keep = shingle_hashes(kept_text[r.kept_id], 5)
        assert jaccard(s_drop, s_keep) >= 0.9
    assert cs[2].id in kept_text


def test_below_threshold_pairs_are_kept_and_penalised():
    rng = random.Random(4)
    words = _text(rng, 300).split()
    a = " ".join(words)
    b = " ".join(words[:270] + _text(rng, 30).split())
    j = jaccard(shingle_hashes(a, 5), shingle_hashes(b, 5))
    assert 0.8 <= j < 0.9
    kept, log = dedup_chunks([make_chunk(0, a), make_chunk(1, b)], DedupConfig())
    assert len(kept) == 2 and not log
    assert kept[0].quality.dup_penalty == pytest.approx(j, abs=1e-4)


chunk_lists = st.lists(
    st.tuples(st.integers(0, 5), st.integers(0, 3), st.sampled_from(["TIER_1_AUTHORITATIVE", "TIER_4_INFERRED"])),
    min_size=0, max_size=25)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunk_lists, st.floats(0.6, 1.0))
# a similarity just above the threshold is logged rounded to 4 decimals (0.80952 -> 0.8095 < 0.809519): found by CI
@example(spec=[(0, 0, "TIER_1_AUTHORITATIVE")] * 10 + [(0, 2, "TIER_1_AUTHORITATIVE")], threshold=0.8095190564844041)
def test_nothing_is_dropped_without_a_dedup_log_row(spec, threshold):
    """Property: for any mix of exact duplicates, light edits and distinct texts, every input chunk is kept or
    logged exactly once, each log row names a kept survivor with similarity >= threshold, and meta.duplicates
    mirrors the log."""
    rng = random.Random(len(spec))
    bases = [_text(rng, 80) for _ in range(6)]
    cs = []
    for i, (b, edit, tier) in enumerate(spec):
        words = bases[b].split()
        for _ in range(edit):
            words[rng.randrange(len(words))] = rng.choice(VOCAB)
        cs.append(make_chunk(i, " ".join(words), tier=tier))
    kept, log = dedup_chunks(cs, DedupConfig(threshold=threshold))
    assert check_dedup_accounting(cs, kept, log) == []
    assert len(kept) + len(log) == len(cs)
    kept_by_id = {c.id: c for c in kept}
    for r in log:
        # the log's similarity is rounded to 4 decimals (DedupRecord.similarity): within half a unit of the threshold
        assert r.kept_id in kept_by_id and r.similarity >= threshold - 5e-5 - 1e-9
    n_dups = sum(len(c.meta.duplicates) for c in kept)
    assert n_dups == len(log)


def test_quality_drops_go_to_the_same_log(bundled_data):
    cfg = ChunkingConfig.model_validate({"quality": {"drop_low_quality": True, "drop_reasons": ["boilerplate"]}})
    cs = [make_chunk(0, "Cookie policy. We use cookies. Accept all cookies."), make_chunk(1, _text(random.Random(5)))]
    cs[0].quality.boilerplate = True
    kept, log = dedup_stage(cs, cfg)
    assert [c.id for c in kept] == [cs[1].id]
    assert log[0].dropped_id == cs[0].id and log[0].reason == "dropped: boilerplate" and log[0].similarity is None
    assert check_dedup_accounting(cs, kept, log) == []


def test_log_table_records_the_parameters():
    t = log_to_table([], DedupConfig(threshold=0.95))
    assert t.num_rows == 0 and b"0.95" in t.schema.metadata[b"dedup_config"]


def test_repeated_sentence_faq_page_collapses(shared_data):
    """The GRSciColl FAQ page filed under zh repeats one sentence thousands of times: its windows are exact or
    near duplicates of each other and must collapse, each drop logged."""
    from heritage_pipeline.chunking.chunker import chunk_text

    text = (shared_data / "faq" / "gbif_grscicoll" / "zh" / "faq.md").read_text(encoding="utf-8")
    chunks = chunk_text(text, source_path="faq/gbif_grscicoll/zh/faq.md", domain="faq")
    stats = DedupStats()
    kept, log = dedup_chunks(chunks, DedupConfig(), stats=stats)
    assert len(chunks) > 50
    assert len(log) >= len(chunks) // 2  # most windows are repeats
    assert check_dedup_accounting(chunks, kept, log) == []


def test_empty_and_duplicate_id_inputs():
    assert dedup_chunks([], DedupConfig()) == ([], [])
    with pytest.raises(ValueError, match="not unique"):
        dedup_chunks([make_chunk(0, "a b c"), make_chunk(0, "d e f")], DedupConfig())
    assert shingle_hashes("", 5).dtype == np.uint64
