"""Properties of the chunker's counting helpers (heritage_pipeline.chunking.counting) and id slugs: token counts derived from a
run's token offsets equal a fresh count of the same slice, on generated Markdown with every kind of odd text."""

from __future__ import annotations

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from heritage_pipeline.chunking.counting import DocState, PieceCounter, _utf8_map
from heritage_pipeline.core.text import normalize_inner
from heritage_pipeline.core.tokenizer import get_tokenizer
from heritage_pipeline.sources.markdown import parse_markdown

from heritage_pipeline_tests._markdown_gen import markdown_docs


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_utf8_map_gives_the_byte_offset_of_every_character(s):
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return  # (lone surrogates: the caller never asks)
    m = _utf8_map(s)
    assert m.tolist() == [len(s[:k].encode("utf-8")) for k in range(len(s) + 1)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(markdown_docs(min_blocks=10, max_blocks=40, eols=("\n",)), st.data())
def test_slice_counts_from_token_offsets_equal_a_fresh_count(tokenizer, gen, data):
    """Property: ``DocState.slice_count(p, q)`` is None or the count of the normalised slice, for line starts and
    word ends anywhere in the loaded run (the cases ``excluded_count`` asks about) and for arbitrary positions."""
    text = normalize_inner(gen.text)  # (no BOM, NFC: the modes with slice counts, ascii and same_length)
    if data.draw(st.booleans()):
        text = text.replace(" a", "\u00a0a")  # (non-breaking spaces normalise to spaces of the same length)
    doc = parse_markdown(text, doc_id="g", source_path="g.md")
    if not doc.blocks:
        return
    st_ = DocState(doc, PieceCounter(get_tokenizer("cl100k")))
    assert st_.norm is not None
    event(f"mode {st_._mode}")
    first, last = 0, len(doc.blocks)
    st_.block_counts(first, last)  # loads the run's offsets in the lazy modes
    norm = st_.norm
    s0, e0 = doc.blocks[first].start, doc.blocks[last - 1].end
    lines = [s0] + [k + 1 for k in range(s0, e0) if norm[k] == "\n"]
    words = [k for k in range(s0 + 1, e0) if norm[k - 1].isalnum() and norm[k].isspace()]
    cands = sorted(set(lines + words + [e0]))
    for _ in range(30):
        p = data.draw(st.sampled_from(cands) | st.integers(0, len(norm)))
        q = data.draw(st.sampled_from(cands) | st.integers(0, len(norm)))
        got = st_.slice_count(p, q)
        event(f"slice count known: {got is not None}")
        if got is not None:
            assert got == tokenizer.count(norm[p:q]), (p, q, norm[p:q])


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40) | st.text(alphabet="AbZ09_ -.éK\u212a", max_size=20))
def test_slug_words_are_the_one_word_patterns_words(s):
    """Property: the ASCII fast path of ``slug`` finds the words :data:`heritage_pipeline.core.text.WORD_RE` finds."""
    from heritage_pipeline.chunking.ids import slug
    from heritage_pipeline.core.text import WORD_RE

    assert slug(s) == ("-".join(WORD_RE.findall(s.lower()))[:48].strip("-") or "untitled")
