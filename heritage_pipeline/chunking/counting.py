"""Exact token counts of any piece of a document at close to tokenizer speed (see ``docs/chunking.md``).
"""

from __future__ import annotations

import bisect
import gc
import itertools
from typing import TYPE_CHECKING

import numpy as np

from heritage_pipeline.core.structure import ParsedDocument
from heritage_pipeline.core.text import ODD_SPACES, normalize_inner
from heritage_pipeline.core.tokenizer import Tokenizer

if TYPE_CHECKING:
    from .units import Unit


# Short documents with at most this many blocks are counted block by block (each block one encode); others with one
# encode of the whole document and token offsets (numpy set-up costs ~20 us, about what 8 small encodes cost).
_SMALL_DOC_BLOCKS = 8


class PieceCounter:
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


class DocState:
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
                 "_run_map", "norm", "_lazy", "_range", "_ranges", "_run_start")

    def __init__(self, doc: ParsedDocument, counter: PieceCounter) -> None:
        self.doc = doc
        self.counter = counter
        self._section_index: list[int] | None = None
        self.kinds = [b.kind for b in doc.blocks]
        self._starts: list[int] | None = None
        self._ends: np.ndarray | None = None  # token end offsets of the current run, in bytes from its start
        self._bbyte: np.ndarray | None = None
        self._mode = "encode"
        # mode same_length: UTF-8 offset (from the run start) of every character of the loaded run, and one past it
        self._run_map: np.ndarray | None = None
        self.norm: str | None = None  # the normalised text when it has the same character offsets as doc.text
        self.full: list[int] = []
        self.core: list[int] = []
        self._lazy = False  # runs encoded on demand (_load_range)
        self._range: tuple[int, int] | None = None  # (first, last) block of the run whose offsets are loaded
        self._ranges: dict[tuple[int, int], tuple[np.ndarray | None, int, np.ndarray | None]] = {}
        self._run_start = 0  # character offset of the loaded run's start
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
            self._mode = "ascii" if ascii_text else "same_length"  # char offsets are byte offsets / map: _utf8_map
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
            run = norm[s0:e0]
            try:
                ends = self.counter.tok.token_ends(run)
            except UnicodeEncodeError:  # lone surrogates: no UTF-8 offsets
                ends = None
            counts, run_map = None, None
            if ends is not None and len(ends):
                starts = np.asarray([b.start for b in blocks[first:last]] + [e0], dtype=np.int64) - s0
                content = np.asarray([b.content_end for b in blocks[first:last]], dtype=np.int64) - s0
                if self._mode == "same_length":
                    run_map = _utf8_map(run)
                    starts, content = run_map[starts].astype(np.int64), run_map[content].astype(np.int64)
                counts = self._offset_counts(ends, starts, content)
            if counts is None:
                ends = run_map = None
                pairs = [self.piece(b.start, b.content_end, b.end) for b in blocks[first:last]]
                counts = ([p[0] for p in pairs], [p[1] for p in pairs])
            self.full[first:last], self.core[first:last] = counts
            cached = self._ranges[key] = (ends, s0, run_map)
        self._ends, self._run_start, self._run_map = cached
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
            bounds = np.asarray(positions, dtype=np.int64) - self._run_start
            cont = np.asarray(content, dtype=np.int64) - self._run_start
        elif self._mode == "same_length":
            bounds = self._run_map[np.asarray(positions, dtype=np.int64) - self._run_start].astype(np.int64)
            cont = self._run_map[np.asarray(content, dtype=np.int64) - self._run_start].astype(np.int64)
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

    def suffix_counts(self, c: int, u: Unit) -> tuple[int, int]:
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
        off = self._byte_offset(pos)
        if off is None or off <= 0:
            return 0 if off == 0 else None
        i = int(self._ends.searchsorted(off, "right"))
        return i if i > 0 and int(self._ends[i - 1]) == off else None

    def slice_count(self, p: int, q: int) -> int | None:
        """Exact tokens of the normalised slice ``[p, q)`` from the loaded token offsets, without encoding; None
        when they cannot say (no offsets, a position outside the loaded run or not a token end, or a position where
        the pre-tokenizer does not always split). Positions that qualify: the document start and line starts (every
        pre-token ends before a line's first character: the only pre-tokens holding a line break end with it), and
        for ``q`` also the end of a letter or digit run followed by whitespace (those pre-tokens end there)."""
        norm = self.norm
        if self._ends is None or norm is None or q <= p:
            return None
        if p > 0 and norm[p - 1] != "\n":
            return None
        if norm[q - 1] != "\n" and not (norm[q - 1].isalnum() and (q == len(norm) or norm[q].isspace())):
            return None  # (str.isalnum() is exactly \p{L} | \p{N})
        i0 = self.token_index(p)
        i1 = self.token_index(q) if i0 is not None else None
        return None if i1 is None else i1 - i0

    def limit_position(self, ip: int, n: int, end: int) -> int | None:
        """The character position where the ``n`` tokens after token index ``ip`` end (rounded down to a character
        start), or None when the text from there to ``end`` has at most ``n`` tokens (``end`` inside the loaded
        run)."""
        assert self._ends is not None
        e_off = self._byte_offset(end)
        if int(self._ends.searchsorted(e_off, "right")) - ip <= n:
            return None
        byte = int(self._ends[ip + n - 1])
        run_map = self._run_map
        if run_map is None:  # (ascii: bytes are characters)
            return self._run_start + byte
        # (the query in the map's dtype: a Python int would make numpy copy the map)
        return self._run_start + int(run_map.searchsorted(run_map.dtype.type(byte), "right")) - 1

    def _byte_offset(self, pos: int) -> int | None:
        """UTF-8 offset of character ``pos`` from the start of the loaded run (modes ``ascii`` / ``same_length``);
        None for a position outside the run (same_length; in ascii mode such an offset matches no token end)."""
        k = pos - self._run_start
        run_map = self._run_map
        if run_map is None:
            return k
        return int(run_map[k]) if 0 <= k < len(run_map) else None

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


def _utf8_map(s: str) -> np.ndarray:
    """UTF-8 byte offset of every character of ``s``, and the byte length of ``s`` at index ``len(s)`` (int32, or
    int64 for a string of 2 GB or more): the character starts are the bytes that are not continuation bytes
    (``10xxxxxx``). Raises UnicodeEncodeError for lone surrogates."""
    b = np.frombuffer(s.encode("utf-8"), dtype=np.uint8)
    out = np.empty(len(s) + 1, dtype=np.int32 if len(b) < 2**31 else np.int64)
    out[:-1] = np.flatnonzero((b & 0xC0) != 0x80)
    out[-1] = len(b)
    return out


class gc_paused:
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
