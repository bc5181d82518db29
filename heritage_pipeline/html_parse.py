"""HTML -> blocks and heading sections through docling, with spans into the raw HTML.

docling gives the document structure (title, section headers with levels, paragraphs, lists, tables, code;
navigation, header and footer end up in its ``furniture`` layer and are left out) but no character offsets for
HTML (``prov == []``). Offsets are recovered by aligning each docling item, in reading order, with a map of the
raw HTML's visible text built by the standard library's ``HTMLParser`` (which reports the position of every text
node and entity). The alignment is monotonic: item *n* is searched only after the end of item *n-1*, so repeated
text cannot jump backwards. Items that cannot be aligned keep the span of the last aligned position and are counted
in ``ParsedDocument.meta["unaligned_items"]``.
"""

from __future__ import annotations

import html as htmllib
import re
from array import array
from functools import lru_cache
from html.parser import HTMLParser
from io import BytesIO
from typing import Any

from .structure import DerivedTextBuilder, ParsedDocument
from .markdown import build_sections

_SKIP_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "head"})
_BLOCK_TAGS = frozenset(
    "p div br li ul ol table tr td th h1 h2 h3 h4 h5 h6 section article header footer nav aside pre blockquote "
    "dd dt dl figure figcaption main form title".split()
)
_WS = re.compile(r"\s+")
_CHARSET = re.compile(rb"(<meta[^>]*charset\s*=\s*[\"']?)([\w-]+)", re.I)


class _VisibleText(HTMLParser):
    """Collects visible text of raw HTML with the raw offset of every character (whitespace collapsed)."""

    def __init__(self, raw: str) -> None:
        super().__init__(convert_charrefs=False)
        self.raw = raw
        self.line_starts = [0]
        pos = raw.find("\n")
        while pos != -1:
            self.line_starts.append(pos + 1)
            pos = raw.find("\n", pos + 1)
        self.chars: list[str] = []
        self.offs = array("q")
        self.skip = 0
        self._space = True

    def _abs(self) -> int:
        line, col = self.getpos()
        return self.line_starts[line - 1] + col

    def _emit(self, text: str, start: int, step: bool) -> None:
        for i, ch in enumerate(text):
            if ch.isspace():
                if self._space:
                    continue
                ch = " "
                self._space = True
            else:
                self._space = False
            self.chars.append(ch)
            self.offs.append(start + (i if step else 0))

    def _sep(self) -> None:
        if not self._space:
            self.chars.append(" ")
            self.offs.append(self._abs())
            self._space = True

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in _SKIP_TAGS:
            self.skip += 1
        elif tag in _BLOCK_TAGS:
            self._sep()

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP_TAGS:
            self.skip = max(0, self.skip - 1)
        elif tag in _BLOCK_TAGS:
            self._sep()

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self._emit(data, self._abs(), True)

    def handle_entityref(self, name: str) -> None:
        if not self.skip:
            self._emit(htmllib.unescape(f"&{name};"), self._abs(), False)

    def handle_charref(self, name: str) -> None:
        if not self.skip:
            self._emit(htmllib.unescape(f"&#{name};"), self._abs(), False)


class _Aligner:
    """Monotonic alignment of extracted item texts onto the visible-text stream of the raw HTML."""

    def __init__(self, raw: str) -> None:
        p = _VisibleText(raw)
        try:
            p.feed(raw)
            p.close()
        except Exception:  # HTMLParser is lenient; anything it still rejects leaves a partial map
            pass
        self.stream = "".join(p.chars)
        self.offs = p.offs
        self.cursor = 0
        self.last_end = 0
        self.unaligned = 0
        self.raw_len = len(raw)

    def locate(self, text: str) -> tuple[int, int]:
        """Raw (start, end) of ``text``, searched from the cursor; falls back to the last aligned position."""
        needle = _WS.sub(" ", text).strip()
        if not needle or not self.stream:
            return self._fallback()
        pos = self.stream.find(needle, self.cursor)
        length = len(needle)
        if pos < 0 and len(needle) > 40:  # docling may alter the middle (list markers, cell joins): anchor both ends
            head, tail = needle[:40], needle[-40:]
            pos = self.stream.find(head, self.cursor)
            if pos >= 0:
                tail_pos = self.stream.find(tail, pos)
                length = (tail_pos + len(tail) - pos) if tail_pos >= 0 else len(head)
        if pos < 0:
            return self._fallback()
        start = self.offs[pos]
        end = self.offs[pos + length - 1] + 1
        self.cursor = pos + length
        self.last_end = max(self.last_end, end)
        return start, max(end, start + 1)

    def _fallback(self) -> tuple[int, int]:
        self.unaligned += 1
        start = min(self.last_end, max(0, self.raw_len - 1))
        return start, min(self.raw_len, start + 1)


