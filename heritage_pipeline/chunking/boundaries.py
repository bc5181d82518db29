"""Where a block may be cut: line pieces (rows, fence groups), sentence / word / grapheme cut points.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

import regex

from heritage_pipeline.core.structure import Block
from heritage_pipeline.core.text import grapheme_boundaries

# A piece may start here: not whitespace, not a combining mark / ZWJ / variation selector / emoji modifier
# (those extend the previous grapheme cluster), not a BOM (the normalisation deletes it: what follows it decides).
_STARTABLE = r"(?=[^\s\p{M}\u200d\ufe00-\ufe0f\ufeff\U0001F3FB-\U0001F3FF])"
# Sentence starts: after sentence-final punctuation (optionally closing quotes/brackets) and whitespace, after CJK
# full stops, and at soft line breaks. Used for overlap heads and for cutting oversize lines.
# (``\s`` here is Unicode White_Space, the pre-tokenizer's whitespace; str.isspace() also counts U+001C-U+001F, so
# a piece between two cuts can still be blank for str.strip(): such a window is never emitted, see chunk_document)
SENTENCE_CUT = regex.compile(
    r"[.!?…;:。！？；][\"'»”’)\]]*\s+" + _STARTABLE + r"|[。！？]" + _STARTABLE + r"|\n[ \t]*" + _STARTABLE
)
_WORD_CUT = regex.compile(r"\s+" + _STARTABLE)


_FENCE_LINE = re.compile(r"^\s*(`{3,}|~{3,})\s*$")
_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def is_fence_line(s: str) -> bool:
    return bool(_FENCE_LINE.match(s))


# a fence inside a blockquote: the ``>`` markers (one per level), then the fence run (``> ```python``)
_QUOTED_FENCE_OPEN = re.compile(r"^[ \t]*((?:>[ \t]?)+)[ \t]*(`{3,}|~{3,})")
_QUOTED_FENCE_LINE = re.compile(r"^[ \t]*(?:>[ \t]?)+[ \t]*(`{3,}|~{3,})[ \t]*$")


def is_region_fence_line(s: str) -> bool:
    """A closing fence line of a fenced region inside a container: plain (``````` ``), or inside a blockquote
    (``> ``````` ``, ``> > ~~~``)."""
    return bool(_FENCE_LINE.match(s) or _QUOTED_FENCE_LINE.match(s))


def region_fence(line: str) -> str:
    """The closing fence a piece of the fenced region opened by ``line`` embeds as its suffix: the fence run, after
    the line's blockquote markers when the fence sits in a blockquote (``> ```python`` -> ``> ```````), so that
    the embedded piece is a balanced fenced block inside its quote (SPEC §3)."""
    qm = _QUOTED_FENCE_OPEN.match(line)
    if qm:
        return "> " * qm.group(1).count(">") + qm.group(2)
    return _FENCE_OPEN.match(line).group(1)


def fence_of(text: str, b: Block) -> tuple[str, int] | None:
    """(opening fence run, start of the closing fence line or -1 when the block is unclosed) of a fenced code block;
    None for a block that is not fenced code (indented code, other kinds). Reads the opening line and the block's
    last content line only."""
    if b.kind != "code" or b.header_end <= b.start:
        return None
    m = _FENCE_OPEN.match(text[b.start : b.header_end])
    if m is None:
        return None
    opening = m.group(1)
    last = text.rfind("\n", b.start, b.content_end) + 1
    if last >= b.header_end:
        cm = _FENCE_LINE.match(text[last : b.content_end])
        if cm and cm.group(1)[0] == opening[0] and len(cm.group(1)) >= len(opening):
            return opening, last
    return opening, -1


def table_rows(text: str, b: Block, start: int, end: int, rows: list[int] | None = None) -> list[int]:
    """[first, last] data rows (1-based, header rows not counted) of table block ``b`` inside ``text[start:end]``:
    rows are lines after the header and delimiter rows for Markdown tables, ``<tr`` elements after the header rows
    for HTML tables (``rows``: :func:`html_row_starts` of the block, computed when not given; a document's chunks
    share it, so that the pieces of a long table are not rescanned from the table's start). A range holding no data
    row gives ``[0, 0]``."""
    body = max(b.header_end, b.start)
    lo, hi = max(start, body), min(end, b.content_end)
    if b.kind == "html_table":
        if _cut_row_tag(text, lo) or _cut_row_tag(text, hi):  # (a "<tr" that only ends a slice: as the slices see it)
            before = len(_TR_OPEN.findall(text, body, lo))
            inside = len(_TR_OPEN.findall(text, lo, hi)) if hi > lo else 0
        else:
            if rows is None:
                rows = html_row_starts(text, b)
            before = bisect.bisect_right(rows, lo - 3)  # row tags that end by lo
            inside = bisect.bisect_right(rows, hi - 3) - bisect.bisect_left(rows, lo) if hi > lo else 0
        # (a range starting inside a row counts that row)
        partial = 1 if lo > body and text.rfind("<tr", body, lo) > text.rfind("</tr", body, lo) else 0
        first = before + 1 - partial
        last = before + inside
    else:
        q = rstrip_end(text, lo, hi)
        if q <= lo:
            return [0, 0]
        first = len(_LINE_BREAK.findall(text, body, lo)) + 1 if lo > body else 1
        last = len(_LINE_BREAK.findall(text, body, q - 1)) + 1
    if last < first:
        return [0, 0]
    return [first, last]


def html_row_starts(text: str, b: Block) -> list[int]:
    """Start offsets of the ``<tr`` tags of HTML table block ``b`` after its header rows, in order."""
    return [m.start() for m in _TR_OPEN.finditer(text, max(b.header_end, b.start), b.content_end)]


def _cut_row_tag(text: str, pos: int) -> bool:
    """True when ``text[:pos]`` ends with a ``<tr`` tag that is none in the whole text (``<track`` cut after
    ``<tr``): searches bounded at ``pos`` count it, a scan of the whole block does not."""
    return pos >= 3 and _TR_OPEN.match(text, pos - 3, pos) is not None and _TR_OPEN.match(text, pos - 3) is None


def line_pieces(text: str, start: int, end: int, group_fences: bool = True) -> list[tuple[int, int, int, str, bool]]:
    """Lines of text[start:end] as (start, content_end, end, fence_line, True); blank lines join the line before them
    (the last element says the piece starts on an additive boundary: a line start always does).

    With ``group_fences`` a fenced code region inside the range (a fence in a list item, an admonition or a
    blockquote: ``> ```python`` ... ``> ``````` ``) is one piece from its opening to its closing fence line, and
    ``fence_line`` holds the opening line (else "").
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
                out[-1][1] = rstrip_end(text, s, le)
            out[-1][2] = nxt
            if fence_close is not None and fence_close.match(line):
                region, fence_close = False, None
            continue
        if blank:
            if out:
                out[-1][2] = nxt
            continue
        out.append([s, rstrip_end(text, s, le), nxt, ""])
        if group_fences:
            fm = _FENCE_OPEN.match(line)
            quoted = fm is None and (fm := _QUOTED_FENCE_OPEN.match(line)) is not None  # a fence in a blockquote
            run = fm.group(2 if quoted else 1) if fm else ""
            if fm and not (run[0] == "`" and "`" in line[fm.end() :]):
                lead = r"^[ \t]*(?:>[ \t]?)+[ \t]*" if quoted else r"^[ \t]*"
                fence_close = re.compile(lead + re.escape(run[0]) + "{" + str(len(run)) + r",}[ \t]*$")
                region = True
                out[-1][3] = line
    if out:
        out[-1][2] = end
    return [(s, ce, e, f, True) for s, ce, e, f in out]


def rstrip_end(text: str, s: int, e: int) -> int:
    """End of ``text[s:e]`` without its trailing whitespace and BOMs (the normalisation deletes BOMs)."""
    while e > s and (text[e - 1].isspace() or text[e - 1] == "\ufeff"):
        e -= 1
    return e


_TR_OPEN = re.compile(r"<tr\b", re.IGNORECASE)


def html_row_pieces(text: str, b: Block) -> list[tuple[int, int, int, str, bool]]:
    """Pieces of an HTML table block starting at each ``<tr``; the first piece is everything before the second row.
    A row that does not start a line is not an additive boundary (``<tr`` may merge with the preceding ``>``)."""
    starts = [b.start] + [m.start() for m in _TR_OPEN.finditer(text, b.header_end or b.start, b.end)]
    starts = sorted(set(s for s in starts if b.start <= s < b.content_end))
    out = []
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else b.end
        ce = rstrip_end(text, s, e)
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


def best_cut(text: str, p: int, lead: int, q: int, ce: int) -> tuple[int, int, bool]:
    """Where to end a piece that starts at ``p`` (content from ``p + lead``) and must end by ``q``: (cut, lead of
    the next piece, next piece starts on an additive boundary). Prefers the last sentence start in the second half of
    the range, then the last word start, then the last grapheme-cluster boundary (a cut inside a word is not
    additive). Always makes progress (cut > p + lead) and never splits a grapheme cluster."""
    lo = p + lead + 1
    if q >= ce:
        return ce, 0, True
    half = max(lo, (p + q) // 2)
    best = None
    for m in SENTENCE_CUT.finditer(text, half, q + 1):
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
