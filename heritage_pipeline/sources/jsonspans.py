"""JSON parsing that keeps the character span of every object and array.

The standard library's decoder gives values but no positions; chunk spans of conversation messages must point
into the raw JSON file. This parser walks objects and arrays in Python and delegates strings and scalars to the
stdlib's C-accelerated ``scanstring`` and ``raw_decode``, so long message texts cost C time.

Dicts and lists come back as :class:`SpannedDict` / :class:`SpannedList` (plain dict / list subclasses) with a
``span`` attribute ``(start, end)`` in code points; ``SpannedDict.value_spans[key]`` and
``SpannedList.item_spans[i]`` give the span of each member value (for a string: its literal, quotes included), and
:func:`string_offsets` maps the characters of a decoded string back to raw offsets inside its literal.

A lone surrogate escape (``"\\ud800"`` without its pair: not a character, and no UTF-8 writer, hash or Parquet file
can store it) decodes as U+FFFD, the replacement character, the way tiktoken and most JSON tools treat it. One
escape gives one character either way, so offsets are unchanged.
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring

_WS = " \t\n\r"
_DECODER = json.JSONDecoder()
_SURROGATE = re.compile("[\ud800-\udfff]")


def _scan_string(text: str, i: int) -> tuple[str, int]:
    """The string literal whose opening quote is at ``i - 1`` (stdlib ``scanstring``), lone surrogates replaced."""
    s, end = scanstring(text, i)
    if not s.isascii() and _SURROGATE.search(s):
        s = _SURROGATE.sub("\ufffd", s)
    return s, end


class SpannedDict(dict):
    span: tuple[int, int] = (0, 0)
    value_spans: dict[str, tuple[int, int]]


class SpannedList(list):
    span: tuple[int, int] = (0, 0)
    item_spans: list[tuple[int, int]]


class JSONSpanError(ValueError):
    """Invalid JSON; the message gives line, column and what was expected (like :class:`json.JSONDecodeError`)."""


def loads_with_spans(text: str):
    """Parse a JSON document, returning values whose dicts/lists carry ``.span``. Raises :class:`JSONSpanError`."""
    try:
        value, end = _parse(text, _skip(text, 0))
    except json.JSONDecodeError as exc:
        raise JSONSpanError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise JSONSpanError("JSON nested too deeply") from None
    end = _skip(text, end)
    if end != len(text):
        raise JSONSpanError(_where(text, end, "extra data after the JSON value"))
    return value


def _where(text: str, pos: int, msg: str) -> str:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"invalid JSON at line {line} column {col}: {msg}"


def _skip(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _WS:
        i += 1
    return i


def _parse(text: str, i: int):
    if i >= len(text):
        raise JSONSpanError(_where(text, i, "unexpected end of data"))
    ch = text[i]
    if ch == "{":
        obj = SpannedDict()
        obj.value_spans = {}
        start = i
        i = _skip(text, i + 1)
        if i < len(text) and text[i] == "}":
            obj.span = (start, i + 1)
            return obj, i + 1
        while True:
            if i >= len(text) or text[i] != '"':
                raise JSONSpanError(_where(text, i, "expected a property name in double quotes"))
            key, i = _scan_string(text, i + 1)
            i = _skip(text, i)
            if i >= len(text) or text[i] != ":":
                raise JSONSpanError(_where(text, i, "expected ':' after a property name"))
            vstart = _skip(text, i + 1)
            value, i = _parse(text, vstart)
            obj[key] = value
            obj.value_spans[key] = (vstart, i)
            i = _skip(text, i)
            if i < len(text) and text[i] == ",":
                i = _skip(text, i + 1)
                continue
            if i < len(text) and text[i] == "}":
                obj.span = (start, i + 1)
                return obj, i + 1
            raise JSONSpanError(_where(text, i, "expected ',' or '}' in an object"))
    if ch == "[":
        arr = SpannedList()
        arr.item_spans = []
        start = i
        i = _skip(text, i + 1)
        if i < len(text) and text[i] == "]":
            arr.span = (start, i + 1)
            return arr, i + 1
        while True:
            vstart = i
            value, i = _parse(text, i)
            arr.append(value)
            arr.item_spans.append((vstart, i))
            i = _skip(text, i)
            if i < len(text) and text[i] == ",":
                i = _skip(text, i + 1)
                continue
            if i < len(text) and text[i] == "]":
                arr.span = (start, i + 1)
                return arr, i + 1
            raise JSONSpanError(_where(text, i, "expected ',' or ']' in an array"))
    if ch == '"':
        return _scan_string(text, i + 1)
    value, end = _DECODER.raw_decode(text, i)
    return value, end


_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def string_offsets(text: str, start: int) -> tuple[str, list[int]]:
    """Decode the JSON string literal at ``text[start]`` (a ``"``) and return it with the raw offset of each of its
    characters (an escape maps to the offset of its backslash; a surrogate pair to its first escape).

    The decoded string equals :func:`json.loads` of the literal (a lone surrogate as U+FFFD, see the module doc).
    Raises :class:`JSONSpanError` for a malformed literal.
    """
    if text[start : start + 1] != '"':
        raise JSONSpanError(_where(text, start, "expected a string"))
    out: list[str] = []
    offs: list[int] = []
    i = start + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            return "".join(out), offs
        if ch != "\\":
            out.append(ch)
            offs.append(i)
            i += 1
            continue
        esc = text[i + 1 : i + 2]
        if esc in _ESCAPES:
            out.append(_ESCAPES[esc])
            offs.append(i)
            i += 2
            continue
        if esc == "u":
            code = int(text[i + 2 : i + 6], 16)
            width = 6
            if 0xD800 <= code < 0xDC00 and text[i + 6 : i + 8] == "\\u":
                low = int(text[i + 8 : i + 12], 16)
                if 0xDC00 <= low < 0xE000:
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    width = 12
            out.append("\ufffd" if 0xD800 <= code < 0xE000 else chr(code))  # (a lone surrogate: see the module doc)
            offs.append(i)
            i += width
            continue
        raise JSONSpanError(_where(text, i, "invalid escape"))
    raise JSONSpanError(_where(text, start, "unterminated string"))
