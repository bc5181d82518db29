"""Excluded ranges and the one place that builds a chunk's embedded text (SPEC §3, text contract).

A chunk's ``text`` is always the (normalised) raw slice. What is embedded and counted against the cap is the
*embedded text*: ``meta.context_prefix`` + blank line + ``text`` with the ``meta.excluded`` ranges removed + (when
set) a line break and ``meta.context_suffix``. Excluded ranges are half-open ``[start, end)`` character offsets into
the chunk's ``text``: markup that is not content (MkDocs attribute lists ``{ #id }``, include directives
``{* file *}``, Kramdown ``{: .class }``, inline HTML tags) and running page headers / footers. The suffix is the
closing fence of a piece of a split fenced code block, so that every piece embeds a balanced fenced block.

Document-level ranges (offsets into ``ParsedDocument.text``) are found by the parser
(:func:`heritage_pipeline.sources.markdown.markup_ranges`, :func:`heritage_pipeline.sources.markdown.running_lines`)
and stored in ``doc.meta["excluded"]``; :func:`ranges_in` cuts them to one chunk.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence

from heritage_pipeline.core.models import join_prefix


def remove_ranges(text: str, excluded: Sequence[Sequence[int]]) -> str:
    """``text`` without the ``excluded`` ranges (sorted, non-overlapping ``[start, end)`` character offsets).

    Where removing a range would glue two words together (``word<br>word``), one space stands in for it; a range
    that was a whole line (``{* include *}`` alone on its line) takes its line break with it."""
    if not excluded:
        return text
    out: list[str] = []
    pos = 0
    for s, e in excluded:
        if s < pos:  # (overlapping input: the rest of the range)
            s = pos
        if e <= s:
            continue
        piece = text[pos:s]
        out.append(piece)
        before = text[s - 1 : s] if s > 0 else "\n"
        nxt = text[e : e + 1]
        if before.isalnum() and nxt.isalnum():
            out.append(" ")
        elif before == "\n" and nxt == "\n":
            e += 1
        pos = e
    out.append(text[pos:])
    return "".join(out)


def embedded_text(prefix: str, text: str, excluded: Sequence[Sequence[int]] = (), suffix: str = "") -> str:
    """The exact string that is embedded and whose cl100k count is ``meta.len_tokens``: ``prefix``, a blank line,
    ``text`` without the ``excluded`` ranges (:func:`remove_ranges`; then right-stripped, and left-stripped when a
    range opens the text), then a line break and ``suffix`` when set.

    Args:
        prefix: ``meta.context_prefix`` (breadcrumb, repeated table header or fence line); "" for none.
        text: the chunk's ``text`` (the raw slice).
        excluded: ``meta.excluded``, character offsets into ``text``.
        suffix: ``meta.context_suffix`` (the closing fence of a split code piece); "" for none.
    Returns:
        The embedded string."""
    body = text
    if excluded:
        body = remove_ranges(text, excluded).rstrip()
        if excluded[0][0] == 0:  # (a running header that opened the text leaves no leading blank line)
            body = body.lstrip()
    out = join_prefix(prefix, body)
    return f"{out}\n{suffix}" if suffix else out


_NON_SPACE = re.compile(r"\S")  # (re's \s on str is str.isspace(): what str.strip() removes)


def has_content(text: str, excluded: Sequence[Sequence[int]]) -> bool:
    """True when ``text`` holds a character that :meth:`str.strip` keeps outside the ``excluded`` ranges (sorted
    ``[start, end)`` character offsets), i.e. when the body of :func:`embedded_text` is not blank. Searches the gaps
    between the ranges in place (no new string)."""
    pos = 0
    for s, e in excluded:
        if s > pos and _NON_SPACE.search(text, pos, s):
            return True
        pos = max(pos, e)
    return _NON_SPACE.search(text, pos) is not None


def ranges_in(doc_ranges: Sequence[tuple[int, int]], starts: Sequence[int], start: int, end: int,
              offset_of: Callable[[int], int], text_len: int) -> list[list[int]]:
    """The document ranges inside the chunk ``[start, end)`` of the document text, as offsets into the chunk text.

    Args:
        doc_ranges: sorted, non-overlapping ``(start, end)`` character offsets into the document text.
        starts: the ranges' start offsets (``[r[0] for r in doc_ranges]``, for bisection).
        start, end: the chunk's slice of the document text.
        offset_of: maps a document offset in ``[start, end]`` to an offset into the chunk text (identity minus
            ``start`` when normalisation keeps lengths).
        text_len: length of the chunk text (ranges are clipped to it: the text is right-stripped).
    Returns:
        ``[[s, e], ...]`` with ``0 <= s < e <= text_len``; ranges that only partly overlap the chunk are clipped."""
    out: list[list[int]] = []
    k = max(0, bisect.bisect_right(starts, start) - 1)
    while k < len(doc_ranges):
        s, e = doc_ranges[k]
        k += 1
        if s >= end:
            break
        if e <= start:
            continue
        cs, ce = offset_of(max(s, start)), min(offset_of(min(e, end)), text_len)
        if ce > cs:
            out.append([cs, ce])
    return out


def _split_before(text: str, pos: int) -> int:
    """The last position ``p <= pos`` that starts a line with a non-space character (0 when none): cl100k's
    pre-tokenizer always splits there (no pre-token pattern takes a line break and the character after it)."""
    p = text.rfind("\n", 0, pos) + 1 if pos > 0 else 0
    while p > 0 and (p >= len(text) or text[p].isspace()):
        p = text.rfind("\n", 0, p - 1) + 1
    return p


def _split_after(text: str, pos: int) -> int:
    """The first position ``q >= pos`` that starts a line with a non-space character (``len(text)`` when none)."""
    q = pos
    n = len(text)
    while q < n and not (q > 0 and text[q - 1] == "\n" and not text[q].isspace()):
        k = text.find("\n", q)
        if k < 0:
            return n
        q = k + 1
    return min(q, n)


def excluded_count(count: Callable[[str], int], prefix: str, text: str, excluded: Sequence[Sequence[int]],
                   suffix: str, n_full: int, known: Callable[[int, int], int | None] | None = None) -> int:
    """Exact cl100k count of :func:`embedded_text` of a chunk, from ``n_full`` (the exact count of the embedded
    text without exclusions) by encoding only the lines around each excluded range, with the exclusions applied.

    Token counts are additive across positions where the pre-tokenizer always splits (a line start with a
    non-space character); each excluded range is widened to such positions on both sides (the last one may reach
    the end of the text), and the count changes by the difference between the widened old and new pieces. The old
    pieces' counts come from ``known`` when it has them, else they are encoded; when encoding the pieces would cost
    more characters than encoding the whole embedded text, or where the additivity argument does not hold (a suffix
    follows the text, a new piece starts with a blank line, does not end with a line break before more text, or is
    empty at the end of the text), the whole embedded text is counted. (The split before a line holds whenever the
    line is not blank: of cl100k's pre-tokens only the whitespace ones hold a line break, and they end with it.)

    Args:
        count: the tokenizer's count function.
        prefix, text, excluded, suffix: as for :func:`embedded_text`.
        n_full: tokens of ``embedded_text(prefix, text, (), suffix)``.
        known: ``known(a, b)`` -> the exact tokens of ``text[a:b]`` or None when unknown, asked only for ``a`` = 0
            or a split position as above and ``b`` = such a position or ``len(text)`` (the chunker answers from the
            document's token offsets).
    Returns:
        Tokens of ``embedded_text(prefix, text, excluded, suffix)``."""
    n = len(text)
    if not excluded:
        return n_full
    if suffix:
        return count(embedded_text(prefix, text, excluded, suffix))
    segs: list[list[int]] = []  # [a, b, first range, end of ranges] (each range lies in one piece)
    for j, (s, e) in enumerate(excluded):
        a, b = _split_before(text, s), _split_after(text, e)
        if segs and a <= segs[-1][1]:
            segs[-1][1] = max(segs[-1][1], b)
            segs[-1][3] = j + 1
        else:
            segs.append([a, b, j, j + 1])
    pieces: list[tuple[int, int, int, str]] = []  # (a, b, first range, new piece)
    for a, b, j0, j1 in segs:
        while True:
            if pieces and a <= pieces[-1][1]:  # (widened into the piece before: one piece)
                a, _, j0, _ = pieces.pop()
            if a == 0 and b >= n:  # one piece that is the whole text
                return count(embedded_text(prefix, text, excluded, suffix))
            local = [[max(s, a) - a, min(e, b) - a] for s, e in excluded[j0:j1]]
            if b >= n:  # the piece ends the text: the embedded text is right-stripped after the exclusions
                new = remove_ranges(text[a:], local).rstrip()
            else:
                new = remove_ranges(text[a : b + 1], local)[:-1]  # (text[b], never excluded, decides the joins)
                if new and not new.endswith("\n"):
                    return count(embedded_text(prefix, text, excluded, suffix))
            if a == 0 and excluded[0][0] == 0:
                new = new.lstrip()
            elif a > 0 and (not new.split("\n", 1)[0].strip() if new else b >= n):
                # the piece would start with a blank line (its line breaks would join the ones before it) or leave
                # nothing at the end of the text (the strip would reach into the text before it): take in the line
                # before (a piece starting with spaces still starts a non-blank line: the split before it holds)
                a = _split_before(text, a - 1)
                continue
            elif a == 0 and new[:1].isspace() and not new.split("\n", 1)[0].strip():
                return count(embedded_text(prefix, text, excluded, suffix))
            break
        pieces.append((a, b, j0, new))
    total = n_full
    todo: list[str] = []  # pieces to encode: new pieces added, old pieces subtracted
    old: list[str] = []
    cost = 0  # characters to encode
    for a, b, _, new in pieces:
        k = known(a, min(b, n)) if known is not None else None
        if k is None:
            old.append(text[a:b])
            cost += min(b, n) - a
        else:
            total -= k
        todo.append(new)
        cost += len(new)
    if cost >= n + len(prefix):  # encoding the whole embedded text is cheaper
        return count(embedded_text(prefix, text, excluded, suffix))
    return total + sum(count(p) for p in todo if p) - sum(count(p) for p in old)
