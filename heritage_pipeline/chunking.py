"""The chunking engine: exact, structure-preserving chunks in hierarchical, sliding and hybrid modes.

Input: a :class:`~heritage_pipeline.structure.ParsedDocument` (blocks + heading sections). Output: :class:`Chunk`
records whose ``text`` is ``normalize(doc.text[start:end])`` for offsets chosen *while splitting* (never searched
for afterwards) and whose ``meta.len_tokens`` is the exact count of what is embedded (``meta.context_prefix`` +
blank line + ``text``, see :func:`heritage_pipeline.models.join_prefix`).

Units: sizes are tokens of the configured tiktoken encoding (cl100k by default); offsets are code points.
``size_tokens`` is the target, ``max_tokens`` the hard cap on the embedded string, ``overlap_tokens`` the most
tokens a window repeats from the end of the previous window of the same section.

Modes
    ``hierarchical``: one chunk per heading section (H1-H3 by default); a section whose embedded string is over the
    cap is cut into windows of about ``size_tokens`` with overlap.
    ``sliding``: windows of about ``size_tokens`` with overlap over the whole document, ignoring section
    boundaries (but still cut only at block / line / sentence / word / grapheme boundaries, with atomic blocks
    whole and headings glued to their body); each window's ``anchors`` are the common path of the sections it
    touches.
    ``hybrid`` (default): hierarchy first; sections longer than ``split_factor x size_tokens`` (or over the cap)
    get windows.

Rules (SPEC.md §3)
    * A heading is glued to the unit after it, so it never ends a window (its body follows it).
    * A table, fenced code block, blockquote, admonition or HTML block whose tokens fit under the cap is one unit and
      is never cut. A larger one is split at row / line boundaries; the table header rows (or the opening fence line
      with its language) are repeated in ``meta.context_prefix`` of every window that starts inside it. Fenced code
      inside a list item or an admonition is kept together the same way.
    * Paragraph-like blocks under ``min_paragraph_tokens`` (default 80) are merged with the next unit of the same
      section (else the previous one), so a short lead-in ("For example:") stays with what it introduces; a lead-in
      never glues onto a heading. When an atomic block fits the cap alone but not after the breadcrumb, it is kept
      whole in a window whose ``context_prefix`` drops outer breadcrumb levels (the one case where a heading just
      before it may stay in the previous window).
    * Sections: a heading with no body joins the section after it (breadcrumb: the following section's when the
      heading is its ancestor, ``# A`` + ``## B`` gives ``A › B``; else the common path). Adjacent sections that are
      both under
      ``min_tokens`` merge while the result stays under ``size_tokens`` and its breadcrumb (the common prefix of the
      members' anchors) loses at most one level from the deepest member: siblings and a parent with its first child
      merge, distant sections do not. Non-adjacent sections never share a chunk; standalone sections (a message, a
      registry row, an entity) never merge.
    * Windows: the number of windows of a section is fixed first and the target is balanced
      (``(T - overlap) / n + overlap``), so windows are of similar size; a short tail is shared with the window
      before it, and a tail still under ``min_tokens`` merges into the previous window when the union stays under
      the cap and near the target.
    * Overlap: the next window starts at the earliest allowed boundary in the previous window's tail such that the
      repeated text has at most ``overlap_tokens`` tokens. Allowed boundaries are unit starts and, inside
      paragraphs and list items, line and sentence starts (never inside an atomic block, never inside a grapheme
      cluster). With ``adaptive_overlap`` the ratio is ``min(0.25, 0.10 + 0.15 x H)`` with ``H`` the normalised
      lexical entropy of the section (see :func:`adaptive_overlap_ratio`).

Exact counts at close to tokenizer speed: every block starts at the start of a non-blank line, a boundary across
which cl100k's pre-tokenizer never merges (its pieces end at line breaks or before the next non-space), so the count
of a run of blocks is the sum of their counts with trailing whitespace, plus the last one's count without it; the
same holds at the last whitespace character before a word (the pre-tokenizer attaches exactly that space to the
word). So each character is encoded about once: a run of blocks short enough to be emitted whole (a section) is
counted as one string, and a run that will be windowed is encoded once with offsets (:meth:`Tokenizer.token_ends`:
the UTF-8 end offset of every token), after which the count of any piece between two such boundaries is the number
of token ends between their byte offsets; every boundary used is checked to be a token end, else the piece is
encoded on its own (see :class:`_DocState`). A piece's count without trailing whitespace comes from the same
offsets, or from the final punctuation run (the one pre-token piece that can absorb newlines:
``count(punct + trail) - count(punct)``, cached). Windows with a cut that is not additive (inside a word, after a
CJK full stop, an HTML row starting mid-line) are re-encoded; window starts and overlap heads after a space recount
one word. Short documents (up to 8 blocks and 8 KB) are counted block by block. Counting uses the tokenizer's fast
backend (rs-bpe, same ids as tiktoken; :mod:`heritage_pipeline.tokenizer`); every count is checked by the tests
against tiktoken's own encode of the embedded string. The cyclic garbage collector is paused while a document is
chunked (no reference cycles are created; it cost ~10 %).
"""

from __future__ import annotations

import bisect
import gc
import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
import regex

from .config import ChunkingConfig, config_from
from .markdown import parse_markdown
from .models import Chunk, extraction_day, join_prefix
from .structure import ATOMIC_KINDS, Block, ParsedDocument, Section
from .text import ODD_SPACES, grapheme_boundaries, normalize, normalize_inner
from .tokenizer import Tokenizer, get_tokenizer

BREADCRUMB_SEP = " › "
# A piece may start here: not whitespace, not a combining mark / ZWJ / variation selector / emoji modifier
# (those extend the previous grapheme cluster), not a BOM (the normalisation deletes it: what follows it decides).
_STARTABLE = r"(?=[^\s\p{M}\u200d\ufe00-\ufe0f\ufeff\U0001F3FB-\U0001F3FF])"
# Sentence starts: after sentence-final punctuation (optionally closing quotes/brackets) and whitespace, after CJK
# full stops, and at soft line breaks. Used for overlap heads and for cutting oversize lines.
# (``\s`` here is Unicode White_Space, the pre-tokenizer's whitespace; str.isspace() also counts U+001C-U+001F, so
# a piece between two cuts can still be blank for str.strip(): such a window is never emitted, see chunk_document)
_SENTENCE_CUT = regex.compile(
    r"[.!?…;:。！？；][\"'»”’)\]]*\s+" + _STARTABLE + r"|[。！？]" + _STARTABLE + r"|\n[ \t]*" + _STARTABLE
)
_WORD_CUT = regex.compile(r"\s+" + _STARTABLE)
_WORD = regex.compile(r"\w+")
# Short documents with at most this many blocks are counted block by block (each block one encode); others with one
# encode of the whole document and token offsets (numpy set-up costs ~20 us, about what 8 small encodes cost).
_SMALL_DOC_BLOCKS = 8


@dataclass(frozen=True)
class ChunkParams:
    """Resolved sizes for one document (all sizes in tokens of the configured encoding). Built by
    :func:`params_for`; ``overlap_tokens`` is ``round(size_tokens x overlap_ratio)``."""

    mode: str = "hybrid"
    size_tokens: int = 700
    max_tokens: int = 1200
    overlap_tokens: int = 140
    min_tokens: int = 300
    min_paragraph_tokens: int = 80
    split_factor: float = 1.5
    adaptive_overlap: bool = False
    keep_atomic: frozenset[str] = ATOMIC_KINDS
    parent_titles: bool = True
    merge_small_sections: bool = True
    domain: str | None = None

    @cached_property
    def whole_limit(self) -> int:
        """Largest embedded size (tokens) of a group emitted as one chunk without windowing: hybrid
        ``min(max_tokens, split_factor x size_tokens)``, hierarchical ``max_tokens``, sliding 0 (always windows)."""
        if self.mode == "hybrid":
            return min(self.max_tokens, int(self.split_factor * self.size_tokens))
        if self.mode == "sliding":
            return 0
        return self.max_tokens


