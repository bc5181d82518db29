"""Text helpers shared by every stage: decoding raw files, the one documented normalisation, grapheme-safe cuts,
the one word tokenizer (:data:`WORD_RE`, :func:`words`) and the one markup stripper (:func:`strip_markup`).

Offsets everywhere are code points (Python ``str`` indices) into the decoded raw text with a leading BOM removed.
"""

from __future__ import annotations

import codecs
import logging
import re
import unicodedata
from dataclasses import dataclass

import regex

_log = logging.getLogger(__name__)

# Non-breaking and other "odd" spaces that become one ASCII space each (never collapsed: code indentation matters).
ODD_SPACES = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
BOM = "\ufeff"
# A regex scan (C speed) finds the rare odd characters; str.translate with a dict costs a lookup per character.
_ODD = re.compile("[" + ODD_SPACES + BOM + "]")


def _odd_repl(m: re.Match[str]) -> str:
    return "" if m.group() == BOM else " "


_ODD_CHARS = tuple(ODD_SPACES + BOM)


def _fix_chars(s: str) -> str:
    if "\r" in s:
        s = s.replace("\r\n", "\n").replace("\r", "\n")
    if not s.isascii():
        # 17 substring tests (C fast search) are ~10x cheaper than one regex character-class search (measured)
        if any(c in s for c in _ODD_CHARS):
            s = _ODD.sub(_odd_repl, s)
        s = unicodedata.normalize("NFC", s)
    return s


def normalize(s: str) -> str:
    """The pipeline's one text normalisation, applied to ``raw[char_start:char_end]`` to give a chunk's ``text``.

    In order: CRLF and lone CR -> LF; non-breaking and odd spaces (:data:`ODD_SPACES`) -> one ASCII space each
    (runs are not collapsed); U+FEFF removed; Unicode NFC; trailing whitespace removed. Leading indentation is kept
    (the chunker never starts a span on whitespace except a line's own indentation).
    """
    return _fix_chars(s).rstrip()


def normalize_inner(s: str) -> str:
    """:func:`normalize` without the final right-strip (used for pieces that are joined before trimming)."""
    return _fix_chars(s)


def is_blank(s: str) -> bool:
    """True when ``s`` holds only whitespace, odd spaces and BOMs (what the chunker never emits alone)."""
    if not s.strip():
        return True
    return not s.isascii() and not _ODD.sub("", s).strip()


_GRAPHEME = regex.compile(r"\X")


def grapheme_boundaries(s: str, start: int, end: int) -> list[int]:
    """Grapheme-cluster boundaries (UAX #29 extended clusters) of ``s[start:end]`` as absolute offsets.

    Includes ``start`` and ``end``. Linear in ``end - start``. Cutting only at these offsets never separates a base
    character from its combining marks, an emoji ZWJ sequence or a regional-indicator pair.
    """
    out = [start]
    for m in _GRAPHEME.finditer(s, start, end):
        out.append(m.end())
    if out[-1] != end:
        out.append(end)
    return out


@dataclass(frozen=True)
class DecodedText:
    """A raw file decoded to text: ``text`` has no leading BOM; ``encoding`` is the codec actually used."""

    text: str
    encoding: str
    had_bom: bool
    warning: str = ""  # set when the reading may be wrong: replacement characters, or UTF-8 pairs read single-byte


class DecodeError(ValueError):
    """The bytes are not text (binary) or no supported encoding decodes them; the message says which."""


_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


# Single-byte encodings tried when a file is not UTF-8, in order of preference for NL/EN/FR/DE sources (Latin-1 text
# decodes identically under CP1252 except for C1 control codes, which real text does not use).
SINGLE_BYTE_ENCODINGS = ("cp1252", "iso8859_15", "cp1250", "mac_roman")
_DECLARED = re.compile(rb"""(?:<meta[^>]{0,200}?charset\s*=\s*["']?|<\?xml[^>]{0,100}?encoding\s*=\s*["'])([A-Za-z0-9_\-]+)""",
                       re.I)


