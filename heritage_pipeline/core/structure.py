"""Parsed document structure shared by every parser and the chunker.

A parser turns one raw file into a :class:`ParsedDocument`: a ``text`` the chunker slices, its :class:`Block` list
(paragraphs, headings, tables, code, ...) and :class:`Section` list (heading path + block range).

* Markdown and plain text: ``text`` *is* the decoded raw file, so chunk spans are exact offsets into it.
* Derived sources (HTML, conversation JSON, CSV rows, YAML entities): ``text`` is extracted text built by the parser
  and every block carries ``raw_start``/``raw_end``, the region of the raw file it came from; a chunk's span is the
  union of its blocks' raw regions.

All offsets are code points. Blocks are contiguous and ordered: ``blocks[i].end == blocks[i+1].start``, each block
starts at the start of a non-blank line and its ``end`` includes the blank lines that follow it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

class ParseError(ValueError):
    """A whole file cannot be used; the message names the problem (callers prefix the file name)."""


class NotInputData(ParseError):
    """A readable file that is deliberately not input (e.g. a LinkML schema among instance files): the file is
    *skipped* with this reason, not quarantined."""


def value_kind(value: Any, *, mapping: str = "an object", sequence: str = "an array") -> str:
    """What a parsed JSON/YAML value is, with its article, for error messages (``a string``, ``an object``,
    ``null``); ``mapping``/``sequence`` name dicts and lists in the format's own words (YAML: a mapping, a list)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return mapping
    if isinstance(value, list):
        return sequence
    return f"a {type(value).__name__}"


# Block kinds. Atomic kinds are never cut when they fit under the hard maximum.
ATOMIC_KINDS = frozenset({"code", "table", "html_table", "blockquote", "admonition", "front_matter", "html"})


@dataclass(slots=True)
class Block:
    """One structural block of a document.

    ``start``/``end``: half-open range in ``ParsedDocument.text``, ``end`` including trailing blank lines;
    ``content_end``: offset after the last non-whitespace character (``start < content_end <= end``).
    ``header_end``: for tables, the end of the header and delimiter rows; for fenced code, the end of the opening
    fence line (both are repeated as context when the block has to be split); 0 otherwise.
    ``raw_start``/``raw_end``: region of the raw file for derived documents (``-1`` when ``text`` is the raw file).
    """

    kind: str
    start: int
    end: int
    content_end: int
    level: int = 0
    title: str = ""
    info: str = ""
    header_end: int = 0
    raw_start: int = -1
    raw_end: int = -1


@dataclass(slots=True)
class Section:
    """A heading section: ``blocks[first:last]`` of the document, with its breadcrumb ``anchors`` (H1 > H2 > H3).

    ``meta`` holds source-specific fields copied onto every chunk of the section (e.g. ``conversation_id``,
    ``section_type``, ``xpath``, registry slots). ``standalone`` sections (a message, a registry row, an entity)
    are never merged with neighbours.
    """

    anchors: list[str]
    level: int
    first: int
    last: int
    meta: dict[str, Any] = field(default_factory=dict)
    standalone: bool = False
    key: str = ""  # stable section key for chunk ids (defaults to the slugged anchor path)


@dataclass(slots=True)
class ParsedDocument:
    """A parsed source file, ready for chunking. ``text_is_raw`` tells whether spans index ``text`` directly."""

    doc_id: str
    source_path: str
    source_type: str
    lang: str
    text: str
    blocks: list[Block]
    sections: list[Section]
    text_is_raw: bool = True
    domain: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # parts deliberately left out, with the reason

    def raw_span(self, start: int, end: int, first_block: int, last_block: int) -> tuple[int, int]:
        """Map a ``[start, end)`` range of ``text`` covering ``blocks[first_block..last_block]`` to raw offsets."""
        if self.text_is_raw:
            return start, end
        return self.blocks[first_block].raw_start, self.blocks[last_block].raw_end


class DerivedTextBuilder:
    """Builds the extracted ``text`` of a derived document block by block, keeping the structure invariants.

    Each :meth:`add` appends one block's text (stripped, never blank) followed by a blank line, and records the raw
    region it came from. Used by the HTML, conversation, CSV and YAML parsers.
    """

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._pos = 0
        self.blocks: list[Block] = []

    def add(self, kind: str, text: str, raw_start: int, raw_end: int, **kw: Any) -> int | None:
        """Append a block; returns its index, or None when ``text`` is blank (nothing is added)."""
        from .text import is_blank, normalize

        body = normalize(text).lstrip("\n")
        if is_blank(body):
            return None
        start = self._pos
        piece = body + "\n\n"
        self._parts.append(piece)
        self._pos += len(piece)
        self.blocks.append(Block(kind, start, self._pos, start + len(body), raw_start=raw_start, raw_end=raw_end, **kw))
        return len(self.blocks) - 1

    @property
    def text(self) -> str:
        return "".join(self._parts)
