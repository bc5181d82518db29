"""Issue #3 properties of the chunk engine on generated Markdown (hypothesis), in every mode.

Sizes are kept small (300-tokens windows, caps of 300-700) so that generated documents of a few thousand tokens
exercise windowing, overlap, splitting of oversize blocks and section merging.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from heritage_pipeline.chunking.chunker import Chunker, resolve_config
from heritage_pipeline.chunking.params import params_for
from heritage_pipeline.sources.markdown import parse_markdown
from heritage_pipeline.core.text import normalize

from heritage_pipeline_tests._chunk_checks import check_basic, check_cover, check_sections, contains
from heritage_pipeline_tests._markdown_gen import GenDoc, markdown_docs

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CONFIGS = st.fixed_dictionaries({
    "mode": st.sampled_from(["hierarchical", "sliding", "hybrid"]),
    "size_tokens": st.sampled_from([300, 400, 700]),
    "overlap_ratio": st.sampled_from([0.10, 0.20, 0.30]),
    "max_tokens": st.sampled_from([300, 450, 700, 1200]),
    "min_tokens": st.sampled_from([0, 100, 250]),
    "adaptive_overlap": st.booleans(),
})


def _chunk(gen: GenDoc, overrides: dict, overlap_zero: bool = False):
    ov = dict(overrides)
    ov["size_tokens"] = min(ov["size_tokens"], ov["max_tokens"])
    ov["min_tokens"] = min(ov["min_tokens"], ov["max_tokens"] - 1)
    cfg = resolve_config(**ov)
    chunker = Chunker(cfg)
    doc = parse_markdown(gen.text, doc_id="gen.md", source_path="gen.md", max_level=cfg.hierarchy.max_level)
    params = params_for(cfg)
    if overlap_zero:
        params = dataclasses.replace(params, overlap_tokens=0, adaptive_overlap=False)
    return chunker.chunk_document(doc, params), cfg, chunker


@SETTINGS
@given(gen=st.one_of(markdown_docs(min_blocks=12, max_blocks=60), markdown_docs(tight=True)), overrides=CONFIGS)
def test_generated_documents_satisfy_the_chunk_properties(gen, overrides, tokenizer):
    chunks, cfg, _ = _chunk(gen, overrides)
    cap = cfg.quality.length.max_tokens
    event(f"chunks: {'0' if not chunks else '1' if len(chunks) == 1 else '2-5' if len(chunks) <= 5 else '6+'}")
    event(f"overlapping windows: {any(b.char_start < a.char_end for a, b in zip(chunks, chunks[1:]))}")
    check_basic(gen.text, chunks, tokenizer, cap)
    check_sections(gen.text, chunks, cfg.hierarchy.max_level)
    if gen.tight:
        return  # blocks touching without a blank line may be joined by CommonMark: the generator's parts are not truth
    for part in gen.of_kind("code", "table", "blockquote"):  # a fitting atomic block is never cut
        n = tokenizer.count(normalize(gen.text[part["start"] : part["end"]]))
        if n <= cap:
            assert contains(chunks, part["start"], part["end"]), f"{part['kind']} of {n} tokens at {part} was cut"
    # a heading never ends a chunk when a (small) body follows it
    parts = gen.parts
    for k, part in enumerate(parts[:-1]):
        if part["kind"] != "heading":
            continue
        nxt = parts[k + 1]
        if nxt["kind"] == "heading":
            continue  # an empty-bodied heading: glued to the next one unless that one starts another section
        body = tokenizer.count(normalize(gen.text[part["start"] : nxt["end"]]))
        if nxt["kind"] in ("code", "table", "blockquote") and body > cap - 100:
            continue  # the block fits alone but not with its heading: the block is kept whole instead
        assert not any(c.char_end == part["end"] for c in chunks), f"heading {part} ends a chunk; body follows"


@SETTINGS
@given(gen=st.one_of(markdown_docs(min_blocks=12, max_blocks=60), markdown_docs(tight=True)), overrides=CONFIGS)
def test_without_overlap_the_chunks_tile_the_document(gen, overrides, tokenizer):
    chunks, cfg, _ = _chunk(gen, overrides, overlap_zero=True)
    check_basic(gen.text, chunks, tokenizer, cfg.quality.length.max_tokens)
    check_cover(gen.text, chunks)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(gen=markdown_docs(min_blocks=5), overrides=CONFIGS)
def test_output_is_deterministic(gen, overrides):
    a, _, _ = _chunk(gen, overrides)
    b, _, _ = _chunk(gen, overrides)
    assert [c.model_dump_json() for c in a] == [c.model_dump_json() for c in b]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(gen=markdown_docs(min_blocks=8, eols=("\n",), allow_bom=False), ratio=st.sampled_from([0.15, 0.25]))
def test_overlap_is_real_and_within_budget(gen, ratio, tokenizer):
    """Consecutive windows of one section overlap by at most the overlap budget, measured on the source."""
    chunks, cfg, _ = _chunk(gen, {"mode": "sliding", "size_tokens": 300, "overlap_ratio": ratio, "max_tokens": 450,
                                  "min_tokens": 0, "adaptive_overlap": False})
    budget = round(300 * ratio)
    for a, b in zip(chunks, chunks[1:]):
        if b.char_start < a.char_end:
            shared = tokenizer.count(normalize(gen.text[b.char_start : a.char_end]))
            assert shared <= budget, f"{b.id} repeats {shared} tokens of {a.id}, budget {budget}"


@pytest.mark.parametrize("eol", ["\r\n", "\r"])
@given(gen=markdown_docs(eols=("\n",), allow_bom=False))
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_line_endings_do_not_change_the_chunks(gen, eol):
    """CRLF and CR files give the same chunk texts as LF (spans shift by the extra characters only)."""
    ov = {"mode": "hybrid", "size_tokens": 300, "overlap_ratio": 0.2, "max_tokens": 450, "min_tokens": 100,
          "adaptive_overlap": False}
    lf, _, _ = _chunk(gen, ov)
    other, _, _ = _chunk(GenDoc(gen.text.replace("\n", eol), gen.parts, eol), ov)
    assert [c.text for c in lf] == [c.text for c in other]
    assert [c.len_tokens for c in lf] == [c.len_tokens for c in other]


def test_context_prefix_counts_towards_the_cap(tokenizer):
    text = "# " + "Heading words " * 20 + "\n\n" + ("Sentence about archives and museums. " * 400)
    cfg = resolve_config(size_tokens=300, max_tokens=300, min_tokens=0)
    chunks = Chunker(cfg).chunk_document(parse_markdown(text, doc_id="d", source_path="d"))
    assert len(chunks) > 3
    for c in chunks:
        assert c.context_prefix.startswith("Heading words")
        assert tokenizer.count(c.embedding_text()) == c.len_tokens <= 300