# Signs that a Central European letter read with the wrong code page turns into (cp1250 ł ą ż Ł Ą ľ ş ˇ read as
# cp1252 give ³ ¹ ¿ £ ¥ ¾ º ¡, ...): almost never written between two letters of a word.
_WORD_BREAKERS = frozenset("¡¢£¤¥¦¨ª¬¯±²³¸¹º¼½¾¿×÷")


def _implausible(text: str) -> int:
    """Characters a wrong single-byte decoding typically produces: C1 control codes, and the signs of
    :data:`_WORD_BREAKERS` between two letters inside a word (``³ódŸ`` for ``łódź``)."""
    bad = 0
    n = len(text)
    for i, ch in enumerate(text):
        o = ord(ch)
        if o < 0x80:
            continue
        if o < 0xA0:
            bad += 1
        elif ch in _WORD_BREAKERS and 0 < i < n - 1 and text[i - 1].isalpha() and text[i + 1].isalpha():
            bad += 1
    return bad


# A file that is not valid UTF-8 is refused (quarantined) when it holds at least this many valid multi-byte characters
# but more invalid sequences than valid ones: most of its multi-byte sequences are broken, so neither reading is right.
# Fewer valid ones than this next to more invalid ones are chance pairs in single-byte text ("É’" is C9 92, a valid
# UTF-8 pair): the single-byte reading wins.
UTF8_EVIDENCE = 4
# Offsets named in the warning for a UTF-8 file read with replacement characters (the count is always given).
_SHOWN_OFFSETS = 10


def invalid_utf8_offsets(data: bytes) -> list[tuple[int, int]]:
    """Byte ranges ``(start, end)`` of the invalid UTF-8 sequences in ``data``, in order; each is one replacement
    character in ``data.decode("utf-8", errors="replace")``. Linear in ``len(data)`` (the decoder resumes after each
    error on a zero-copy view)."""
    out: list[tuple[int, int]] = []
    view = memoryview(data)
    pos = 0
    while pos < len(data):
        try:
            codecs.utf_8_decode(view[pos:], "strict", True)
            break
        except UnicodeDecodeError as exc:
            out.append((pos + exc.start, pos + exc.end))
            pos += exc.end
    return out


def mostly_non_ascii(text: str) -> bool:
    """True when more than half of the (at least 16) non-space characters are non-ASCII: not Western single-byte
    text (which is mostly ASCII) but binary data or another script's code page read as one."""
    letters = [ch for ch in text if not ch.isspace()]
    return len(letters) >= 16 and sum(1 for ch in letters if ord(ch) > 0x7F) > len(letters) // 2


