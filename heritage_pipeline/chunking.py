"""The chunking engine: exact, structure-preserving chunks in hierarchical, sliding and hybrid modes.

Input: a :class:`~heritage_pipeline.structure.ParsedDocument` (blocks + heading sections). Output: :class:`Chunk`
records whose ``text`` is ``normalize(doc.text[start:end])`` for offsets chosen *while splitting* (never searched
for afterwards) and whose ``meta.len_tokens`` is the exact cl100k count of what is embedded
(``meta.context_prefix`` + blank line + ``text``).

Sizes are cl100k tokens. ``size_tokens`` is the target, ``max_tokens`` the hard cap on the embedded string.

Modes
    ``hierarchical``: one chunk per heading section (H1-H3 by default); a section over the cap is packed into
    windows at block boundaries without overlap.
    ``sliding``: token windows of ``size_tokens`` with ``overlap_tokens`` over the whole document, still cut only at
    block / line / sentence / word / grapheme boundaries.
    ``hybrid``: hierarchy first; sections longer than ``split_factor x size_tokens`` (or over the cap) get windows.

Rules (SPEC.md §3): a heading is glued to the block after it; a table, fenced code block or blockquote under the
cap is one unit and is never cut; a larger one is split at row / line boundaries and the table header (or the
opening fence line) is repeated in the next piece's ``context_prefix``; only adjacent sections share a chunk
(a heading with no body joins the section after it; small adjacent sections merge when ``merge_small_sections``);
a window's tail under ``min_tokens`` merges into the previous window when the result stays under the cap.

Exact counts at tokenizer speed: every unit starts at the start of a non-blank line, a boundary at which cl100k's
pre-tokenizer never merges across (its pieces end at line breaks or before the next non-space), so the count of
a run of units is the sum of their counts with trailing whitespace, plus the last unit's count without it. The
trailing-whitespace delta is computed on the unit's final punctuation run only (the one pre-token piece that can
absorb newlines). Windows containing a boundary inside a line (sentence/word/grapheme splits) are re-encoded.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import regex

from .config import ChunkingConfig, config_from
from .markdown import parse_markdown
from .models import Chunk, ChunkMeta, Quality, Spans, join_prefix
from .structure import ATOMIC_KINDS, Block, ParsedDocument, Section
from .text import grapheme_boundaries, normalize, normalize_inner
from .tokenizer import Tokenizer, get_tokenizer

BREADCRUMB_SEP = " › "
_TAIL_PUNCT = regex.compile(r" ?[^\s\p{L}\p{N}]+$")
_SENTENCE_END = regex.compile(r"(?<=[.!?…;:。！？；])\s+|(?<=[。！？])")
_WS_RUN = re.compile(r"\s+")
_WORD = regex.compile(r"\w+")


@dataclass(frozen=True)
class ChunkParams:
    """Resolved sizes for one document (tokens are cl100k). Built by :func:`params_for`."""

    mode: str = "hybrid"
    size_tokens: int = 700
    max_tokens: int = 1200
    overlap_tokens: int = 140
    min_tokens: int = 300
    split_factor: float = 1.5
    adaptive_overlap: bool = False
    keep_atomic: frozenset[str] = ATOMIC_KINDS
    parent_titles: bool = True
    merge_small_sections: bool = True
    domain: str | None = None


def params_for(config: ChunkingConfig, *, source_type: str = "document", domain: str | None = None) -> ChunkParams:
    """Chunk sizes for a source type and domain from the config (SPEC.md §2 table and §3 presets)."""
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
    return ChunkParams(
        mode=config.mode,
        size_tokens=min(size, cap),
        max_tokens=cap,
        overlap_tokens=overlap,
        min_tokens=min(config.quality.length.min_tokens, size),
        split_factor=sw.split_factor,
        adaptive_overlap=sw.adaptive_overlap,
        keep_atomic=frozenset(keep),
        parent_titles=config.context.parent_titles,
        merge_small_sections=merge,
        domain=domain,
    )


@dataclass(slots=True)
class _Unit:
    start: int
    end: int  # includes trailing whitespace (== next unit's start inside a block run)
    content_end: int
    c_full: int
    c_core: int
    clean: bool  # starts at the start of a line: the count boundary before it is additive
    cont_prefix: str = ""  # table header / fence line repeated when a window starts on this unit
    kinds: tuple[str, ...] = ()
    oversize: str | None = None  # reason when this unit alone cannot fit the cap


class _Counter:
    """Token counts of normalised text pieces with the additive-boundary bookkeeping described in the module doc."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tok = tokenizer
        self.count = tokenizer.count

    def piece(self, text: str, start: int, content_end: int, end: int) -> tuple[int, int]:
        """(count with trailing whitespace, count without) of ``text[start:end]`` whose content ends at ``content_end``."""
        core = normalize_inner(text[start:content_end])
        c_core = self.count(core)
        if end <= content_end:
            return c_core, c_core
        trail = normalize_inner(text[content_end:end])
        punct = ""
        if core and not core[-1].isalnum():  # str.isalnum() is exactly \p{L} | \p{N}
            m = _TAIL_PUNCT.search(core, max(0, len(core) - 256))
            punct = m.group() if m else ""
            if len(punct) >= 255:
                m = _TAIL_PUNCT.search(core)
                punct = m.group() if m else ""
        return c_core + _tail_delta(self.tok, punct, trail), c_core


