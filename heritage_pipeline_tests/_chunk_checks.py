"""Property checks shared by the chunker's generated-input and real-corpus tests (issue #3's property list).

Each function raises AssertionError with the document, chunk id and what is wrong. ``raw`` is the decoded input
text the chunks were made from (spans index it).
"""

from __future__ import annotations

import regex

from heritage_pipeline.sources.markdown import parse_markdown
from heritage_pipeline.core.models import Chunk, join_prefix
from heritage_pipeline.core.text import normalize

_GRAPHEME = regex.compile(r"\X")


def grapheme_starts(raw: str) -> set[int]:
    """Every offset of ``raw`` at which a cut separates no extended grapheme cluster (UAX #29), ends included."""
    out = {0, len(raw)}
    out.update(m.end() for m in _GRAPHEME.finditer(raw))
    return out


def check_basic(raw: str, chunks: list[Chunk], tok, cap: int, *, name: str = "doc") -> None:
    """P-slice, P-order, P-cap (exact counts), P-nonempty, unique ids, grapheme-safe boundaries."""
    bounds = grapheme_starts(raw)
    ids = set()
    prev_start = prev_end = -1
    for c in chunks:
        s, e = c.char_start, c.char_end
        assert 0 <= s < e <= len(raw), f"{name} {c.id}: span {s}:{e} out of bounds (len {len(raw)})"
        assert normalize(raw[s:e]) == c.text, f"{name} {c.id}: text is not normalize(raw[{s}:{e}])"
        assert c.text.strip(), f"{name} {c.id}: empty or whitespace-only chunk"
        assert c.text == c.text.rstrip() and c.text[:1] not in ("\n", "\r"), f"{name} {c.id}: text not trimmed"
        n = tok.count(c.embedding_text())
        assert c.len_tokens == n, f"{name} {c.id}: len_tokens {c.len_tokens} but the embedded text has {n} tokens"
        if not c.meta.excluded and not c.meta.context_suffix:
            assert c.embedding_text() == join_prefix(c.context_prefix, c.text)
        ends = [0] + [x for r in c.meta.excluded for x in r] + [len(c.text)]
        assert ends == sorted(ends) and all(a < b for a, b in c.meta.excluded), f"{name} {c.id}: bad excluded ranges"
        if n > cap:
            assert c.quality.atomic_oversize and c.quality.oversize_reason, \
                f"{name} {c.id}: {n} tokens over the cap {cap} without the atomic_oversize flag"
        assert s >= prev_start and e >= prev_end, f"{name} {c.id}: span {s}:{e} goes backwards ({prev_start}:{prev_end})"
        prev_start, prev_end = s, e
        assert s in bounds and e in bounds, f"{name} {c.id}: a boundary of {s}:{e} splits a grapheme cluster"
        assert c.id not in ids, f"{name}: duplicate id {c.id}"
        ids.add(c.id)


def check_cover(raw: str, chunks: list[Chunk], *, name: str = "doc") -> None:
    """With overlap 0: spans do not overlap and every non-whitespace character (BOMs aside) is in some chunk."""
    covered = bytearray(len(raw))
    for a, b in zip(chunks, chunks[1:]):
        assert a.char_end <= b.char_start, f"{name}: {a.id} and {b.id} overlap with overlap 0"
    for c in chunks:
        covered[c.char_start : c.char_end] = b"\x01" * (c.char_end - c.char_start)
    for i, ch in enumerate(raw):
        if not covered[i] and not ch.isspace() and ch != "\ufeff":
            raise AssertionError(f"{name}: character {i} ({ch!r}, context {raw[max(0, i - 30):i + 30]!r}) is in no chunk")


def check_sections(raw: str, chunks: list[Chunk], max_level: int, *, name: str = "doc") -> None:
    """Non-adjacent sections never share a chunk, and a chunk's anchors are a common prefix of the anchors of
    every section with a body it touches (a breadcrumb never names a section the chunk is not in; a title-only
    section such as "# A" right before "## B" is named by B's breadcrumb A › B)."""
    doc = parse_markdown(raw, doc_id="x", source_path="x", max_level=max_level)
    spans = []
    for k, sec in enumerate(doc.sections):
        if sec.last > sec.first:
            title_only = all(doc.blocks[b].kind == "heading" for b in range(sec.first, sec.last))
            spans.append((doc.blocks[sec.first].start, doc.blocks[sec.last - 1].content_end, k,
                          None if title_only else sec.anchors))
    for c in chunks:
        touched = [(k, anchors) for s, e, k, anchors in spans if s < c.char_end and c.char_start < e]
        ks = [k for k, _ in touched]
        assert ks == list(range(ks[0], ks[-1] + 1)) if ks else True, f"{name} {c.id}: sections {ks} are not adjacent"
        for k, anchors in touched:  # a heading-only section glued to its child section is exempt
            assert anchors is None or anchors[: len(c.anchors)] == c.anchors, \
                f"{name} {c.id}: anchors {c.anchors} are not a prefix of section {k}'s {anchors}"


def contains(chunks: list[Chunk], start: int, end: int) -> bool:
    return any(c.char_start <= start and end <= c.char_end for c in chunks)