def decode_bytes(data: bytes, *, name: str = "<bytes>") -> DecodedText:
    """Decode raw file bytes with their real encoding; never mangles text silently.

    Order: UTF-8 BOM -> ``utf-8-sig``; UTF-16 BOM -> ``utf-16``; strict UTF-8; a charset declared in the file
    (``<meta charset>``, ``<?xml encoding>``) when it decodes the bytes; otherwise the single-byte encoding of
    :data:`SINGLE_BYTE_ENCODINGS` whose decoding has the fewest implausible characters (:func:`_implausible`),
    preferring CP1252 on ties (so CP1252 and Latin-1 text is always read as written). When another candidate ties but reads some bytes differently, ``encoding`` says so
    (``cp1252 (ambiguous: cp1250 reads 3 characters differently)``) so the guess is visible, not silent.

    Why not ``charset-normalizer`` alone: on short registry files it picked cp1250 for CP1252 Dutch text and turned
    ``Belvédère`` into ``Belvédčre`` (measured; its language model needs more text than a registry row has).
    Bytes that are not valid UTF-8 but hold valid multi-byte UTF-8 sequences at least as many as invalid ones are a
    UTF-8 file with stray bytes: decoded as UTF-8 with U+FFFD replacement characters, ``encoding`` says how many were
    replaced and ``warning`` (also logged) names ``name`` and the byte offsets (:func:`invalid_utf8_offsets`). Bytes
    >= 0x80 with no valid multi-byte sequence are single-byte text (the candidates below).

    Raises :class:`DecodeError` naming ``name`` for binary data (NUL bytes in a non-UTF-16 file), for UTF-8 text
    where most multi-byte sequences are invalid (at least :data:`UTF8_EVIDENCE` valid ones, and more invalid
    ones), for bytes that only decode to mostly
    non-ASCII characters (binary data, or a non-Latin code page such as cp1251), or bytes no candidate decodes.
    """
    if data.startswith(codecs.BOM_UTF8):
        try:
            return DecodedText(data[3:].decode("utf-8"), "utf-8-sig", True)
        except UnicodeDecodeError as exc:
            raise DecodeError(f"{name}: starts with a UTF-8 BOM but is not valid UTF-8 at byte {exc.start + 3}") from None
    if data.startswith(_UTF16_BOMS):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise DecodeError(f"{name}: has a UTF-16 BOM but is not valid UTF-16 ({exc.reason})") from None
        return DecodedText(text.removeprefix(BOM), "utf-16", True)
    if b"\x00" in data[:8192]:
        raise DecodeError(f"{name}: binary file (NUL bytes), not text")
    try:
        return DecodedText(data.decode("utf-8"), "utf-8", False)
    except UnicodeDecodeError as utf8_error:
        first_bad = utf8_error.start
    declared = _DECLARED.search(data[:4096])
    if declared:
        enc = declared.group(1).decode("ascii", "replace").lower()
        try:
            if codecs.lookup(enc).name not in ("utf-8", "utf-16"):
                return DecodedText(data.decode(enc), f"{codecs.lookup(enc).name} (declared)", False)
        except (LookupError, UnicodeDecodeError):
            pass
    bad = invalid_utf8_offsets(data)
    lenient = data.decode("utf-8", errors="replace")
    n_bad = len(bad)
    n_multi = sum(1 for ch in lenient if ord(ch) > 0x7F) - lenient.count("\ufffd")
    if n_multi >= 1 and n_multi >= n_bad:
        # valid multi-byte UTF-8 sequences at least as many as the broken ones: a UTF-8 file with a few stray bytes
        # (a Windows byte pasted in). A single-byte reading would turn every accented letter into two wrong
        # characters (Musée -> MusÃ©e), so the stray bytes become U+FFFD and the warning says where they were.
        shown = ", ".join(str(b0) for b0, _ in bad[:_SHOWN_OFFSETS]) + (", ..." if n_bad > _SHOWN_OFFSETS else "")
        warning = (f"{name}: UTF-8 with {n_bad} invalid byte sequence(s) read as U+FFFD replacement characters, "
                   f"at byte offset(s) {shown}")
        _log.warning(warning)
        return DecodedText(lenient, f"utf-8 ({n_bad} invalid byte sequence(s) replaced)", False, warning)
    if n_multi >= UTF8_EVIDENCE:
        raise DecodeError(f"{name}: UTF-8 text where most multi-byte sequences are invalid ({n_bad} invalid, "
                          f"{n_multi} valid; the first invalid at byte {first_bad}); repair or re-save the file as UTF-8")
    candidates: list[tuple[int, int, str, str]] = []
    for rank, enc in enumerate(SINGLE_BYTE_ENCODINGS):
        try:
            text = data.decode(enc)
        except UnicodeDecodeError:
            continue
        candidates.append((_implausible(text), rank, enc, text))
    if not candidates:
        raise DecodeError(f"{name}: not valid UTF-8 (first bad byte at {first_bad}) and no single-byte encoding fits")
    candidates.sort()
    bad, _, enc, text = candidates[0]
    if sum(1 for ch in text if unicodedata.category(ch) == "Cc" and ch not in "\t\n\r\f") > max(8, len(text) // 200):
        raise DecodeError(f"{name}: decodes as {enc} only with many control characters; likely binary")
    if mostly_non_ascii(text):
        # Western single-byte text is mostly ASCII; this is binary data or another script's code page (e.g. cp1251)
        raise DecodeError(f"{name}: not UTF-8, and as {enc} most characters would be non-ASCII: binary data or an "
                          "unsupported encoding (re-save the file as UTF-8)")
    label = enc
    rivals = [(e, t) for b2, _, e, t in candidates[1:] if b2 == bad and t != text]
    if rivals:
        e2, t2 = rivals[0]
        diff = sum(1 for x, y in zip(text, t2) if x != y)
        label = f"{enc} (ambiguous: {e2} reads {diff} characters differently)"
    warning = ""
    if n_multi:
        # Fewer valid multi-byte UTF-8 sequences than invalid ones: single-byte text, where such pairs occur by chance
        # ("É’" is C9 92). But a file that mixes encodings (a UTF-8 row pasted into a CP1252 file) also lands here,
        # and its UTF-8 characters then read as two wrong ones ("Café" -> "CafÃ©"): say where, so it is not silent.
        pairs = _valid_multibyte_offsets(data, limit=_SHOWN_OFFSETS)
        shown = ", ".join(f"{b0} ({data[b0:b1].decode('utf-8')!r})" for b0, b1 in pairs)
        warning = (f"{name}: read as {enc}, but {n_multi} byte sequence(s) are also valid UTF-8, at byte offset(s) "
                   f"{shown}{', ...' if n_multi > len(pairs) else ''}: if the file mixes encodings, these characters "
                   f"are wrong (re-save the file as UTF-8)")
        _log.warning(warning)
    return DecodedText(text, label, False, warning)


def _valid_multibyte_offsets(data: bytes, *, limit: int) -> list[tuple[int, int]]:
    """Byte ranges of the first ``limit`` valid multi-byte UTF-8 sequences in ``data`` (which is not valid UTF-8 as a
    whole): the bytes between the invalid ranges of :func:`invalid_utf8_offsets`, decoded, give the characters."""
    out: list[tuple[int, int]] = []
    prev = 0
    for start, end in [*invalid_utf8_offsets(data), (len(data), len(data))]:
        pos = prev
        for ch in data[prev:start].decode("utf-8"):
            width = len(ch.encode("utf-8"))
            if width > 1:
                out.append((pos, pos + width))
                if len(out) >= limit:
                    return out
            pos += width
        prev = end
    return out


_LINE_END = re.compile(r"\r\n|\r|\n")


def line_starts(text: str) -> list[int]:
    """Offsets where each line starts (line endings: CRLF, CR or LF, as in CommonMark)."""
    return [0] + [m.end() for m in _LINE_END.finditer(text) if m.end() < len(text)]


# ------------------------------------------------------------------------------------------- words and markup
# The one word tokenizer: maximal runs of Unicode word characters as UTS #18 defines them (letters, combining marks,
# digits, connector punctuation), through the `regex` module. Python's `re` \w leaves out combining marks, so it cut
# words of scripts that write vowels as marks (Devanagari, Tamil, Thai ...) into pieces. Used for chunk ids, adaptive
# overlap, boilerplate shingles, table header matching, BM25 analysis and the source evaluations; tokenisers that
# differ on purpose say why where they are defined (keywords: letters only; dedup shingles: one token per CJK
# character; gazetteer names: letters and digits only, so snake_case identifiers still show their words).
WORD_RE = regex.compile(r"\w+")


def words(text: str) -> list[str]:
    """The words of ``text`` (:data:`WORD_RE`), as they appear (no case folding).

    Args:
        text: any text.

    Returns:
        The maximal runs of word characters, in order.
    """
    return WORD_RE.findall(text)


_CODE_FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1", re.S | re.M)
_HTML_DROP = re.compile(r"<(script|style|noscript|svg|template)\b.*?</\1\s*>", re.S | re.I)
_TAG = re.compile(r"<[^>]*>")
_URL = re.compile(r"\(?https?://\S+|\]\([^)]*\)|\{\*.*?\*\}|\{\{.*?\}\}")


def strip_markup(text: str) -> str:
    """The one markup stripper: Markdown / HTML to the plain prose that language detection, keyword extraction and
    the file-level language of discovery read. Fenced code blocks, ``<script>``/``<style>``/``<noscript>``/``<svg>``/
    ``<template>`` elements, HTML tags, URLs, Markdown link targets and template / include directives
    (``{{ ... }}``, ``{* ... *}``) become one space each; everything else is kept as it is.

    Args:
        text: Markdown, HTML or plain text.

    Returns:
        The text with that markup replaced by spaces (offsets are not preserved; never used for spans).
    """
    text = _CODE_FENCE.sub(" ", text)
    if "<" in text:
        text = _HTML_DROP.sub(" ", text)
        text = _TAG.sub(" ", text)
    return _URL.sub(" ", text)
