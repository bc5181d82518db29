"""Units (whole blocks or pieces of a block) and their packing into windows: the shared record types, and
the unit builder.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from heritage_pipeline.core.structure import Section
from heritage_pipeline.core.text import normalize

from .boundaries import (best_cut, fence_of, html_row_pieces, is_fence_line, is_region_fence_line, line_pieces,
                         region_fence, rstrip_end)

if TYPE_CHECKING:
    from .counting import DocState
    from .params import ChunkParams


@dataclass(slots=True)
class Unit:
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
    # closing fence a window ending on this unit appends (a piece of a fenced region inside a list item or an
    # admonition that stops before the region's closing fence line); code blocks: windows.WindowPacker._fence_suffix
    fence: str = ""


@dataclass(slots=True)
class Head:
    """The partial unit a window starts with when it overlaps the previous one: ``text[start:units[k].end]``."""

    start: int
    unit: int  # index k of the unit it is a suffix of
    c_full: int
    c_core: int


@dataclass(slots=True)
class Window:
    start: int
    end: int  # content end of the last unit
    n_tokens: int
    prefix: str
    first: int  # first whole unit
    last: int  # last unit (inclusive)
    head: Head | None
    kinds: tuple[str, ...]
    oversize: str | None
    anchors: list[str]
    suffix: str = ""  # closing fence appended to the embedded text (the window ends inside a split code block)


@dataclass(slots=True)
class Group:
    """Consecutive blocks chunked together: one section, or adjacent sections merged by the rules above."""

    anchors: list[str]
    first: int
    last: int
    section: Section | None
    depth: int  # deepest member breadcrumb length
    c_full: int = -1
    c_core: int = -1
    secs: tuple[int, ...] = ()  # indexes of member sections
    merged_headings: tuple[str, ...] = ()  # headings of tiny sibling sections merged under one parent (meta.sections)


class UnitBuilder:
    """Cuts a group into units for windowing: whole blocks, oversize blocks split at rows / lines / sentences /
    words / graphemes, headings and short paragraphs glued to a neighbour (mixin of
    :class:`~heritage_pipeline.chunking.chunker.Chunker`)."""

    def _units(self, st: "DocState", params: ChunkParams, g: Group) -> list[Unit]:
        """Units for windowing: whole blocks; blocks over the budget (or non-atomic blocks over the target) split
        into rows / lines / sentences / words / graphemes; then headings and short paragraphs glued to a neighbour."""
        doc = st.doc
        sec_of = st.section_index
        counts = st.block_counts(g.first, g.last)
        raw: list[Unit] = []
        budget = params.max_tokens - self._prefix_tokens(self._prefix(g.anchors, params))
        carry = 0  # tokens of heading units waiting to be glued to the next block
        for bi in range(g.first, g.last):
            b = doc.blocks[bi]
            c_full, c_core = counts[bi - g.first]
            sec = sec_of[bi]
            avail = budget - carry
            if c_core <= avail and (b.kind in params.keep_atomic or c_core <= params.size_tokens):
                raw.append(Unit(b.start, b.end, b.content_end, c_full, c_core, True, "", ((b.start, b.kind),), sec))
            elif b.kind in params.keep_atomic and c_core <= params.max_tokens:
                # fits the cap alone but not after the breadcrumb / a heading: kept whole, in a window of its own
                # whose prefix is shortened (a heading before it that does not fit stays in the previous window)
                raw.append(Unit(b.start, b.end, b.content_end, c_full, c_core, True, "", ((b.start, b.kind),), sec))
            else:
                pieces = self._split_block(st, bi, params, g.anchors, reserve=carry)
                for p in pieces:
                    p.sec = sec
                    p.whole = False
                raw.extend(pieces)
            carry = carry + raw[-1].c_full if b.kind == "heading" else 0
        return self._glue(raw, params, budget)

    def _glue(self, units: list[Unit], params: ChunkParams, budget: int) -> list[Unit]:
        """Glue headings to the next unit, and paragraph-like blocks under ``min_paragraph_tokens`` to a neighbour of
        the same section: the next unit (a lead-in such as "For example:" belongs to what it introduces), else the
        previous one. The result must stay within the target, or within ``budget`` (the cap minus the breadcrumb)
        when the neighbour is an atomic block. A heading is glued whenever the pair fits ``budget`` (blocks after a
        heading were split with that reserve); only an atomic block that fits the cap alone but not with its heading
        leaves the heading in the previous unit (the block is not cut). Atomic units are never glued to each other,
        and pieces of a split block are not glued by the short-paragraph rule (they are already cut to size)."""
        limit = min(params.size_tokens, budget)
        atomic = params.keep_atomic

        def room(u: Unit) -> int:
            return budget if u.parts[-1][1] in atomic or u.parts[0][1] in atomic else limit

        out: list[Unit] = []
        carry: Unit | None = None
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

    def _split_block(self, st: "DocState", bi: int, params: ChunkParams, anchors: list[str], reserve: int = 0) -> list[Unit]:
        """Split block ``bi`` into line units (rows for tables, lines for code, fenced regions kept together), then
        sentences, words, graphemes; each piece fits ``min(size_tokens, budget)``."""
        text = st.doc.text
        b = st.doc.blocks[bi]
        cont = ""
        if b.kind in ("table", "code", "html_table") and b.header_end > b.start:
            cont = normalize(text[b.start : b.header_end])
        budget = params.max_tokens - self._prefix_tokens(self._prefix(anchors, params, cont)) - reserve
        fence = fence_of(text, b)
        if fence is not None:  # room for the closing fence every piece embeds (windows.WindowPacker._fence_suffix)
            budget -= self.tokenizer.count("\n" + fence[0])
        target = max(32, min(params.size_tokens, budget))
        kind = b.kind
        if kind == "html_table":
            pieces = html_row_pieces(text, b)
        else:
            pieces = line_pieces(text, b.start, b.end, group_fences=kind != "code")
        counts = st.piece_counts(bi, [(s, ce, e, clean) for s, ce, e, _, clean in pieces])
        units: list[Unit] = []
        for (s, ce, e, fence_line, clean), (c_full, c_core, exact) in zip(pieces, counts):
            if c_core <= target:
                units.append(Unit(s, e, ce, c_full, c_core, clean, cont, ((s, kind),), exact=exact))
            elif fence_line:  # a fenced region in a list item / admonition / blockquote that does not fit: by lines
                run = region_fence(fence_line)  # (with the blockquote markers of a quoted fence: "> ```")
                sub = self._line_units(st, bi, line_pieces(text, s, e, group_fences=False),
                                       max(32, target - self.tokenizer.count("\n" + run)), normalize(fence_line), kind)
                sub[0].cont_prefix = cont
                sub = _glue_fence_ends(sub, text, text.find("\n", s) + 1 or e, is_region_fence_line)
                closed = is_region_fence_line(text[text.rfind("\n", s, rstrip_end(text, s, e)) + 1 : rstrip_end(text, s, e)])
                for u in sub[:-1] if closed else sub:  # every piece but the one holding the closing fence line
                    u.fence = run
                units.extend(sub)
            else:
                units.extend(self._split_line(st, bi, s, ce, e, clean, target, cont, kind, c_core))
        if not units:
            return units
        units[0].cont_prefix = ""  # the first piece carries the real header / fence line itself
        if kind in ("table", "code", "html_table"):
            units = _glue_fence_ends(units, text, b.header_end)
        return units

    def _line_units(self, st: "DocState", bi: int, pieces: list[tuple[int, int, int, str, bool]], target: int, cont: str,
                    kind: str) -> list[Unit]:
        units: list[Unit] = []
        counts = st.piece_counts(bi, [(s, ce, e, clean) for s, ce, e, _, clean in pieces])
        for (s, ce, e, _, clean), (f, c, exact) in zip(pieces, counts):
            if c <= target:
                units.append(Unit(s, e, ce, f, c, clean, cont, ((s, kind),), exact=exact))
            else:
                units.extend(self._split_line(st, bi, s, ce, e, clean, target, cont, kind, c))
        return units

    def _split_line(self, st: "DocState", bi: int, s: int, ce: int, e: int, clean: bool, target: int, cont: str,
                    kind: str, n_tokens: int) -> list[Unit]:
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
        out: list[Unit] = []
        p, lead, pclean = s, 0, clean
        ip = st.token_index(p) if pclean else None
        cpt = max(1.0, (ce - s) / max(1, n_tokens))  # characters per token, to estimate limits without offsets
        while p < ce:
            if ip is not None:
                q = st.limit_position(ip, piece_max, e)
                if q is None:  # the rest of the line fits
                    f, c, exact = st.piece_counts(bi, [(p, ce, e, True)])[0]
                    out.append(Unit(p, e, ce, f, c, pclean, cont, ((p + lead, kind),), 0, None, lead, exact))
                    return out
            else:
                if (ce - p) <= piece_max * cpt * 0.9:
                    f, c = st.piece(p, ce, e)
                    if c <= piece_max:
                        out.append(Unit(p, e, ce, f, c, pclean, cont, ((p + lead, kind),), 0, None, lead))
                        return out
                q = p + lead + max(1, int(piece_max * cpt * 0.9))
            q = min(q, ce)
            prev_b = prev_f = -1
            while True:
                b, nlead, nclean = best_cut(text, p, lead, q, ce)
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
            pce = rstrip_end(text, p + lead, b)
            c = f - counter.tail_delta(text, p, pce, b) if pce < b else f
            oversize = f"a single grapheme cluster of {c} tokens exceeds the cap" if c > target else None
            out.append(Unit(p, b, pce, f, c, pclean, cont, ((p + lead, kind),), 0, oversize, lead))
            p, lead, pclean, ip = b, nlead, nclean, jb
        if out and out[-1].end < e:  # the line's trailing whitespace belongs to its last piece
            u = out[-1]
            u.end = e
            u.c_full = u.c_core + counter.tail_delta(text, u.start, u.content_end, e)
        return out


def _merge_units(a: Unit, b: Unit) -> Unit:
    """One unit covering a then b (b must start where a ends)."""
    return Unit(a.start, b.end, b.content_end, a.c_full + b.c_full, a.c_full + b.c_core, a.clean, a.cont_prefix,
                 a.parts + b.parts, a.sec, a.oversize or b.oversize, a.lead, a.exact and b.exact and b.clean,
                 a.whole and b.whole, b.fence or (a.fence if b.whole else ""))  # (an unclosed region stays open)


def _glue_fence_ends(units: list[Unit], text: str, header_end: int, closing=is_fence_line) -> list[Unit]:
    """Keep the header rows / opening fence line with the first data line, and a closing fence (``closing`` tells
    one: plain, or also blockquoted for a region in a container) with the last line."""
    while len(units) > 1 and units[0].content_end <= header_end and units[1].clean:
        units[0:2] = [_merge_units(units[0], units[1])]
    if len(units) > 1 and units[-1].clean and closing(text[units[-1].start : units[-1].content_end]):
        units[-2:] = [_merge_units(units[-2], units[-1])]
    return units