@lru_cache(maxsize=4096)
def _tail_delta_cached(name: str, punct: str, trail: str) -> int:
    tok = get_tokenizer(name)
    return tok.count(punct + trail) - tok.count(punct)


def _tail_delta(tok: Tokenizer, punct: str, trail: str) -> int:
    if len(trail) > 64 or len(punct) > 64:
        return tok.count(punct + trail) - tok.count(punct)
    return _tail_delta_cached(tok.name, punct, trail)


def slug(s: str, max_len: int = 48) -> str:
    """Id-safe slug of a heading: lowercase word characters joined by ``-`` (Unicode letters kept)."""
    words = _WORD.findall(s.lower())
    out = "-".join(words)[:max_len].strip("-")
    return out or "untitled"


def breadcrumb(anchors: list[str]) -> str:
    """The anchor path as shown to users and embedded as context: ``H1 › H2 › H3``."""
    return BREADCRUMB_SEP.join(anchors)


def lexical_entropy(text: str) -> float:
    """Normalised lexical entropy in [0, 1]: Shannon entropy of the word distribution over log2(number of words).

    0 means one word repeated; 1 means every word distinct. Used by the adaptive-overlap rule.
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
    varied vocabulary gives more overlap, as the seed intends.
    """
    return min(0.25, 0.10 + 0.15 * lexical_entropy(text))