@lru_cache(maxsize=1)
def _converter():
    from docling.datamodel.base_models import InputFormat
    from docling.document_converter import DocumentConverter

    return DocumentConverter(allowed_formats=[InputFormat.HTML])


def docling_html(raw: str, name: str = "page.html"):
    """Convert HTML text with docling (offline) and return the ``DoclingDocument``.

    The text is handed over as UTF-8 bytes with any ``<meta charset>`` rewritten to UTF-8, so docling's decoder
    cannot re-decode already-decoded text with a wrong declared charset.
    """
    from docling.datamodel.base_models import DocumentStream

    data = _CHARSET.sub(lambda m: m.group(1) + b"utf-8", raw.encode("utf-8"))
    stream = DocumentStream(name=name if name.lower().endswith((".html", ".htm")) else name + ".html", stream=BytesIO(data))
    result = _converter().convert(stream, raises_on_error=True)
    return result.document


def parse_html(raw: str, *, doc_id: str, source_path: str, lang: str, source_type: str = "document",
               max_level: int = 3) -> ParsedDocument:
    """Parse HTML into a derived-text :class:`ParsedDocument` (headings as ``#`` lines, tables as Markdown).

    Raises whatever docling raises for input it cannot convert (the caller quarantines the file).
    """
    from docling_core.types.doc import (CodeItem, InlineGroup, ListItem, PictureItem, SectionHeaderItem, TableItem,
                                        TextItem, TitleItem)

    doc = docling_html(raw, source_path.rsplit("/", 1)[-1])
    aligner = _Aligner(raw)
    builder = DerivedTextBuilder()
    skip_refs: set[str] = set()
    images_after: list[int] = []
    for item, _level in doc.iterate_items(with_groups=True):
        ref = getattr(item, "self_ref", "")
        if ref in skip_refs:
            continue
        if isinstance(item, InlineGroup):
            parts = []
            for child in _descendants(item, doc):
                skip_refs.add(child.self_ref)
                if isinstance(child, TextItem) and child.text.strip():
                    parts.append(child.text.strip())
            spans = [aligner.locate(p) for p in parts]
            text = " ".join(parts)
            if spans:
                builder.add("paragraph", text, spans[0][0], max(s[1] for s in spans))
            continue
        if isinstance(item, TitleItem):
            s, e = aligner.locate(item.text)
            builder.add("heading", f"# {item.text}", s, e, level=1, title=" ".join(item.text.split()))
        elif isinstance(item, SectionHeaderItem):
            lvl = min(6, (item.level or 1) + 1)
            s, e = aligner.locate(item.text)
            builder.add("heading", f"{'#' * lvl} {item.text}", s, e, level=lvl, title=" ".join(item.text.split()))
        elif isinstance(item, TableItem):
            cells = [c.text for c in item.data.table_cells if c.text.strip()]
            s, e = aligner.locate(cells[0]) if cells else aligner._fallback()
            if len(cells) > 1:
                _, e = aligner.locate(cells[-1])
            md = item.export_to_markdown(doc=doc)
            builder.add("table", md, s, max(e, s + 1), header_end=0)
        elif isinstance(item, CodeItem):
            s, e = aligner.locate(item.text)
            lang_name = getattr(item.code_language, "value", "") or ""
            lang_name = "" if lang_name.lower() == "unknown" else lang_name.lower()
            builder.add("code", f"```{lang_name}\n{item.text}\n```", s, e, info=lang_name)
        elif isinstance(item, ListItem):
            s, e = aligner.locate(item.text)
            marker = getattr(item, "marker", "") or "-"
            builder.add("list_item", f"{marker} {item.text}", s, e)
        elif isinstance(item, PictureItem):
            images_after.append(len(builder.blocks))
        elif isinstance(item, TextItem):
            s, e = aligner.locate(item.text)
            builder.add("paragraph", item.text, s, e)
    text = builder.text
    for b in builder.blocks:  # the fence line / table header rows, repeated as context when a block is split
        if b.kind == "code":
            b.header_end = text.find("\n", b.start) + 1
        elif b.kind == "table":
            first_nl = text.find("\n", b.start)
            second_nl = text.find("\n", first_nl + 1) if first_nl >= 0 else -1
            b.header_end = second_nl + 1 if 0 <= second_nl < b.content_end else 0
    sections = build_sections(builder.blocks, max_level)
    for sec in sections:
        sec.meta["has_images"] = any(sec.first <= i < sec.last for i in images_after)
    title = next((b.title for b in builder.blocks if b.kind == "heading"), "")
    return ParsedDocument(doc_id=doc_id, source_path=source_path, source_type=source_type, lang=lang,
                          text=builder.text, blocks=builder.blocks, sections=sections, text_is_raw=False,
                          meta={"title": title, "unaligned_items": aligner.unaligned})


def _descendants(group, doc):
    for child_ref in group.children:
        child = child_ref.resolve(doc)
        yield child
        if getattr(child, "children", None):
            yield from _descendants(child, doc)