def params_for(config: ChunkingConfig, *, source_type: str = "document", domain: str | None = None) -> ChunkParams:
    """Chunk sizes for a source type and domain from the config (SPEC.md §2 table and §3 presets).

    ``domain`` (``tech``, ``legal``, ``faq``) takes the preset's size and overlap ratio; None keeps
    ``sliding_window``. Websites and conversations use their ``sources`` sizes. Raises nothing (the config is
    validated at load time).
    """
    sw = config.sliding_window
    size, ratio = sw.size_tokens, sw.overlap_ratio
    if domain is not None and domain in config.domains.presets:
        preset = config.domains.presets[domain]  # type: ignore[index]
        size, ratio = preset.size_tokens, preset.overlap_ratio
    cap = config.quality.length.max_tokens
    overlap = round(size * ratio)
    merge = True
    if source_type == "website":
        src = config.sources.website
        size, cap, overlap = src.size_tokens, src.max_tokens, src.overlap_tokens
    elif source_type == "conversation":
        src = config.sources.conversation
        size, cap, overlap, merge = src.size_tokens, src.max_tokens, src.overlap_tokens, False
    elif source_type in ("csv_registry", "yaml_instance"):
        merge = False
    keep = set(ATOMIC_KINDS)
    h = config.hierarchy
    if not h.keep_code_blocks:
        keep.discard("code")
    if not h.keep_tables:
        keep -= {"table", "html_table"}
    if not h.keep_blockquotes:
        keep -= {"blockquote", "admonition"}
    size = min(size, cap)
    return ChunkParams(
        mode=config.mode,
        size_tokens=size,
        max_tokens=cap,
        overlap_tokens=min(overlap, size // 2),
        min_tokens=min(config.quality.length.min_tokens, size),
        min_paragraph_tokens=sw.min_paragraph_tokens,
        split_factor=sw.split_factor,
        adaptive_overlap=sw.adaptive_overlap,
        keep_atomic=frozenset(keep),
        parent_titles=config.context.parent_titles,
        merge_small_sections=merge,
        domain=domain,
    )


@dataclass(slots=True)
class _Unit:
    """A piece of text that a window takes whole: a block, a line / row / sentence of a split block, or a run of
    them glued together (a heading and its first block, a short paragraph and its neighbour)."""

    start: int
    end: int  # includes trailing whitespace (== next unit's start inside a block run)
    content_end: int
    c_full: int  # tokens of normalize_inner(text[start:end])
    c_core: int  # tokens of normalize_inner(text[start:content_end])
    clean: bool  # starts at the start of a non-blank line: the count boundary before it is additive
    cont_prefix: str = ""  # table header / fence line repeated when a window starts on this unit
    parts: tuple[tuple[int, str], ...] = ()  # (start, block kind) of each constituent, in order
    sec: int = 0  # index of the section (in doc.sections) of the first constituent
    oversize: str | None = None  # reason when this unit alone cannot fit the cap
    lead: int = 0  # leading whitespace characters (a sentence / word piece starts at the space before it)
    exact: bool = True  # c_full / c_core are exact (False: estimated from token offsets; windows re-encode)
    whole: bool = True  # whole blocks (False: a line / row / piece of a block that had to be split)


@dataclass(slots=True)
class _Head:
    """The partial unit a window starts with when it overlaps the previous one: ``text[start:units[k].end]``."""

    start: int
    unit: int  # index k of the unit it is a suffix of
    c_full: int
    c_core: int


@dataclass(slots=True)
class _Window:
    start: int
    end: int  # content end of the last unit
    n_tokens: int
    prefix: str
    first: int  # first whole unit
    last: int  # last unit (inclusive)
    head: _Head | None
    kinds: tuple[str, ...]
    oversize: str | None
    anchors: list[str]


@dataclass(slots=True)
class _Group:
    """Consecutive blocks chunked together: one section, or adjacent sections merged by the rules above."""

    anchors: list[str]
    first: int
    last: int
    section: Section | None
    depth: int  # deepest member breadcrumb length
    c_full: int = -1
    c_core: int = -1
    secs: tuple[int, ...] = ()  # indexes of member sections


class _Counter:
    """Token counts of normalised text pieces with the additive-boundary bookkeeping described in the module doc."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tok = tokenizer
        self.count = tokenizer.count
        # (punct, trail) -> tail delta; a few hundred distinct keys in practice (bounded anyway)
        self._deltas: dict[tuple[str, str], int] = {}

    def piece(self, text: str, start: int, content_end: int, end: int) -> tuple[int, int]:
        """(tokens with trailing whitespace, tokens without) of ``text[start:end]`` whose content ends at
        ``content_end``, by encoding the piece."""
        c_core = self.count(normalize_inner(text[start:content_end]))
        return c_core + self.tail_delta(text, start, content_end, end), c_core

    def tail_delta(self, text: str, start: int, content_end: int, end: int) -> int:
        """Tokens that the trailing whitespace ``text[content_end:end]`` adds to the piece starting at ``start``.

        Only the core's final punctuation run (with one optional space before it) can merge with following
        newlines: it is cl100k's ``' ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*'`` pre-token. So the delta is
        ``count(punct + trail) - count(punct)``, cached per (punct, trail)."""
        if end <= content_end:
            return 0
        trail = text[content_end:end]
        if not trail.isascii() or "\r" in trail:
            trail = normalize_inner(trail)
        k = content_end
        while k > start and not text[k - 1].isalnum() and not text[k - 1].isspace():
            k -= 1  # str.isalnum() is exactly \p{L} | \p{N}
        if k == content_end:
            punct = ""
        else:
            if k > start and (text[k - 1] == " " or text[k - 1] in ODD_SPACES):  # (odd spaces normalise to " ")
                k -= 1
            punct = text[k:content_end]
            if not punct.isascii():
                punct = normalize_inner(punct)
        key = (punct, trail)
        delta = self._deltas.get(key)
        if delta is None:
            delta = self.count(punct + trail) - self.count(punct)
            if len(trail) <= 64 and len(punct) <= 64:
                if len(self._deltas) >= 4096:
                    self._deltas.clear()
                self._deltas[key] = delta
        return delta


def slug(s: str, max_len: int = 48) -> str:
    """Id-safe slug of a heading: lowercase word characters joined by ``-`` (Unicode letters kept)."""
    words = _WORD.findall(s.lower())
    out = "-".join(words)[:max_len].strip("-")
    return out or "untitled"


_slug_cached = lru_cache(maxsize=16384)(slug)  # (parent titles repeat in every anchor path below them)


@lru_cache(maxsize=8192)
def _anchor_key(anchors: tuple[str, ...]) -> str:
    """The heading-path part of a chunk id: slugged anchors joined by ``/`` (``root`` without anchors)."""
    return "/".join(map(_slug_cached, anchors)) or "root"


def breadcrumb(anchors: list[str]) -> str:
    """The anchor path as shown to users and embedded as context: ``H1 › H2 › H3``."""
    return BREADCRUMB_SEP.join(anchors)


def lexical_entropy(text: str) -> float:
    """Normalised lexical entropy in [0, 1]: Shannon entropy of the word distribution over log2(number of words).

    0 means one word repeated (or fewer than two words); 1 means every word distinct.
    """
    words = _WORD.findall(text.lower())
    n = len(words)
    if n < 2:
        return 0.0
    h = -sum((c / n) * math.log2(c / n) for c in Counter(words).values())
    return min(1.0, h / math.log2(n))


def adaptive_overlap_ratio(text: str) -> float:
    """Seed rule ``overlap = min(0.25, 0.10 + entropy)`` with entropy scaled onto the seed's 0.10-0.25 band.

    Taken literally the rule saturates at 0.25 for any natural text (normalised word entropy is 0.8-0.95), so the
    normalised entropy ``H`` of :func:`lexical_entropy` is scaled: ``min(0.25, 0.10 + 0.15 * H)``. Denser, more
    varied vocabulary gives more overlap, as the seed intends; a text repeating one sentence gets close to 0.10.
    """
    return min(0.25, 0.10 + 0.15 * lexical_entropy(text))


def _common_prefix(a: list[str], b: list[str]) -> list[str]:
    out = []
    for x, y in zip(a, b):
        if x != y:
            break
        out.append(x)
    return out


class SectionGrouper:
    """Groups a document's heading sections into chunkable groups and decides, per group, between one
    whole chunk and windows (mixin of :class:`~heritage_pipeline.chunking.chunker.Chunker`)."""

    def _groups(self, st: "_DocState", params: ChunkParams) -> list[_Group]:
        doc = st.doc
        secs = [(k, s) for k, s in enumerate(doc.sections) if s.last > s.first]
        if params.mode == "sliding":
            # one group per run of non-standalone sections: windows flow across headings
            out: list[_Group] = []
            for k, s in secs:
                if out and not s.standalone and out[-1].section is not None and not out[-1].section.standalone:
                    g = out[-1]
                    g.last = s.last
                    g.secs += (k,)
                    g.anchors = _common_prefix(g.anchors, s.anchors)
                    continue
                out.append(_Group(list(s.anchors), s.first, s.last, s, len(s.anchors), secs=(k,)))
            return out
        groups: list[_Group] = []
        pending: _Group | None = None
        kinds = st.kinds
        # (anchor lists are shared, never mutated in place: merges build new lists)
        for k, s in secs:
            g = _Group(s.anchors, s.first, s.last, s, len(s.anchors), secs=(k,))
            if pending is not None:
                ancestor = g.anchors[: len(pending.anchors)] == pending.anchors
                g = _merge_groups(pending, g, section=s)
                if ancestor:  # "# A" with no body, then "## B": the chunk is A › B's, not just A's
                    g.anchors = s.anchors
                pending = None
            heading_only = kinds[s.last - 1] == "heading" and kinds[s.first : s.last].count("heading") == s.last - s.first
            if heading_only and not s.standalone:
                pending = g  # a heading with no body joins the section after it
                continue
            groups.append(g)
        if pending is not None:
            if groups and not _standalone(groups[-1]):
                groups[-1] = _merge_groups(groups[-1], pending, section=groups[-1].section)
            else:
                groups.append(pending)
        if not params.merge_small_sections or len(groups) < 2:
            return groups
        out = []
        for g in groups:
            if out and not _standalone(g) and not _standalone(out[-1]):
                prev = out[-1]
                pf, pc = self._group_counts(st, prev, params)
                gf, gc = self._group_counts(st, g, params)
                if pc < params.min_tokens and gc < params.min_tokens:
                    anchors = _common_prefix(prev.anchors, g.anchors)
                    depth = max(prev.depth, g.depth)
                    total = pf + gc + self._prefix_tokens(self._prefix(anchors, params))
                    if len(anchors) >= depth - 1 and total <= params.size_tokens:
                        merged = _merge_groups(prev, g, section=prev.section)
                        merged.c_full, merged.c_core = pf + gf, pf + gc
                        out[-1] = merged
                        continue
            out.append(g)
        return out

    def _group_counts(self, st: "_DocState", g: _Group, params: ChunkParams) -> tuple[int, int]:
        """(tokens with trailing whitespace, without) of the group's blocks, exact; cached on the group."""
        if g.c_full < 0:
            g.c_full, g.c_core = st.run_counts(g.first, g.last, params.whole_limit)
        return g.c_full, g.c_core

    def _chunk_group(self, st: "_DocState", params: ChunkParams, g: _Group) -> list[_Window]:
        doc = st.doc
        prefix = self._prefix(g.anchors, params)
        p_tok = self._prefix_tokens(prefix)
        whole_limit = params.whole_limit
        if params.mode != "sliding":
            _, core = self._group_counts(st, g, params)
            if p_tok + core <= whole_limit:
                b0, b1 = doc.blocks[g.first], doc.blocks[g.last - 1]
                kinds = tuple(dict.fromkeys(st.kinds[g.first : g.last]))
                return [_Window(b0.start, b1.content_end, p_tok + core, prefix, g.first, g.last - 1, None, kinds, None,
                                g.anchors)]
        overlap = params.overlap_tokens
        if params.adaptive_overlap:
            sec_text = doc.text[doc.blocks[g.first].start : doc.blocks[g.last - 1].content_end]
            overlap = min(params.size_tokens // 2, round(params.size_tokens * adaptive_overlap_ratio(sec_text)))
        units = self._units(st, params, g)
        return self._pack(st, params, g, units, overlap)


class UnitBuilder:
    """Cuts a group into units for windowing: whole blocks, oversize blocks split at rows / lines / sentences /
    words / graphemes, headings and short paragraphs glued to a neighbour (mixin of
    :class:`~heritage_pipeline.chunking.chunker.Chunker`)."""

    def _units(self, st: "_DocState", params: ChunkParams, g: _Group) -> list[_Unit]:
        """Units for windowing: whole blocks; blocks over the budget (or non-atomic blocks over the target) split
        into rows / lines / sentences / words / graphemes; then headings and short paragraphs glued to a neighbour."""
        doc = st.doc
        sec_of = st.section_index
        counts = st.block_counts(g.first, g.last)
        raw: list[_Unit] = []
        budget = params.max_tokens - self._prefix_tokens(self._prefix(g.anchors, params))
        carry = 0  # tokens of heading units waiting to be glued to the next block
        for bi in range(g.first, g.last):
            b = doc.blocks[bi]
            c_full, c_core = counts[bi - g.first]
            sec = sec_of[bi]
            avail = budget - carry
            if c_core <= avail and (b.kind in params.keep_atomic or c_core <= params.size_tokens):
                raw.append(_Unit(b.start, b.end, b.content_end, c_full, c_core, True, "", ((b.start, b.kind),), sec))
            elif b.kind in params.keep_atomic and c_core <= params.max_tokens:
                # fits the cap alone but not after the breadcrumb / a heading: kept whole, in a window of its own
                # whose prefix is shortened (a heading before it that does not fit stays in the previous window)
                raw.append(_Unit(b.start, b.end, b.content_end, c_full, c_core, True, "", ((b.start, b.kind),), sec))
            else:
                pieces = self._split_block(st, bi, params, g.anchors, reserve=carry)
                for p in pieces:
                    p.sec = sec
                    p.whole = False
                raw.extend(pieces)
            carry = carry + raw[-1].c_full if b.kind == "heading" else 0
        return self._glue(raw, params, budget)

    def _glue(self, units: list[_Unit], params: ChunkParams, budget: int) -> list[_Unit]:
        """Glue headings to the next unit, and paragraph-like blocks under ``min_paragraph_tokens`` to a neighbour of
        the same section: the next unit (a lead-in such as "For example:" belongs to what it introduces), else the
        previous one. The result must stay within the target, or within ``budget`` (the cap minus the breadcrumb)
        when the neighbour is an atomic block. A heading is glued whenever the pair fits ``budget`` (blocks after a
        heading were split with that reserve); only an atomic block that fits the cap alone but not with its heading
        leaves the heading in the previous unit (the block is not cut). Atomic units are never glued to each other,
        and pieces of a split block are not glued by the short-paragraph rule (they are already cut to size)."""
        limit = min(params.size_tokens, budget)
        atomic = params.keep_atomic

        def room(u: _Unit) -> int:
            return budget if u.parts[-1][1] in atomic or u.parts[0][1] in atomic else limit

        out: list[_Unit] = []
        carry: _Unit | None = None
        for u in units:
            if carry is not None:
                heading = carry.parts[-1][1] == "heading"
                if heading and (carry.c_full + u.c_core <= budget or not u.clean):
                    u = _merge_units(carry, u)
                elif not heading and carry.sec == u.sec and u.clean and u.parts[0][1] != "heading" \
                        and carry.c_full + u.c_core <= room(u):  # (a lead-in never glues onto a heading)
                    u = _merge_units(carry, u)
                elif not heading and out and out[-1].sec == carry.sec and out[-1].c_full + carry.c_core <= room(out[-1]):
                    out[-1] = _merge_units(out[-1], carry)
                else:
                    out.append(carry)
                carry = None
            last_kind = u.parts[-1][1]
            if last_kind == "heading" and u.whole:  # (a piece of an oversize heading is not glued onward)
                carry = u
                continue
            if u.c_core < params.min_paragraph_tokens and last_kind not in atomic and u.whole:
                carry = u  # a short paragraph / list item: keep it with a neighbour
                continue
            out.append(u)
        if carry is not None:
            if carry.parts[-1][1] != "heading" and out and out[-1].sec == carry.sec \
                    and out[-1].c_full + carry.c_core <= room(out[-1]):
                out[-1] = _merge_units(out[-1], carry)
            else:
                out.append(carry)
        return out

    def _split_block(self, st: "_DocState", bi: int, params: ChunkParams, anchors: list[str], reserve: int = 0) -> list[_Unit]:
        """Split block ``bi`` into line units (rows for tables, lines for code, fenced regions kept together), then
        sentences, words, graphemes; each piece fits ``min(size_tokens, budget)``."""
        text = st.doc.text
        b = st.doc.blocks[bi]
        cont = ""
        if b.kind in ("table", "code", "html_table") and b.header_end > b.start:
            cont = normalize(text[b.start : b.header_end])
        budget = params.max_tokens - self._prefix_tokens(self._prefix(anchors, params, cont)) - reserve
        target = max(32, min(params.size_tokens, budget))
        kind = b.kind
        if kind == "html_table":
            pieces = _html_row_pieces(text, b)
        else:
            pieces = _line_pieces(text, b.start, b.end, group_fences=kind != "code")
        counts = st.piece_counts(bi, [(s, ce, e, clean) for s, ce, e, _, clean in pieces])
        units: list[_Unit] = []
        for (s, ce, e, fence_line, clean), (c_full, c_core, exact) in zip(pieces, counts):
            if c_core <= target:
                units.append(_Unit(s, e, ce, c_full, c_core, clean, cont, ((s, kind),), exact=exact))
            elif fence_line:  # a fenced region inside a list item / admonition that does not fit: by lines
                sub = self._line_units(st, bi, _line_pieces(text, s, e, group_fences=False), target,
                                       normalize(fence_line), kind)
                sub[0].cont_prefix = cont
                units.extend(_glue_fence_ends(sub, text, text.find("\n", s) + 1 or e))
            else:
                units.extend(self._split_line(st, bi, s, ce, e, clean, target, cont, kind, c_core))
        if not units:
            return units
        units[0].cont_prefix = ""  # the first piece carries the real header / fence line itself
        if kind in ("table", "code", "html_table"):
            units = _glue_fence_ends(units, text, b.header_end)
        return units

    def _line_units(self, st: "_DocState", bi: int, pieces: list[tuple[int, int, int, str, bool]], target: int, cont: str,
                    kind: str) -> list[_Unit]:
        units: list[_Unit] = []
        counts = st.piece_counts(bi, [(s, ce, e, clean) for s, ce, e, _, clean in pieces])
        for (s, ce, e, _, clean), (f, c, exact) in zip(pieces, counts):
            if c <= target:
                units.append(_Unit(s, e, ce, f, c, clean, cont, ((s, kind),), exact=exact))
            else:
                units.extend(self._split_line(st, bi, s, ce, e, clean, target, cont, kind, c))
        return units

    def _split_line(self, st: "_DocState", bi: int, s: int, ce: int, e: int, clean: bool, target: int, cont: str,
                    kind: str, n_tokens: int) -> list[_Unit]:
        """Cut one line (or table row) that is over ``target`` tokens into pieces of at most ``target // 6`` tokens
        (small pieces leave the window packer room for overlap). Each cut is the last sentence start before the
        token limit (in the second half of the range), else the last word start, else the last grapheme-cluster
        boundary: never inside a cluster.

        A cut at whitespace starts the next piece at the last whitespace character (``lead`` = 1, or at the start of
        the line when the whitespace holds a line break): cl100k's pre-tokenizer attaches exactly that space to the
        next word, so counts stay additive and the piece is ``clean``. Where the document's token offsets are known
        the limit comes from them and clean pieces need no encode; otherwise the limit is estimated from the line's
        characters per token (``n_tokens`` = tokens of ``text[s:ce]``) and each piece is encoded. Linear in
        ``e - s``."""
        text = st.doc.text
        counter = self._counter
        piece_max = max(16, target // 6)
        out: list[_Unit] = []
        p, lead, pclean = s, 0, clean
        ip = st.token_index(p) if pclean else None
        cpt = max(1.0, (ce - s) / max(1, n_tokens))  # characters per token, to estimate limits without offsets
        while p < ce:
            if ip is not None:
                q = st.limit_position(ip, piece_max, e)
                if q is None:  # the rest of the line fits
                    f, c, exact = st.piece_counts(bi, [(p, ce, e, True)])[0]
                    out.append(_Unit(p, e, ce, f, c, pclean, cont, ((p + lead, kind),), 0, None, lead, exact))
                    return out
            else:
                if (ce - p) <= piece_max * cpt * 0.9:
                    f, c = st.piece(p, ce, e)
                    if c <= piece_max:
                        out.append(_Unit(p, e, ce, f, c, pclean, cont, ((p + lead, kind),), 0, None, lead))
                        return out
                q = p + lead + max(1, int(piece_max * cpt * 0.9))
            q = min(q, ce)
            prev_b = prev_f = -1
            while True:
                b, nlead, nclean = _best_cut(text, p, lead, q, ce)
                jb = st.token_index(b) if nclean else None
                if jb is not None and ip is not None:
                    f = jb - ip
                elif b == prev_b:  # the same cut again (one grapheme cluster longer than the limit): same count
                    f = prev_f
                else:
                    f = counter.count(st.normalized(p, b))
                prev_b, prev_f = b, f
                if f <= piece_max or q <= p + lead + 1:
                    break
                q = p + lead + max(1, (q - p - lead) * 3 // 4)  # the estimate was too long: shrink and cut again
            pce = _rstrip_end(text, p + lead, b)
            c = f - counter.tail_delta(text, p, pce, b) if pce < b else f
            oversize = f"a single grapheme cluster of {c} tokens exceeds the cap" if c > target else None
            out.append(_Unit(p, b, pce, f, c, pclean, cont, ((p + lead, kind),), 0, oversize, lead))
            p, lead, pclean, ip = b, nlead, nclean, jb
        if out and out[-1].end < e:  # the line's trailing whitespace belongs to its last piece
            u = out[-1]
            u.end = e
            u.c_full = u.c_core + counter.tail_delta(text, u.start, u.content_end, e)
        return out


class WindowPacker:
    """Packs units into windows of balanced size with exact token counts and overlap heads (mixin of
    :class:`~heritage_pipeline.chunking.chunker.Chunker`)."""

    def _pack(self, st: "_DocState", params: ChunkParams, g: _Group, units: list[_Unit], overlap: int) -> list[_Window]:
        """Greedy windows over units with a balanced target, never past the cap, each overlapping the previous one
        by at most ``overlap`` tokens (see the module docstring)."""
        n = len(units)
        if n == 0:
            return []
        sliding = params.mode == "sliding"
        base_anchors = g.anchors
        p_tok0 = self._prefix_tokens(self._prefix(base_anchors, params))
        total = sum(u.c_full for u in units)
        stride = max(1, params.size_tokens - p_tok0 - overlap)
        n_windows = max(1, math.ceil(max(0, total - overlap) / stride))
        balanced = math.ceil(max(0, total - overlap) / n_windows) + overlap + p_tok0
        eff_size = min(params.size_tokens, int(balanced * 1.05) + 8)
        cum = list(itertools.accumulate((u.c_full for u in units), initial=0))
        windows: list[_Window] = []
        i, head = 0, None
        while i < n:
            anchors = st.doc.sections[units[i].sec].anchors if sliding else base_anchors
            prefix = self._prefix(anchors, params, units[i].cont_prefix if head is None else "")
            p_tok = self._prefix_tokens(prefix)
            cap = params.max_tokens - p_tok
            target = min(eff_size - p_tok, cap)
            must = windows[-1].last + 1 if windows else i  # the first unit the previous window did not hold
            j, run = self._grow(units, i, head, must, target, cap)
            rest = cum[n] - cum[j]
            if j > must and 0 < rest < params.min_tokens:
                # a short tail would remain: take it here when the window stays near the target, else share the
                # rest evenly with the last window
                if run + rest <= min(cap, int(target * 1.2)):
                    j = self._grow(units, i, head, must, cap, cap)[0]
                else:
                    j = max(must + 1, self._grow(units, i, head, must, (run + rest + overlap) // 2, cap)[0])
            if j <= must:  # the overlap left no room for the next new unit: start it without overlap
                i, head = must, None
                continue
            w = self._exact_window(st, params, units, i, j, head, prefix, base_anchors, sliding)
            if w.last < must:  # re-encoding showed no room for a new unit next to the overlap: drop the overlap
                i, head = must, None
                continue
            windows.append(w)
            if w.last + 1 >= n:
                break
            i, head = self._overlap_start(st, params, units, w, overlap)
        # a tail window under min_tokens merges into the previous window when the union stays under the cap and
        # near the target (a tail of at least half the minimum left by the balancing above is kept)
        if len(windows) >= 2 and windows[-1].n_tokens < params.min_tokens:
            a, b = windows[-2], windows[-1]
            merged = self._exact_window(st, params, units, a.first, b.last + 1, a.head, a.prefix, base_anchors, sliding,
                                        shrink=False)
            if merged.n_tokens <= params.max_tokens and (
                    b.n_tokens < params.min_tokens // 2 or merged.n_tokens <= params.size_tokens * 1.25):
                windows[-2:] = [merged]
        return windows

    @staticmethod
    def _grow(units: list[_Unit], i: int, head: _Head | None, must: int, target: int, cap: int) -> tuple[int, int]:
        """(end, tokens) of the window from ``[head] + units[i:]``: units up to ``must`` are taken while they fit
        the cap, later ones while they fit ``target`` (counts are additive estimates; the exact count follows)."""
        n = len(units)
        run = head.c_full if head is not None else 0
        j = i
        while j < n:
            u = units[j]
            if j > must or (j == must and j > i) or head is not None:
                if run + u.c_core > cap or (j > must and run + u.c_core > target):
                    break
            run += u.c_full
            j += 1
        return j, run

    def _exact_window(self, st: "_DocState", params: ChunkParams, units: list[_Unit], i: int, j: int, head: _Head | None,
                      prefix: str, anchors: list[str], sliding: bool, shrink: bool = True) -> _Window:
        """Window of [head] + units[i:j] with its exact token count; drops trailing units while over the cap."""
        cap = params.max_tokens
        while True:
            if sliding:
                anchors = self._window_anchors(st, units, i, j, head)
                prefix = self._prefix(anchors, params, units[i].cont_prefix if head is None else "")
            p_tok = self._prefix_tokens(prefix)
            u0 = units[i]
            if head is not None:
                start, f0, c0, rest = head.start, head.c_full, head.c_core, i
            elif u0.lead:  # the window text starts after the unit's leading space
                start = u0.start + u0.lead
                f0, c0 = st.without_lead(u0.start, start, u0.c_full, u0.c_core, u0.content_end, u0.end, u0.exact)
                rest = i + 1
            else:
                start, f0, c0, rest = u0.start, u0.c_full, u0.c_core, i + 1
            clean = all(units[k].clean for k in range(rest, j)) and all(units[k].exact for k in range(i, j))
            if clean:
                if rest >= j:
                    n_tok = p_tok + c0
                else:
                    n_tok = p_tok + f0 + sum(u.c_full for u in units[rest : j - 1]) + units[j - 1].c_core
            else:
                n_tok = self.tokenizer.count(join_prefix(prefix, st.normalized(start, units[j - 1].content_end).rstrip()))
            if n_tok > cap and j - 1 <= i and head is None and prefix:
                n_text = c0 if clean else self.tokenizer.count(st.normalized(start, units[j - 1].content_end).rstrip())
                shorter = self._fitting_prefix(anchors, params, u0.cont_prefix, n_text, cap)
                if shorter is not None:  # one unit that fits the cap alone: shorten the breadcrumb, never cut it
                    prefix = shorter
                    n_tok = self._prefix_tokens(prefix) + n_text if clean else \
                        self.tokenizer.count(join_prefix(prefix, st.normalized(start, units[j - 1].content_end).rstrip()))
            if n_tok <= cap or not shrink or (j - 1 <= i and head is None):
                break
            if j - 1 > i:
                j -= 1
            else:
                head = None
        kinds: dict[str, None] = {}
        if head is not None:
            kinds[units[head.unit].parts[-1][1]] = None
        for u in units[i:j]:
            for _, k in u.parts:
                kinds[k] = None
        oversize = next((u.oversize for u in units[i:j] if u.oversize), None)
        if n_tok > cap and oversize is None:
            oversize = "a single unit that cannot be split further exceeds the cap"
        return _Window(start, units[j - 1].content_end, n_tok, prefix, i, j - 1, head, tuple(kinds), oversize,
                       list(anchors))

    def _fitting_prefix(self, anchors: list[str], params: ChunkParams, cont: str, n: int, cap: int) -> str | None:
        """The longest context prefix (outer breadcrumb levels dropped first, then the repeated table header or
        fence line ``cont``) with which a text of ``n`` tokens stays under ``cap``; None when even none fits."""
        for k in range(1, len(anchors) + 1):
            p = self._prefix(anchors[k:], params, cont)
            if self._prefix_tokens(p) + n <= cap:
                return p
        return "" if n <= cap else None

    def _window_anchors(self, st: "_DocState", units: list[_Unit], i: int, j: int, head: _Head | None) -> list[str]:
        """Sliding mode: the common path of the sections a window touches."""
        secs = st.doc.sections
        first = units[head.unit].sec if head is not None else units[i].sec
        anchors = list(secs[first].anchors)
        seen = {first}
        for u in units[i:j]:
            for pos, _ in u.parts:
                k = st.section_index[st.block_at(pos)]
                if k not in seen:
                    seen.add(k)
                    anchors = _common_prefix(anchors, secs[k].anchors)
        return anchors

    def _overlap_start(self, st: "_DocState", params: ChunkParams, units: list[_Unit], w: _Window,
                       overlap: int) -> tuple[int, _Head | None]:
        """Where the window after ``w`` starts: (first whole unit, partial head or None) such that the text it repeats
        from ``w`` has at most ``overlap`` tokens."""
        nxt = w.last + 1
        if overlap <= 0:
            return nxt, None
        acc = 0
        k = w.last
        lowest = w.first + 1 if w.head is None else w.first  # never repeat the whole previous window
        while k >= lowest:
            u = units[k]
            cost = u.c_core if k == w.last else u.c_full
            if acc + cost > overlap:
                break
            acc += cost
            k -= 1
        # units[k+1 .. w.last] are repeated whole; try a suffix of units[k] for the rest of the budget
        if k >= w.first:
            head = self._overlap_head(st, params, units, k, overlap - acc, is_last=k == w.last)
            if head is not None and head.start > w.start:
                return k + 1, head
        if k + 1 <= w.last and units[k + 1].lead:  # the repeat starts after that unit's leading space: recount
            u, last = units[k + 1], k + 1 == w.last
            f0, c0 = st.without_lead(u.start, u.start + u.lead, u.c_full, u.c_core, u.content_end, u.end, u.exact)
            if acc - (u.c_core if last else u.c_full) + (c0 if last else f0) > overlap:
                return k + 2, None
        return k + 1, None

    def _overlap_head(self, st: "_DocState", params: ChunkParams, units: list[_Unit], k: int, budget: int,
                      is_last: bool) -> _Head | None:
        """The longest suffix of units[k] that starts at a line / sentence start inside a paragraph-like part (or at a
        later constituent start) and has at most ``budget`` tokens; None when there is none."""
        if budget < 8:
            return None
        text = st.doc.text
        u = units[k]
        cands: list[int] = []
        parts = u.parts
        for idx, (ps, kind) in enumerate(parts):
            pe = parts[idx + 1][0] if idx + 1 < len(parts) else u.content_end
            if idx > 0 and parts[idx - 1][1] != "heading":
                cands.append(ps)
            if kind not in params.keep_atomic and kind not in ("heading", "hr", "front_matter"):
                cands.extend(m.end() for m in _SENTENCE_CUT.finditer(text, ps, pe) if m.end() < pe)
        if not cands:
            return None
        cands = sorted(set(c for c in cands if u.start < c < u.content_end))
        if not cands:
            return None
        chars_per_token = max(1.0, (u.content_end - u.start) / max(1, u.c_core))
        # The earliest candidate whose suffix fits (a choice that depends on token counts only, not on the estimate,
        # so CRLF and LF copies of a text get the same chunks): start at the estimate, walk right until the exact
        # count fits, then left while it still fits. Counts come from token offsets where they are known.
        j = min(bisect.bisect_left(cands, u.content_end - int(budget * chars_per_token * 0.95)), len(cands) - 1)
        found: _Head | None = None
        while j < len(cands):
            full, core = st.suffix_counts(cands[j], u)
            if (core if is_last else full) <= budget:
                found = _Head(cands[j], k, full, core)
                break
            j += 1
        if found is None:
            return None
        while j > 0:
            full, core = st.suffix_counts(cands[j - 1], u)
            if (core if is_last else full) > budget:
                break
            j -= 1
            found = _Head(cands[j], k, full, core)
        return found


class Chunker(SectionGrouper, UnitBuilder, WindowPacker):
    """Chunks parsed documents. Construct once per config; :meth:`chunk_document` is re-entrant.

    ``tokenizer`` defaults to the config's (cl100k offline). All sizes are tokens of that encoding.
    """

    def __init__(self, config: ChunkingConfig | None = None, tokenizer: Tokenizer | None = None) -> None:
        self.config = config or config_from(None, {})
        self.tokenizer = tokenizer or get_tokenizer(self.config.tokenizer, self.config.tokenizer_backend)
        self._counter = _Counter(self.tokenizer)
        self._prefix_cache: dict[str, int] = {}
        self._params: dict[tuple[str, str | None], ChunkParams] = {}
        self._max_level = self.config.hierarchy.max_level  # (a computed property of the config)

    # ------------------------------------------------------------------ public API
    def chunk_document(self, doc: ParsedDocument, params: ChunkParams | None = None) -> list[Chunk]:
        """Chunk one parsed document. Returns [] for a document with no non-blank text. Never raises on content.

        ``params`` defaults to :func:`params_for` of the chunker's config, the document's source type and domain.
        """
        if params is None:
            key = (doc.source_type, doc.domain)
            params = self._params.get(key)
            if params is None:
                params = self._params[key] = params_for(self.config, source_type=doc.source_type, domain=doc.domain)
        if not doc.blocks or not doc.sections:
            return []
        with _gc_paused():
            state = _DocState(doc, self._counter)
            # metadata shared by every chunk of the document (extraction_date: once per document)
            base = {"source_type": doc.source_type, "source_path": doc.source_path, "doc_id": doc.doc_id,
                    "lang": doc.lang, "language": doc.lang, "domain": params.domain, "extraction_date": extraction_day()}
            chunks: list[Chunk] = []
            ids: dict[str, int] = {}
            for g in self._groups(state, params):
                for w in self._chunk_group(state, params, g):
                    c = self._make_chunk(state, w, g, ids, base)
                    if c is not None:
                        chunks.append(c)
            return chunks

    def _prefix(self, anchors: list[str], params: ChunkParams, extra: str = "") -> str:
        crumb = breadcrumb(anchors) if params.parent_titles and anchors else ""
        if extra:
            return f"{crumb}\n{extra}" if crumb else extra
        return crumb

    def _prefix_tokens(self, prefix: str) -> int:
        """Tokens that ``prefix`` adds to the embedded string (prefix + blank line; 0 without a prefix)."""
        if not prefix:
            return 0
        n = self._prefix_cache.get(prefix)
        if n is None:
            n = self.tokenizer.count(prefix + "\n\n")
            if len(self._prefix_cache) > 4096:
                self._prefix_cache.clear()
            self._prefix_cache[prefix] = n
        return n

    # ------------------------------------------------------------------ output
    def _make_chunk(self, st: "_DocState", w: _Window, g: _Group, ids: dict[str, int],
                    base: dict[str, Any]) -> Chunk | None:
        """The chunk record of window ``w``; None when its text is blank (P-nonempty: a piece of only characters that
        str.strip() removes but the pre-tokenizer does not cut at, such as U+001C after a space)."""
        doc = st.doc
        # (the normalised document is sliced when it has the same offsets: normalisation is piecewise at every cut
        # the chunker makes)
        text = st.normalized(w.start, w.end).rstrip()
        if not text:
            return None
        if doc.text_is_raw:
            raw_start, raw_end = w.start, w.end
        else:
            fb = _block_index(doc.blocks, w.start)
            lb = _block_index(doc.blocks, max(w.start, w.end - 1))
            raw_start, raw_end = doc.raw_span(w.start, w.end, fb, lb)
        anchors = w.anchors
        section = g.section
        key = section.key if section is not None and section.key and len(g.secs) == 1 else ""
        key = key or _anchor_key(tuple(anchors))
        n = ids.get(key, 0)
        ids[key] = n + 1
        sec_meta = section.meta if section is not None else {}
        extra = doc.meta.get("chunk_meta")
        # (lists and tuples are copied into fresh lists by the validation)
        fields: dict[str, Any] = {**base, "source_id": sec_meta.get("source_id", doc.doc_id), "anchors": anchors,
                                  "context_prefix": w.prefix, "len_tokens": w.n_tokens, "block_kinds": w.kinds}
        if sec_meta or extra:
            fields.update((k, v) for k, v in {**(extra or {}), **sec_meta}.items() if k != "source_id")
        quality = {"atomic_oversize": True, "oversize_reason": w.oversize} if w.oversize else {}
        # one validation of the whole record (``model_validate`` without its Python wrapper): pydantic-core does it
        # faster than model_construct (measured 16 us vs 23 us for the metadata alone) and it keeps parser-provided
        # fields checked
        return Chunk.__pydantic_validator__.validate_python(
            {"id": f"{doc.doc_id}#{key}#{n:03d}", "text": text, "meta": fields,
             "spans": {"char_start": raw_start, "char_end": raw_end}, "quality": quality})


class _DocState:
    """Per-document token counts and the section of every block.

    Token offsets come from one encode (:meth:`Tokenizer.token_ends`) of a run of blocks; the count of any piece that
    starts and ends on additive boundaries (block starts, line starts, the space before a word) inside the run is then
    the number of tokens between the two byte offsets. Every such offset is checked to be a token end, and a piece that
    fails the check (or text with lone surrogates) is encoded on its own instead.

    Which runs are encoded: a document whose normalisation keeps character offsets (modes ``ascii`` and
    ``same_length``, nearly every document) is encoded lazily, one run at a time: a run short enough to be emitted
    whole (``run_counts``) is counted as one string and needs no offsets; a longer run (a section that will be
    windowed) is encoded once with offsets (:meth:`_load_range`), which then serve every cut inside it. So each
    character is encoded about once, and only windowed sections pay for offsets (a token-id list and arrays cost
    ~40 % more than a bare count). Documents whose normalisation changes lengths (CRLF, BOMs, NFC: mode ``parts``)
    are encoded whole with offsets up front. Small documents (mode ``small``) are counted block by block.
    """

    __slots__ = ("doc", "counter", "full", "core", "_section_index", "kinds", "_starts", "_ends", "_bbyte", "_mode", "_cum",
                 "_byte_of_map", "norm", "_lazy", "_range", "_ranges", "_rbyte")

    def __init__(self, doc: ParsedDocument, counter: _Counter) -> None:
        self.doc = doc
        self.counter = counter
        self._section_index: list[int] | None = None
        self.kinds = [b.kind for b in doc.blocks]
        self._starts: list[int] | None = None
        self._ends: np.ndarray | None = None  # token end offsets of the current run, in bytes from its start
        self._bbyte: np.ndarray | None = None
        self._mode = "encode"
        self._byte_of_map: np.ndarray | None = None
        self.norm: str | None = None  # the normalised text when it has the same character offsets as doc.text
        self.full: list[int] = []
        self.core: list[int] = []
        self._lazy = False  # runs encoded on demand (_load_range)
        self._range: tuple[int, int] | None = None  # (first, last) block of the run whose offsets are loaded
        self._ranges: dict[tuple[int, int], tuple[np.ndarray | None, int]] = {}
        self._rbyte = 0  # UTF-8 offset of the loaded run's start in the normalised text
        self._count_blocks()
        self._cum = list(itertools.accumulate(self.full, initial=0)) if self._mode != "small" and not self._lazy else []

    @property
    def section_index(self) -> list[int]:
        """Index (in ``doc.sections``) of the section of every block; built on first use (windowing only)."""
        if self._section_index is None:
            idx = [0] * len(self.doc.blocks)
            for k, s in enumerate(self.doc.sections):
                idx[s.first : s.last] = [k] * (s.last - s.first)
            self._section_index = idx
        return self._section_index

    def _count_blocks(self) -> None:
        text, blocks = self.doc.text, self.doc.blocks
        ascii_text = text.isascii() and "\r" not in text  # normalisation is the identity
        small = len(blocks) <= _SMALL_DOC_BLOCKS and len(text) <= 8 * 1024  # encoding each costs less than arrays
        if ascii_text:
            self.norm = text
        elif not small or ("\r" not in text and "\ufeff" not in text):  # (else the lengths differ anyway)
            norm = normalize_inner(text)  # once per document: counts and chunk texts slice it
            if len(norm) == len(text):  # odd spaces, accents, CJK...: same character offsets
                self.norm = norm
        if small:
            self._mode = "small"  # counted on demand: a run that is emitted whole is encoded once (run_counts)
            self.full = [-1] * len(blocks)
            self.core = [-1] * len(blocks)
            return
        if self.norm is not None:  # (text with lone surrogates, which has no UTF-8 form, is found in _load_range)
            self._mode = "ascii" if ascii_text else "same_length"  # char offsets are byte offsets / map via _byte_of
            self._lazy = True
            self.full = [-1] * len(blocks)
            self.core = [-1] * len(blocks)
            return
        # CRLF, BOMs or NFC changed lengths: normalise block by block (line starts are safe cuts), encode it whole
        self._mode = "parts"
        parts = [normalize_inner(text[b.start : b.end]) for b in blocks]
        lead = normalize_inner(text[: blocks[0].start])
        try:
            bb = list(itertools.accumulate((len(p.encode("utf-8")) for p in parts), initial=len(lead.encode("utf-8"))))
            bbyte = np.asarray(bb, dtype=np.int64)
            cbyte = np.asarray([s + len(p.rstrip().encode("utf-8")) for s, p in zip(bb, parts)], dtype=np.int64)
            ends = self.counter.tok.token_ends(lead + "".join(parts))
        except UnicodeEncodeError:  # lone surrogates: no UTF-8 offsets
            ends = None
        counts = self._offset_counts(ends, bbyte, cbyte) if ends is not None and len(ends) else None
        if counts is None:
            self._mode = "encode"
            pairs = [self.piece(b.start, b.content_end, b.end) for b in blocks]
            self.full = [p[0] for p in pairs]
            self.core = [p[1] for p in pairs]
            return
        self._ends, self._bbyte = ends, bbyte
        self._range = (0, len(blocks))
        self.full, self.core = counts  # core is -1 where it needs the tail delta: computed on demand (core_of)

    def _load_range(self, first: int, last: int) -> None:
        """Lazy modes: make the run blocks[first:last] the one whose token offsets are loaded (encoding it once per
        document, cached), and fill its block counts. A run whose block starts are not all token ends, or whose text
        cannot be encoded to UTF-8, gets per-block encodes and no offsets (the cut helpers then encode pieces)."""
        key = (first, last)
        if self._range == key:
            return
        cached = self._ranges.get(key)
        if cached is None:
            blocks = self.doc.blocks
            norm = self.norm
            assert norm is not None
            s0, e0 = blocks[first].start, blocks[last - 1].end
            try:
                ends = self.counter.tok.token_ends(norm[s0:e0])
            except UnicodeEncodeError:  # lone surrogates: no UTF-8 offsets
                ends = None
            counts, rbyte = None, 0
            if ends is not None and len(ends):
                starts = [b.start for b in blocks[first:last]]
                starts.append(e0)
                content_ends = [b.content_end for b in blocks[first:last]]
                if self._mode == "ascii":
                    rbyte = s0
                    bounds = np.asarray(starts, dtype=np.int64) - s0
                    content = np.asarray(content_ends, dtype=np.int64) - s0
                else:
                    byte_of = self._byte_of()
                    rbyte = int(byte_of[s0])
                    bounds = byte_of[starts].astype(np.int64) - rbyte
                    content = byte_of[content_ends].astype(np.int64) - rbyte
                counts = self._offset_counts(ends, bounds, content)
            if counts is None:
                ends = None
                pairs = [self.piece(b.start, b.content_end, b.end) for b in blocks[first:last]]
                counts = ([p[0] for p in pairs], [p[1] for p in pairs])
            self.full[first:last], self.core[first:last] = counts
            cached = self._ranges[key] = (ends, rbyte)
        self._ends, self._rbyte = cached
        self._range = key

    def piece(self, start: int, content_end: int, end: int) -> tuple[int, int]:
        """(tokens with trailing whitespace, without) of the document piece ``[start, end)`` whose content ends at
        ``content_end``, by encoding it (the normalised document is sliced when it has the same offsets)."""
        if self.norm is None:
            return self.counter.piece(self.doc.text, start, content_end, end)
        c_core = self.counter.count(self.norm[start:content_end])
        return c_core + self.counter.tail_delta(self.doc.text, start, content_end, end), c_core

    def normalized(self, start: int, end: int) -> str:
        """``normalize_inner(doc.text[start:end])`` for cut points ``start`` and ``end`` chosen by the chunker (line,
        word or grapheme-cluster boundaries, where the normalisation is piecewise)."""
        if self.norm is not None:
            return self.norm[start:end]
        return normalize_inner(self.doc.text[start:end])

    @staticmethod
    def _offset_counts(ends: np.ndarray, bounds: np.ndarray, content: np.ndarray) -> tuple[list[int], list[int]] | None:
        """Counts of contiguous pieces from token end offsets: ``bounds`` = byte offsets of the piece starts plus
        the last end, ``content`` = byte offsets of the content ends. Returns (with trailing whitespace, without)
        lists, or None when a bound is not a token end. The core count is the tokens before the content end when
        that is a token end (the trailing whitespace is then separate tokens); otherwise the final punctuation run
        absorbed the newlines and the core is -1 (the caller applies the tail delta)."""
        idx = ends.searchsorted(bounds, side="right")
        if not np.all((bounds == 0) | ((idx > 0) & (ends[np.maximum(idx - 1, 0)] == bounds))):
            return None
        cidx = ends.searchsorted(content, side="right")
        at_end = (cidx > 0) & (ends[np.maximum(cidx - 1, 0)] == content)
        return np.diff(idx).tolist(), np.where(at_end, cidx - idx[:-1], -1).tolist()

    def _byte_of(self) -> np.ndarray:
        """UTF-8 offset of every character position of the normalised text (mode ``same_length``), built when the
        first run is encoded with offsets (only documents with sections that must be windowed need it); the cut
        helpers then read ``_byte_of_map`` directly."""
        if self._byte_of_map is None:
            assert self.norm is not None
            cp = np.frombuffer(self.norm.encode("utf-32-le"), dtype=np.uint32)
            width = np.ones(len(cp), dtype=np.int32)  # UTF-8 bytes per character, added in place (low peak memory)
            width += cp >= 0x80
            width += cp >= 0x800
            width += cp >= 0x10000
            del cp
            byte_of = np.empty(len(width) + 1, dtype=np.int32 if 4 * len(width) < 2**31 else np.int64)
            byte_of[0] = 0
            np.cumsum(width, out=byte_of[1:])
            self._byte_of_map = byte_of
        return self._byte_of_map

    def core_of(self, bi: int) -> int:
        """Tokens of block ``bi`` without its trailing whitespace (computed on first use)."""
        c = self.core[bi]
        if c < 0:
            b = self.doc.blocks[bi]
            if self.full[bi] < 0:  # small document: encode the block
                self.full[bi], c = self.piece(b.start, b.content_end, b.end)
                self.core[bi] = c
                return c
            c = self.core[bi] = self.full[bi] - self.counter.tail_delta(self.doc.text, b.start, b.content_end, b.end)
        return c

    def piece_counts(self, bi: int, pieces: list[tuple[int, int, int, bool]]) -> list[tuple[int, int, bool]]:
        """(with trailing whitespace, without, exact) counts of contiguous pieces ``(start, content_end, end, clean)``
        inside block ``bi``, in order. ``clean`` says the piece starts on an additive boundary; the first piece must
        start on a line start or at the block start, the last must end at a line end or the block end.

        A piece next to a boundary that is not additive (an HTML row starting mid-line) gets an estimate from the
        token offsets, 2 tokens over per such boundary, with ``exact`` False: windows holding it are re-encoded.
        Without token offsets every piece is encoded."""
        text, counter = self.doc.text, self.counter
        if not pieces:
            return []
        if self._ends is None:
            return [(*self.piece(s, ce, e), True) for s, ce, e, _ in pieces]
        positions = [p[0] for p in pieces]
        positions.append(pieces[-1][2])
        content = [p[1] for p in pieces]
        if self._mode == "ascii":
            bounds = np.asarray(positions, dtype=np.int64) - self._rbyte
            cont = np.asarray(content, dtype=np.int64) - self._rbyte
        elif self._mode == "same_length":
            bounds = self._byte_of_map[positions].astype(np.int64) - self._rbyte
            cont = self._byte_of_map[content].astype(np.int64) - self._rbyte
        else:
            b = self.doc.blocks[bi]
            bl, cl, byte, pos = [], [], int(self._bbyte[bi]), b.start
            for s, ce, e, _ in pieces:
                byte += len(normalize_inner(text[pos:s]).encode("utf-8"))
                bl.append(byte)
                cl.append(byte + len(normalize_inner(text[s:ce]).encode("utf-8")))
                pos = s
            bl.append(byte + len(normalize_inner(text[pos : pieces[-1][2]]).encode("utf-8")))
            bounds, cont = np.asarray(bl, dtype=np.int64), np.asarray(cl, dtype=np.int64)
        ends = self._ends
        idx = ends.searchsorted(bounds, side="right")
        good = ((bounds == 0) | ((idx > 0) & (ends[np.maximum(idx - 1, 0)] == bounds))).tolist()
        cidx = ends.searchsorted(cont, side="right")
        at_end = ((cidx > 0) & (ends[np.maximum(cidx - 1, 0)] == cont)).tolist()
        idx_l, cidx_l = idx.tolist(), cidx.tolist()
        td = counter.tail_delta
        out = []
        n = len(pieces)
        for k, (s, ce, e, clean) in enumerate(pieces):
            f = idx_l[k + 1] - idx_l[k]
            ok_start = good[k] and (clean or k == 0)
            ok_end = good[k + 1] and (k + 1 == n or pieces[k + 1][3])
            if ok_start and ok_end:
                c = cidx_l[k] - idx_l[k] if at_end[k] else (f - td(text, s, ce, e) if e > ce else f)
                out.append((f, c, True))
            else:
                f += 2 * ((not ok_start) + (not ok_end))
                out.append((f, f - td(text, s, ce, e) if e > ce else f, False))
        return out

    def without_lead(self, s: int, start: int, full: int, core: int, ce: int, e: int, exact: bool) -> tuple[int, int]:
        """Counts of ``text[start:e]`` for a piece ``text[s:e]`` counted as (full, core) that starts with the
        whitespace ``text[s:start]``: only its first word is recounted (the pre-tokenizer attaches the space to that
        word and nothing after the word changes), when the word's end is a token end; else the piece is encoded."""
        text = self.doc.text
        w = start
        lim = min(ce, start + 64)
        while w < lim and not text[w].isspace():
            w += 1
        # (a punctuation word followed by a line break is one pre-token with the break: recount the whole piece)
        if exact and w < ce and self._ends is not None and (text[w] not in "\r\n" or text[w - 1].isalnum()):
            i0, i1 = self.token_index(s), self.token_index(w)
            if i0 is not None and i1 is not None:
                delta = self.counter.count(self.normalized(start, w)) - (i1 - i0)
                return full + delta, core + delta
        return self.piece(start, ce, e)

    def suffix_counts(self, c: int, u: _Unit) -> tuple[int, int]:
        """(with trailing whitespace, without) counts of ``text[c:u.end]`` for a line or word start ``c`` inside
        unit ``u``: from token offsets (the boundary before ``c``'s whitespace, plus a recount of ``c``'s first
        word) when they are known and exact there, else by encoding the suffix."""
        text = self.doc.text
        if self._ends is not None and u.exact and self._mode in ("ascii", "same_length"):
            ie = self.token_index(u.end)
            if ie is not None:
                full = None
                if text[c - 1] in "\r\n":  # a line start: an additive boundary itself
                    ic = self.token_index(c)
                    if ic is not None:
                        full = ie - ic
                elif text[c - 1].isspace():  # after a space: the space belongs to the first word's token
                    ib = self.token_index(c - 1)
                    if ib is not None:
                        full = self.without_lead(c - 1, c, ie - ib, ie - ib, u.content_end, u.end, True)[0]
                if full is not None:
                    return full, full - self.counter.tail_delta(text, c, u.content_end, u.end)
        return self.piece(c, u.content_end, u.end)

    def token_index(self, pos: int) -> int | None:
        """Number of tokens before character ``pos`` when ``pos`` is a token end of the document encoding (token
        offsets known, i.e. modes ``ascii`` / ``same_length``); else None."""
        if self._ends is None or self._mode not in ("ascii", "same_length"):
            return None
        off = (pos if self._mode == "ascii" else int(self._byte_of_map[pos])) - self._rbyte
        if off <= 0:
            return 0 if off == 0 else None
        i = int(self._ends.searchsorted(off, "right"))
        return i if i > 0 and int(self._ends[i - 1]) == off else None

    def limit_position(self, ip: int, n: int, end: int) -> int | None:
        """The character position where the ``n`` tokens after token index ``ip`` end (rounded down to a character
        start), or None when the text from there to ``end`` has at most ``n`` tokens."""
        assert self._ends is not None
        e_off = (end if self._mode == "ascii" else int(self._byte_of_map[end])) - self._rbyte
        if int(self._ends.searchsorted(e_off, "right")) - ip <= n:
            return None
        byte = int(self._ends[ip + n - 1]) + self._rbyte
        if self._mode == "ascii":
            return byte
        byte_of = self._byte_of_map  # (the query in the map's dtype: a Python int would make numpy copy the map)
        return int(byte_of.searchsorted(byte_of.dtype.type(byte), "right")) - 1

    def block_at(self, pos: int) -> int:
        if self._starts is None:
            self._starts = [b.start for b in self.doc.blocks]
        return max(0, bisect.bisect_right(self._starts, pos) - 1)

    def block_counts(self, first: int, last: int) -> list[tuple[int, int]]:
        """(with trailing whitespace, without) token counts of blocks[first:last]. In the lazy modes this run's token
        offsets become the loaded ones (windowing a section cuts inside it)."""
        if self._lazy:
            self._load_range(first, last)
        cores = [self.core_of(k) for k in range(first, last)]
        return list(zip(self.full[first:last], cores))

    def run_counts(self, first: int, last: int, whole_limit: int = 0) -> tuple[int, int]:
        """Exact counts (with trailing whitespace, without) of the run blocks[first:last] (additive at block starts).
        In a small document or a lazily encoded one, a run short enough to be emitted whole (``whole_limit`` tokens,
        at 3.5 characters a token) is counted as one string; a longer one is summed from block counts (from the run's
        token offsets in lazy mode), which windowing needs anyway."""
        if self._mode == "small" or self._lazy:
            b0, b1 = self.doc.blocks[first], self.doc.blocks[last - 1]
            if b1.content_end - b0.start <= 3.5 * whole_limit:
                return self.piece(b0.start, b1.content_end, b1.end)
            counts = self.block_counts(first, last)
            f = sum(c[0] for c in counts[:-1])
            return f + counts[-1][0], f + counts[-1][1]
        f = self._cum[last - 1] - self._cum[first]
        return f + self.full[last - 1], f + self.core_of(last - 1)


class _gc_paused:
    """Context manager pausing the cyclic garbage collector, restoring its previous state. Scanning and chunking
    allocate many short-lived objects and create no reference cycles, so the collector only costs time there (about
    10 % of the chunker, measured); reference counting still frees everything. (A class, not ``@contextmanager``: the
    generator version costs ~2 us per use, twice per document.)"""

    __slots__ = ("_was_enabled",)

    def __enter__(self) -> None:
        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self._was_enabled:
            gc.enable()


def _standalone(g: _Group) -> bool:
    return g.section is not None and g.section.standalone


def _merge_groups(a: _Group, b: _Group, section: Section | None) -> _Group:
    return _Group(_common_prefix(a.anchors, b.anchors), a.first, b.last, section, max(a.depth, b.depth),
                  secs=a.secs + b.secs)


def _merge_units(a: _Unit, b: _Unit) -> _Unit:
    """One unit covering a then b (b must start where a ends)."""
    return _Unit(a.start, b.end, b.content_end, a.c_full + b.c_full, a.c_full + b.c_core, a.clean, a.cont_prefix,
                 a.parts + b.parts, a.sec, a.oversize or b.oversize, a.lead, a.exact and b.exact and b.clean,
                 a.whole and b.whole)


def _block_index(blocks: list[Block], pos: int) -> int:
    lo, hi = 0, len(blocks) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if blocks[mid].start <= pos:
            lo = mid
        else:
            hi = mid - 1
    return lo


_FENCE_LINE = re.compile(r"^\s*(`{3,}|~{3,})\s*$")
_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _is_fence_line(s: str) -> bool:
    return bool(_FENCE_LINE.match(s))


def _line_pieces(text: str, start: int, end: int, group_fences: bool = True) -> list[tuple[int, int, int, str, bool]]:
    """Lines of text[start:end] as (start, content_end, end, fence_line, True); blank lines join the line before them
    (the last element says the piece starts on an additive boundary: a line start always does).

    With ``group_fences`` a fenced code region inside the range (a fence in a list item or an admonition) is one
    piece from its opening to its closing fence line, and ``fence_line`` holds the opening line (else "").
    """
    out: list[list[Any]] = []
    region = False
    fence_close: re.Pattern[str] | None = None
    pos = start
    bounds = [(m.start(), m.end()) for m in _LINE_BREAK.finditer(text, start, end)]
    if not bounds or bounds[-1][1] < end:
        bounds.append((end, end))
    for le, nxt in bounds:
        s = pos
        pos = nxt
        line = text[s:le]
        blank = not line.strip() or not line.replace("\ufeff", "").strip()
        if region:
            if not blank:
                out[-1][1] = _rstrip_end(text, s, le)
            out[-1][2] = nxt
            if fence_close is not None and fence_close.match(line):
                region, fence_close = False, None
            continue
        if blank:
            if out:
                out[-1][2] = nxt
            continue
        out.append([s, _rstrip_end(text, s, le), nxt, ""])
        if group_fences:
            fm = _FENCE_OPEN.match(line)
            if fm and not (fm.group(1)[0] == "`" and "`" in line[fm.end() :]):
                fence_close = re.compile(r"^[ \t]*" + re.escape(fm.group(1)[0]) + "{" + str(len(fm.group(1))) + r",}[ \t]*$")
                region = True
                out[-1][3] = line
    if out:
        out[-1][2] = end
    return [(s, ce, e, f, True) for s, ce, e, f in out]


def _rstrip_end(text: str, s: int, e: int) -> int:
    """End of ``text[s:e]`` without its trailing whitespace and BOMs (the normalisation deletes BOMs)."""
    while e > s and (text[e - 1].isspace() or text[e - 1] == "\ufeff"):
        e -= 1
    return e


def _glue_fence_ends(units: list[_Unit], text: str, header_end: int) -> list[_Unit]:
    """Keep the header rows / opening fence line with the first data line, and a closing fence with the last line."""
    while len(units) > 1 and units[0].content_end <= header_end and units[1].clean:
        units[0:2] = [_merge_units(units[0], units[1])]
    if len(units) > 1 and units[-1].clean and _is_fence_line(text[units[-1].start : units[-1].content_end]):
        units[-2:] = [_merge_units(units[-2], units[-1])]
    return units


_TR_OPEN = re.compile(r"<tr\b", re.IGNORECASE)


def _html_row_pieces(text: str, b: Block) -> list[tuple[int, int, int, str, bool]]:
    """Pieces of an HTML table block starting at each ``<tr``; the first piece is everything before the second row.
    A row that does not start a line is not an additive boundary (``<tr`` may merge with the preceding ``>``)."""
    starts = [b.start] + [m.start() for m in _TR_OPEN.finditer(text, b.header_end or b.start, b.end)]
    starts = sorted(set(s for s in starts if b.start <= s < b.content_end))
    out = []
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else b.end
        ce = _rstrip_end(text, s, e)
        if ce > s:
            out.append((s, ce, e, "", k == 0 or text[s - 1] in "\r\n"))
    return out


def _last_word_start(text: str, start: int, q: int, lo: int) -> int | None:
    """The last end ``e`` of a :data:`_WORD_CUT` match in ``text[start:q + 1]`` with ``lo < e``, or None.

    The match ends are exactly the positions ``e <= q`` whose previous character (at ``start`` or later) is whitespace
    and whose own character may start a piece, so the last one is found by scanning a short tail first and the whole
    range only when the tail has none (the result is the same; long lines of prose have a word start every few
    characters)."""
    tail = q + 1 - 48
    best = None
    if tail > start:
        for m in _WORD_CUT.finditer(text, tail, q + 1):
            best = m.end()
        if best is not None and best > lo:
            return best
        best = None
    for m in _WORD_CUT.finditer(text, start, q + 1):
        if lo < m.end():
            best = m.end()
    return best


def _best_cut(text: str, p: int, lead: int, q: int, ce: int) -> tuple[int, int, bool]:
    """Where to end a piece that starts at ``p`` (content from ``p + lead``) and must end by ``q``: (cut, lead of
    the next piece, next piece starts on an additive boundary). Prefers the last sentence start in the second half of
    the range, then the last word start, then the last grapheme-cluster boundary (a cut inside a word is not
    additive). Always makes progress (cut > p + lead) and never splits a grapheme cluster."""
    lo = p + lead + 1
    if q >= ce:
        return ce, 0, True
    half = max(lo, (p + q) // 2)
    best = None
    for m in _SENTENCE_CUT.finditer(text, half, q + 1):
        if lo < m.end() <= q:
            best = m.end()
    if best is None:
        best = _last_word_start(text, half, q, lo)
    if best is None:
        best = _last_word_start(text, lo, q, lo)
    if best is not None:
        k = best
        while k > p and text[k - 1].isspace() and text[k - 1] not in "\r\n":
            k -= 1
        if k > p + lead and text[k - 1] in "\r\n":
            return k, best - k, True  # whitespace with a line break: cut at the line start
        if text[best - 1].isspace() and best - 1 > p + lead:
            return best - 1, 1, True  # before the last whitespace character: it belongs to the next word's token
        return best, 0, False  # after a CJK full stop: no whitespace, not additive
    reach = 64
    while True:  # boundaries of whole clusters only: the scan runs past q until a cluster ends after it
        end = min(ce, q + reach)
        bounds = grapheme_boundaries(text, p + lead, end)
        if end < ce:
            bounds.pop()  # the scan stopped at `end`, which may be inside a cluster
        if end == ce or (bounds and bounds[-1] > q):
            break
        reach *= 4
    cut = next((x for x in reversed(bounds) if lo <= x <= q), None)
    if cut is None:  # one cluster longer than the limit: take it whole (flagged oversize by the caller if it is)
        cut = next((x for x in bounds if x >= lo), ce)
    return cut, 0, False


def resolve_config(config: ChunkingConfig | str | None = None, **overrides: Any) -> ChunkingConfig:
    """The chunking config for ``chunk_text``-style overrides: :func:`~heritage_pipeline.config.config_from` of
    ``config`` (a config, a ``chunking.yaml`` path or None for the default file) with ``overrides`` applied, where a
    lower ``max_tokens`` also clamps the ``sliding_window`` and domain-preset sizes above it (``chunking.yaml``
    itself rejects sizes over the cap; a caller who only lowers the cap means "no chunk over this").
    Raises :class:`~heritage_pipeline.config.ConfigError` naming the bad key and its allowed range."""
    cap = overrides.get("max_tokens", overrides.get("quality.length.max_tokens"))
    if isinstance(cap, int) and not any(k.startswith("domains") for k in overrides):
        base = config if isinstance(config, ChunkingConfig) else config_from(config, {})
        overrides = dict(overrides)
        for name, preset in base.domains.presets.items():
            if preset.size_tokens > cap:
                overrides[f"domains.presets.{name}.size_tokens"] = cap
        if "size_tokens" not in overrides and base.sliding_window.size_tokens > cap:
            overrides["size_tokens"] = cap
    return config_from(config, overrides)


def chunk_text(text: str, *, config: ChunkingConfig | str | None = None, doc_id: str = "text", source_path: str = "<text>",
               lang: str = "und", domain: str | None = None, tokenizer: Tokenizer | None = None, **overrides: Any) -> list[Chunk]:
    """Chunk Markdown or plain text, like a LangChain or Chonkie splitter.

    ``config``: a :class:`ChunkingConfig`, a path to a ``chunking.yaml`` or None for ``configs/chunking.yaml``.
    ``overrides``: config keys, e.g. ``mode="sliding"``, ``size_tokens=400``, ``overlap_ratio=0.15``,
    ``max_tokens=800``, ``min_tokens=100``, ``adaptive_overlap=True`` (the short names of
    :data:`heritage_pipeline.config.OVERRIDE_ALIASES`, or any dotted key such as ``"hierarchy.levels"``).
    ``domain`` picks a preset of ``domains.presets`` (``tech``, ``legal``, ``faq``); None keeps the
    ``sliding_window`` sizes.

    Returns chunks in document order with ``id`` (``<doc_id>#<heading path>#<nnn>``), ``text``,
    ``char_start``/``char_end`` (code points into ``text``, half-open; ``text`` is the normalised slice),
    ``anchors``, ``context_prefix`` and ``len_tokens`` (exact count of prefix + blank line + text). An empty or
    blank text gives ``[]``. Raises :class:`~heritage_pipeline.config.ConfigError` for invalid overrides (naming
    the key and its allowed range) and ValueError for an unknown domain.
    """
    cfg = resolve_config(config, **overrides)
    if domain is not None and domain not in cfg.domains.presets:
        raise ValueError(f"unknown domain {domain!r}: choose one of {sorted(cfg.domains.presets)} or None")
    chunker = _chunker_for(cfg, tokenizer)
    with _gc_paused():
        doc = parse_markdown(text, doc_id=doc_id, source_path=source_path, lang=lang, max_level=chunker._max_level)
        doc.domain = domain
        return chunker.chunk_document(doc)


_CHUNKERS: dict[tuple[int, int], Chunker] = {}


def _chunker_for(cfg: ChunkingConfig, tokenizer: Tokenizer | None) -> Chunker:
    key = (id(cfg), id(tokenizer))
    ch = _CHUNKERS.get(key)
    if ch is None or ch.config is not cfg:
        ch = Chunker(cfg, tokenizer)
        if len(_CHUNKERS) > 32:
            _CHUNKERS.clear()
        _CHUNKERS[key] = ch
    return ch