class Chunker:
    """Chunks parsed documents. Construct once per config; :meth:`chunk_document` is re-entrant.

    ``tokenizer`` defaults to the config's (cl100k offline). All sizes are cl100k tokens.
    """

    def __init__(self, config: ChunkingConfig | None = None, tokenizer: Tokenizer | None = None) -> None:
        self.config = config or config_from(None, {})
        self.tokenizer = tokenizer or get_tokenizer(self.config.tokenizer)
        self._counter = _Counter(self.tokenizer)

    # ------------------------------------------------------------------ public API
    def chunk_document(self, doc: ParsedDocument, params: ChunkParams | None = None) -> list[Chunk]:
        """Chunk one parsed document. Returns [] for a document with no non-blank text. Never raises on content."""
        if params is None:
            params = params_for(self.config, source_type=doc.source_type, domain=doc.domain)
        if not doc.blocks:
            return []
        counts = self._block_counts(doc)
        if params.mode == "sliding" and not any(s.standalone for s in doc.sections):
            groups = [(doc.sections[0].anchors if doc.sections else [], 0, len(doc.blocks), doc.sections[0] if doc.sections else None)]
            return self._emit(doc, params, counts, groups, windows_always=True)
        groups = self._section_groups(doc, params, counts)
        return self._emit(doc, params, counts, groups, windows_always=False)

    # ------------------------------------------------------------------ counting
    def _block_counts(self, doc: ParsedDocument) -> list[tuple[int, int]]:
        text = doc.text
        return [self._counter.piece(text, b.start, b.content_end, b.end) for b in doc.blocks]

    def _run_tokens(self, counts: list[tuple[int, int]], first: int, last: int) -> int:
        """Exact token count of normalised blocks[first:last] (last exclusive) by additivity."""
        if last <= first:
            return 0
        return sum(c[0] for c in counts[first : last - 1]) + counts[last - 1][1]

    def _prefix_tokens(self, prefix: str) -> int:
        return self.tokenizer.count(prefix + "\n\n") if prefix else 0

    # ------------------------------------------------------------------ sections
    def _section_groups(self, doc: ParsedDocument, params: ChunkParams, counts) -> list[tuple[list[str], int, int, Section]]:
        """Sections after merging: a heading-only section joins the next one; small adjacent sections merge."""
        secs = [s for s in doc.sections if s.last > s.first]
        groups: list[list[Any]] = []  # [anchors, first, last, section]
        pending: list[Any] | None = None
        for s in secs:
            body_only_heading = (s.last - s.first == 1 and doc.blocks[s.first].kind == "heading")
            if pending is not None:
                # a heading with no body is glued to the following section (its breadcrumb is the following one's)
                s_anchors = s.anchors
                cur = [s_anchors, pending[1], s.last, s]
                pending = None
            else:
                cur = [s.anchors, s.first, s.last, s]
            if body_only_heading and not s.standalone and params.merge_small_sections is not None:
                pending = cur
                continue
            groups.append(cur)
        if pending is not None:
            groups.append(pending)
        if params.merge_small_sections:
            groups = self._merge_small(groups, params, counts)
        return [(g[0], g[1], g[2], g[3]) for g in groups]

    def _merge_small(self, groups: list[list[Any]], params: ChunkParams, counts) -> list[list[Any]]:
        out: list[list[Any]] = []
        for g in groups:
            if out and not g[3].standalone and not out[-1][3].standalone:
                prev = out[-1]
                prev_tok = self._run_tokens(counts, prev[1], prev[2])
                cur_tok = self._run_tokens(counts, g[1], g[2])
                if prev_tok < params.min_tokens and cur_tok < params.min_tokens:
                    anchors = _common_prefix(prev[0], g[0])
                    total = self._run_tokens(counts, prev[1], g[2]) + self._prefix_tokens(self._prefix(anchors, params))
                    if total <= params.size_tokens:
                        out[-1] = [anchors, prev[1], g[2], prev[3]]
                        continue
            out.append(g)
        return out

    def _prefix(self, anchors: list[str], params: ChunkParams, extra: str = "") -> str:
        crumb = breadcrumb(anchors) if params.parent_titles and anchors else ""
        if extra:
            return f"{crumb}\n{extra}" if crumb else extra
        return crumb

    # ------------------------------------------------------------------ emission
    def _emit(self, doc, params, counts, groups, *, windows_always: bool) -> list[Chunk]:
        chunks: list[Chunk] = []
        id_counters: Counter[str] = Counter()
        for anchors, first, last, section in groups:
            prefix = self._prefix(anchors, params)
            p_tok = self._prefix_tokens(prefix)
            sec_tok = self._run_tokens(counts, first, last)
            whole_limit = params.max_tokens
            if params.mode == "hybrid":
                whole_limit = min(params.max_tokens, int(params.split_factor * params.size_tokens))
            if not windows_always and p_tok + sec_tok <= whole_limit:
                spans = [(first, last, None)]
                windows = [self._window_from_blocks(doc, first, last, p_tok + sec_tok, prefix)]
            else:
                overlap = params.overlap_tokens
                if params.mode == "hierarchical":
                    overlap = 0
                elif params.adaptive_overlap:
                    sec_text = doc.text[doc.blocks[first].start : doc.blocks[last - 1].content_end]
                    overlap = round(params.size_tokens * adaptive_overlap_ratio(sec_text))
                units = self._units(doc, params, counts, first, last, anchors)
                windows = self._pack(doc, params, units, anchors, overlap)
            key = (section.key if section is not None and section.key else "/".join(slug(a) for a in anchors)) or "root"
            for w in windows:
                chunks.append(self._make_chunk(doc, params, w, anchors, section, key, id_counters))
        return chunks

    def _window_from_blocks(self, doc, first, last, n_tokens, prefix):
        b0, b1 = doc.blocks[first], doc.blocks[last - 1]
        kinds = tuple(dict.fromkeys(b.kind for b in doc.blocks[first:last]))
        return _Window(b0.start, b1.content_end, n_tokens, prefix, first, last - 1, kinds, None)

    def _units(self, doc: ParsedDocument, params: ChunkParams, counts, first: int, last: int, anchors: list[str]) -> list[_Unit]:
        """Units for windowing: whole blocks, oversize (or non-atomic when allowed) blocks split finer, headings glued."""
        text = doc.text
        units: list[_Unit] = []
        base_prefix = self._prefix(anchors, params)
        budget = params.max_tokens - self._prefix_tokens(base_prefix)
        carry = 0  # tokens of heading units waiting to be glued to the next block
        for bi in range(first, last):
            b = doc.blocks[bi]
            c_full, c_core = counts[bi]
            avail = budget - carry
            if c_core <= avail and (b.kind in params.keep_atomic or c_core <= params.size_tokens):
                units.append(_Unit(b.start, b.end, b.content_end, c_full, c_core, True, "", (b.kind,)))
            else:
                units.extend(self._split_block(doc, b, bi, params, anchors, reserve=carry))
            carry = carry + units[-1].c_full if b.kind == "heading" else 0
        # glue headings (and fence-only / header-only pieces are glued inside _split_block) to the next unit
        glued: list[_Unit] = []
        carry: _Unit | None = None
        for u in units:
            if carry is not None:
                u = _merge_units(carry, u, text)
                carry = None
            if u.kinds and u.kinds[-1] == "heading":
                carry = u
                continue
            glued.append(u)
        if carry is not None:
            if glued:
                glued[-1] = _merge_units(glued[-1], carry, text)
            else:
                glued.append(carry)
        return glued

    def _split_block(self, doc: ParsedDocument, b: Block, bi: int, params: ChunkParams, anchors: list[str],
                     reserve: int = 0) -> list[_Unit]:
        """Split one block into line units (rows for tables, lines for code), then sentences, words, graphemes."""
        text = doc.text
        cont = ""
        if b.kind in ("table", "code") and b.header_end > b.start:
            cont = normalize(text[b.start : b.header_end])
        elif b.kind == "html_table" and b.header_end > b.start:
            cont = normalize(text[b.start : b.header_end])
        if b.kind == "html_table":
            pieces = _html_row_pieces(text, b)
        else:
            pieces = _line_pieces(text, b.start, b.end)
        budget = params.max_tokens - self._prefix_tokens(self._prefix(anchors, params, cont)) - reserve
        target = max(32, min(params.size_tokens, budget))
        units: list[_Unit] = []
        for s, ce, e, clean in pieces:
            c_full, c_core = self._counter.piece(text, s, ce, e)
            if c_core <= target:
                units.append(_Unit(s, e, ce, c_full, c_core, clean, cont, (b.kind,)))
            else:
                units.extend(self._split_inline(text, s, ce, e, clean, target, cont, b.kind))
        if not units:
            return units
        units[0].cont_prefix = ""  # the first piece carries the real header / fence line itself
        # the header rows / opening fence stay with the first data row; a closing fence stays with the last line
        if b.kind in ("table", "code", "html_table") and len(units) > 1 and units[0].content_end <= b.header_end:
            units[0:2] = [_merge_units(units[0], units[1], text)]
        if b.kind == "code" and len(units) > 1 and _is_fence_line(text[units[-1].start : units[-1].content_end]):
            units[-2:] = [_merge_units(units[-2], units[-1], text)]
        return units

    def _split_inline(self, text: str, s: int, ce: int, e: int, clean: bool, target: int, cont: str, kind: str) -> list[_Unit]:
        """Split one line into sentences, then words, then grapheme runs, each piece under ``target`` tokens."""
        out: list[_Unit] = []
        count = self._counter.count
        for ps, pce, pe in _sub_pieces(text, s, ce, e, _SENTENCE_END):
            piece = normalize_inner(text[ps:pce])
            n = count(piece)
            if n <= target:
                out.append(_Unit(ps, pe, pce, count(normalize_inner(text[ps:pe])), n, False, cont, (kind,)))
                continue
            for ws, wce, we in _sub_pieces(text, ps, pce, pe, _WS_RUN):
                wn = count(normalize_inner(text[ws:wce]))
                if wn <= target:
                    out.append(_Unit(ws, we, wce, count(normalize_inner(text[ws:we])), wn, False, cont, (kind,)))
                else:
                    out.extend(self._split_graphemes(text, ws, wce, we, target, cont, kind))
        if out:
            out[0].clean = clean
        return out

    def _split_graphemes(self, text: str, s: int, ce: int, e: int, target: int, cont: str, kind: str) -> list[_Unit]:
        """Cut a run with no whitespace into pieces of <= target tokens at grapheme-cluster boundaries (linear)."""
        count = self._counter.count
        bounds = grapheme_boundaries(text, s, ce)
        out: list[_Unit] = []
        total = count(normalize_inner(text[s:ce]))
        chars_per_token = max(1.0, (ce - s) / max(1, total))
        bi = 0
        while bounds[bi] < ce:
            start = bounds[bi]
            want = max(1, int(target * chars_per_token * 0.9))
            # furthest grapheme boundary within `want` characters, then shrink until the piece fits
            lo = bi + 1
            hi = _bisect_right(bounds, start + want) - 1
            hi = max(hi, lo)
            while True:
                piece_end = bounds[hi]
                n = count(normalize_inner(text[start:piece_end]))
                if n <= target or hi == lo:
                    break
                hi = max(lo, lo + (hi - lo) * 3 // 4)
            oversize = None
            if n > target:
                oversize = f"a single grapheme cluster of {n} tokens exceeds the cap"
            end = e if piece_end == ce else piece_end
            out.append(_Unit(start, end, piece_end, count(normalize_inner(text[start:end])), n, False, cont, (kind,), oversize))
            bi = hi
        return out

    def _pack(self, doc: ParsedDocument, params: ChunkParams, units: list[_Unit], anchors: list[str], overlap: int) -> list["_Window"]:
        """Greedy windows over units: grow to the target, never past the cap, then step back ``overlap`` tokens."""
        windows: list[_Window] = []
        n = len(units)
        i = 0
        while i < n:
            prefix = self._prefix(anchors, params, units[i].cont_prefix)
            p_tok = self._prefix_tokens(prefix)
            target = params.size_tokens - p_tok
            cap = params.max_tokens - p_tok
            total_full = 0
            j = i
            while j < n:
                cand = total_full + units[j].c_core
                if j > i and (cand > target or cand > cap):
                    break
                total_full += units[j].c_full
                j += 1
            w = self._exact_window(doc, units, i, j, prefix, p_tok, params.max_tokens)
            windows.append(w)
            j = w.last_unit + 1
            if j >= n:
                break
            nxt = j
            if overlap > 0:
                k = j - 1
                run = units[k].c_core
                while k - 1 > i and run + units[k - 1].c_full <= overlap:
                    k -= 1
                    run += units[k].c_full
                if run <= overlap and k > i:
                    nxt = k
            i = nxt
        # a tail window under min_tokens merges into the previous window when the result stays under the cap
        if len(windows) >= 2 and windows[-1].n_tokens < params.min_tokens:
            a, b = windows[-2], windows[-1]
            merged = self._exact_window(doc, units, a.first_unit, b.last_unit + 1, a.prefix, self._prefix_tokens(a.prefix),
                                        params.max_tokens, shrink=False)
            if merged.n_tokens <= params.max_tokens:
                windows[-2:] = [merged]
        return windows

    def _exact_window(self, doc, units, i, j, prefix, p_tok, cap, shrink: bool = True) -> "_Window":
        """Window of units[i:j] with its exact token count; drops trailing units while over the cap."""
        text = doc.text
        while True:
            if all(units[k].clean for k in range(i + 1, j)):
                n_tok = p_tok + sum(u.c_full for u in units[i : j - 1]) + units[j - 1].c_core
            else:
                n_tok = self.tokenizer.count(join_prefix(prefix, normalize(text[units[i].start : units[j - 1].content_end])))
            if n_tok <= cap or j - 1 <= i or not shrink:
                break
            j -= 1
        kinds = tuple(dict.fromkeys(k for u in units[i:j] for k in u.kinds))
        oversize = next((u.oversize for u in units[i:j] if u.oversize), None)
        if n_tok > cap and oversize is None:
            oversize = "a single unit that cannot be split further exceeds the cap"
        w = _Window(units[i].start, units[j - 1].content_end, n_tok, prefix, -1, -1, kinds, oversize)
        w.first_unit, w.last_unit = i, j - 1
        return w

    def _make_chunk(self, doc: ParsedDocument, params: ChunkParams, w: "_Window", anchors, section, key, id_counters) -> Chunk:
        text = normalize(doc.text[w.start : w.end])
        fb = _block_index(doc.blocks, w.start)
        lb = _block_index(doc.blocks, max(w.start, w.end - 1))
        raw_start, raw_end = doc.raw_span(w.start, w.end, fb, lb)
        n = id_counters[key]
        id_counters[key] += 1
        sec_meta = section.meta if section is not None else {}
        meta = ChunkMeta(
            source_type=doc.source_type,
            source_id=sec_meta.get("source_id", doc.doc_id),
            source_path=doc.source_path,
            doc_id=doc.doc_id,
            anchors=list(anchors),
            context_prefix=w.prefix,
            len_tokens=w.n_tokens,
            lang=doc.lang,
            language=doc.lang,
            domain=params.domain,
            block_kinds=list(w.kinds),
            **{k: v for k, v in {**doc.meta.get("chunk_meta", {}), **sec_meta}.items() if k != "source_id"},
        )
        quality = Quality()
        if w.oversize:
            quality = Quality(atomic_oversize=True, oversize_reason=w.oversize)
        return Chunk(id=f"{doc.doc_id}#{key}#{n:03d}", text=text, meta=meta, spans=Spans(char_start=raw_start, char_end=raw_end),
                     quality=quality)


@dataclass(slots=True)
class _Window:
    start: int
    end: int
    n_tokens: int
    prefix: str
    first_unit: int
    last_unit: int
    kinds: tuple[str, ...]
    oversize: str | None


def _merge_units(a: _Unit, b: _Unit, text: str) -> _Unit:
    """One unit covering a then b (b must start where a ends)."""
    return _Unit(a.start, b.end, b.content_end, a.c_full + b.c_full, a.c_full + b.c_core, a.clean, a.cont_prefix,
                 a.kinds + tuple(k for k in b.kinds if k not in a.kinds), a.oversize or b.oversize)


def _common_prefix(a: list[str], b: list[str]) -> list[str]:
    out = []
    for x, y in zip(a, b):
        if x != y:
            break
        out.append(x)
    return out


def _block_index(blocks: list[Block], pos: int) -> int:
    lo, hi = 0, len(blocks) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if blocks[mid].start <= pos:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _bisect_right(a: list[int], x: int) -> int:
    import bisect

    return bisect.bisect_right(a, x)


_FENCE_LINE = re.compile(r"^\s*(`{3,}|~{3,})\s*$")


def _is_fence_line(s: str) -> bool:
    return bool(_FENCE_LINE.match(s))


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _line_pieces(text: str, start: int, end: int) -> list[tuple[int, int, int, bool]]:
    """Lines of text[start:end] as (start, content_end, end, clean); blank lines join the line before them."""
    out: list[list[int]] = []
    pos = start
    for m in _LINE_BREAK.finditer(text, start, end):
        line_start, line_end, nxt = pos, m.start(), m.end()
        if text[line_start:line_end].strip() and text[line_start:line_end].strip("\ufeff").strip():
            ce = line_end
            while ce > line_start and text[ce - 1].isspace():
                ce -= 1
            out.append([line_start, ce, nxt])
        elif out:
            out[-1][2] = nxt
        pos = nxt
    if pos < end:
        seg = text[pos:end]
        if seg.strip():
            ce = end
            while ce > pos and text[ce - 1].isspace():
                ce -= 1
            out.append([pos, ce, end])
        elif out:
            out[-1][2] = end
    if out:
        out[-1][2] = end
    return [(s, ce, e, True) for s, ce, e in out]


_TR_OPEN = re.compile(r"<tr\b", re.IGNORECASE)


def _html_row_pieces(text: str, b: Block) -> list[tuple[int, int, int, bool]]:
    """Pieces of an HTML table block starting at each ``<tr``; the first piece is everything before the second row."""
    starts = [b.start] + [m.start() for m in _TR_OPEN.finditer(text, b.header_end or b.start, b.end)]
    starts = sorted(set(s for s in starts if b.start <= s < b.content_end))
    out = []
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else b.end
        ce = e
        while ce > s and text[ce - 1].isspace():
            ce -= 1
        if ce > s:
            out.append((s, ce, e, k == 0))
    return out


def _sub_pieces(text: str, s: int, ce: int, e: int, boundary: "re.Pattern[str] | regex.Pattern[str]") -> list[tuple[int, int, int]]:
    """Split text[s:ce] at a boundary regex into (start, content_end, end) pieces; whitespace goes to the left piece."""
    out = []
    pos = s
    for m in boundary.finditer(text, s, ce):
        if m.end() <= pos or m.end() >= ce:
            continue
        cut = m.end()
        c_end = m.start()
        while c_end > pos and text[c_end - 1].isspace():
            c_end -= 1
        if c_end > pos:
            out.append((pos, c_end, cut))
            pos = cut
    out.append((pos, ce, e))
    return out


def chunk_text(text: str, *, config: ChunkingConfig | str | None = None, doc_id: str = "text", source_path: str = "<text>",
               lang: str = "und", domain: str | None = None, tokenizer: Tokenizer | None = None, **overrides: Any) -> list[Chunk]:
    """Chunk Markdown or plain text, like a LangChain or Chonkie splitter.

    ``config``: a :class:`ChunkingConfig`, a path to a ``chunking.yaml`` or None for the defaults.
    ``overrides``: config keys, e.g. ``mode="sliding"``, ``size_tokens=400``, ``overlap_ratio=0.15``,
    ``max_tokens=800`` (see :data:`heritage_pipeline.config.OVERRIDE_ALIASES`); ``domain`` picks a preset
    (``tech``, ``legal``, ``faq``; None = the ``sliding_window`` sizes).
    Returns chunks with ``id``, ``text``, ``char_start``/``char_end`` (code points into ``text``), ``anchors``,
    ``context_prefix`` and ``len_tokens`` (exact cl100k count of prefix + text). Raises
    :class:`~heritage_pipeline.config.ConfigError` for invalid overrides.
    """
    cfg = config_from(config, overrides)
    chunker = _chunker_for(cfg, tokenizer)
    doc = parse_markdown(text.removeprefix("\ufeff") if text.startswith("\ufeff") else text, doc_id=doc_id,
                         source_path=source_path, lang=lang, max_level=cfg.hierarchy.max_level)
    doc.domain = domain
    return chunker.chunk_document(doc, params_for(cfg, source_type="document", domain=domain))


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
