"""HTML -> blocks and heading sections through docling, with spans, XPaths and image flags from the raw HTML.

docling gives the document structure (title, section headers with levels, paragraphs, lists, tables, code;
navigation, header and footer end up in its ``furniture`` layer and are left out) but no character offsets for
HTML (``prov == []``) and no link back to the source element. Both are recovered here from one pass of the
standard library's ``HTMLParser`` over the raw HTML (:class:`_PositionMap`), which records

* the visible text with the raw offset of every character (entities and character references included), and
* the element that holds each character, as a node of a light element tree built with the HTML parsing rules that
  matter for paths (void elements, implied ``</p>``, ``</li>``, ``</td>``, ``</tr>``, ``</option>``, implied
  ``<html>``/``<body>``), so each character has an absolute XPath such as ``/html/body/div[2]/article/p[3]``
  (positions among same-tag siblings, ``[1]`` left out when an element has no same-tag sibling, as lxml writes them);
* the raw offsets of ``<img>``/``<picture>``/``<svg>``/``<video>`` tags, ``<link rel=canonical>``, ``og:url``,
  ``<base href>`` and ``<html lang>``.

Each docling item is aligned onto that visible text with whitespace ignored on both sides (docling re-joins inline
elements with or without spaces) and typographic quotes and dashes folded (docling straightens them). Alignment
(:meth:`_Aligner.align`) keeps reading order: texts of :data:`SHORT_NEEDLE` or more characters are anchors, each
searched after the previous anchor, so repeated text cannot jump backwards; short texts ("Home", "Facebook") are
searched only between the anchors around them, so they cannot drag the alignment to the page's end; an anchor that
docling read out of source order is finally matched at its first occurrence. A long text that docling altered in
the middle is matched by its first and last 20 characters. Items that cannot be aligned (texts docling takes from
attributes, e.g. ``alt``) get a one-character span at the last aligned position, no element, and are counted in
``ParsedDocument.meta["unaligned_items"]``.

Layout tables (1990s pages, e-mail templates) are tables whose cells hold headings, nested tables or several
paragraphs: docling emits them as a table *and* then emits the cell contents again as items. They are not rendered;
their contents are. A data table with an occasional rich cell (a list in a cell) is rendered once and its
descendants are skipped. Both rules exist to stop the same text from being chunked twice.

Main-content selection (dropping boilerplate that docling keeps in the body layer) is a pluggable ``keep`` callback
(:func:`heritage_pipeline.sources.website.main_content_filter`), so that docling stays the structure parser.
"""

from __future__ import annotations

import html as htmllib
import re
from array import array
from dataclasses import dataclass, field
from functools import lru_cache
from html.parser import HTMLParser
from io import BytesIO
from typing import Any, Callable

from .markdown import build_sections
from heritage_pipeline.core.structure import DerivedTextBuilder, ParsedDocument, Section

_SKIP_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "title", "math", "iframe", "object"})
_HEAD_TAGS = frozenset({"title", "meta", "link", "script", "style", "base", "noscript", "template"})
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr keygen frame basefont isindex".split())
# Start tags that close an open <p> (HTML "close a p element" rule), and the scope boundaries of that search.
_P_CLOSERS = frozenset(
    "address article aside blockquote center details dialog dir div dl fieldset figcaption figure footer form h1 h2 "
    "h3 h4 h5 h6 header hgroup hr main menu nav ol p pre section summary table ul li dd dt".split()
)
_SCOPE = frozenset("applet caption html table td th marquee object template button".split())
_HEADINGS = frozenset("h1 h2 h3 h4 h5 h6".split())
_IMAGE_TAGS = frozenset({"img", "picture", "svg", "video"})
_WS = re.compile(r"\s+")
_CHARSET = re.compile(rb"(<meta[^>]*charset\s*=\s*[\"']?)([\w-]+)", re.I)
# docling straightens typographic quotes and dashes; both sides are folded the same way (one character for one, so
# stream offsets are unchanged).
_FOLD = str.maketrans({c: "'" for c in "‘’‚‛′`´"} | {c: '"' for c in "“”„‟″«»"} | {c: "-" for c in "‐‑‒–—―−"})
SHORT_NEEDLE = 24  # characters (whitespace removed): shorter item texts are searched only in a window ahead
# Page furniture by HTML semantics: <nav> and <aside> anywhere; <header>/<footer> when they belong to the page (their
# nearest sectioning ancestor is <body>; inside <article>/<section>/<main> they are that content's own header or
# footer, HTML Living Standard 4.3.8/4.3.9); the ARIA landmark roles of the same regions (WAI-ARIA 1.2 landmarks);
# cookie/consent banners, which have no element of their own, by the id/class words the consent tools write (not
# "cmp": Adobe AEM prefixes every component class with cmp-); the
# labels and captions of form controls (a <form> itself is not: ASP.NET pages wrap the whole body in one).
_FURNITURE_TAGS = {"nav": "navigation", "aside": "sidebar", "button": "form controls", "select": "form controls",
                   "textarea": "form controls", "label": "form controls", "legend": "form controls"}
_PAGE_SCOPED = {"header": "page header", "footer": "page footer"}
_SECTIONING = frozenset({"article", "section", "main", "aside", "nav"})
_FURNITURE_ROLES = {"navigation": "navigation", "banner": "page header", "contentinfo": "page footer",
                    "complementary": "sidebar", "search": "navigation"}
# a consent state written on the page's own containers (<body class="cookies-accepted">) does not make them banners
_NEVER_BANNER = frozenset({"body", "main", "article", "html"})
# Elements the page does not display (the HTML ``hidden`` attribute, an inline ``display: none`` or ``visibility:
# hidden``, the hiding utility classes of common CSS frameworks): a copy of the headline kept for microdata
# (``<h1 class="is-hidden" itemprop="headline">``), collapsed menus. Screen-reader-only classes (``sr-only``,
# ``visually-hidden``) are not here: that text is read out, so it is page text.
_HIDDEN_STYLE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:!important\s*)?(?:;|$)", re.I)
_HIDDEN_CLASSES = frozenset({"hidden", "is-hidden", "d-none", "hide", "u-hidden", "js-hidden"})
_COOKIE_WORDS = re.compile(r"(?:^|[\s_-])(?:cookie\w*|consent\w*|gdpr|onetrust|cookiebot|cc-window|cc-banner|"
                           r"tarteaucitron\w*|didomi\w*|klaro)(?:$|[\s_-])", re.I)


class _PositionMap(HTMLParser):
    """One pass over raw HTML: visible non-whitespace characters with their raw offsets and elements (see module doc).

    ``chars``/``offs``/``elems``: the visible text with all whitespace removed, the raw offset of each character and
    the id of the element holding it. ``tags``/``parents``/``sib_index``: the element tree (id 0 is ``html``).
    """

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
        self.elems = array("l")
        self.skip = 0
        self.tags: list[str] = ["html"]
        self.parents: list[int] = [-1]
        self.sib_index: list[int] = [1]
        self._sib_counts: dict[tuple[int, str], int] = {}
        self.stack: list[int] = [0]
        self.body: int | None = None
        self.in_head = False
        self.images: list[tuple[int, int]] = []  # (raw offset, element id)
        self.links = array("b")  # per visible character: 1 inside an <a href>
        self.link_depth = 0
        self.furniture: dict[int, str] = {}  # element id -> furniture reason (own marker; see :meth:`furniture_of`)
        self.main_elems: list[int] = []  # <main> and role=main elements
        # element id -> its class, id, itemprop, rel and role words, lower-cased (elements with any of them): what
        # the page's authors call the element, read by the main-content rules for bylines, dates, share widgets
        self.attr_words: dict[int, str] = {}
        self.hrefs: dict[int, str] = {}  # <a href> element id -> its href
        self._subtree: array | None = None
        self._furniture_cache: dict[int, str | None] = {}
        self._link_elems: set[int] = set()
        self.canonical: str | None = None
        self.og_url: str | None = None
        self.base_href: str | None = None
        self.lang: str | None = None

    # ------------------------------------------------------------------ positions
    def _abs(self) -> int:
        line, col = self.getpos()
        return self.line_starts[line - 1] + col

    def _emit(self, text: str, start: int, step: bool) -> None:
        el = self.stack[-1]
        for i, ch in enumerate(text):
            if ch.isspace():
                continue
            self.chars.append(ch)
            self.offs.append(start + (i if step else 0))
            self.elems.append(el)
            self.links.append(1 if self.link_depth else 0)

    # ------------------------------------------------------------------ tree
    def _new(self, tag: str, parent: int) -> int:
        key = (parent, tag)
        n = self._sib_counts.get(key, 0) + 1
        self._sib_counts[key] = n
        self.tags.append(tag)
        self.parents.append(parent)
        self.sib_index.append(n)
        return len(self.tags) - 1

    def _ensure_body(self) -> None:
        if self.body is None:
            while len(self.stack) > 1:  # an open <head> ends where body content starts
                self._pop_links(len(self.stack) - 1)
                self.stack.pop()
            self.body = self._new("body", 0)
            self.stack.append(self.body)

    def _close_through(self, tags: frozenset[str] | set[str], boundary: frozenset[str]) -> None:
        """Pop the stack through the nearest element in ``tags`` unless a ``boundary`` element comes first."""
        for k in range(len(self.stack) - 1, 0, -1):
            t = self.tags[self.stack[k]]
            if t in tags:
                self._pop_links(k)
                del self.stack[k:]
                return
            if t in boundary:
                return

    def xpath(self, el: int) -> str:
        """Absolute XPath of element ``el`` (``[n]`` only where the element has same-tag siblings)."""
        parts = []
        while el >= 0:
            tag, parent = self.tags[el], self.parents[el]
            if parent >= 0 and self._sib_counts.get((parent, tag), 1) > 1:
                parts.append(f"{tag}[{self.sib_index[el]}]")
            else:
                parts.append(tag)
            el = parent
        return "/" + "/".join(reversed(parts))

    def ancestors(self, el: int) -> list[int]:
        """``el`` and its ancestors up to the root, innermost first."""
        out = []
        while el >= 0:
            out.append(el)
            el = self.parents[el]
        return out

    def lca(self, a: int, b: int) -> int:
        """Lowest common ancestor of two elements."""
        if a == b:
            return a
        seen = set(self.ancestors(a))
        for el in self.ancestors(b):
            if el in seen:
                return el
        return 0

    def furniture_of(self, el: int) -> str | None:
        """The furniture reason of element ``el`` (its own marker or its nearest marked ancestor's), or None."""
        if el < 0:
            return None
        if el in self._furniture_cache:
            return self._furniture_cache[el]
        path = []
        found: str | None = None
        node = el
        while node >= 0:
            if node in self._furniture_cache:
                found = self._furniture_cache[node]
                break
            path.append(node)
            if node in self.furniture:
                found = self.furniture[node]
                break
            node = self.parents[node]
        for n in path:
            self._furniture_cache[n] = found
        return found

    def subtree_chars(self, el: int) -> int:
        """Visible characters (whitespace excluded) inside element ``el`` and its descendants; 0 for ``el < 0``."""
        if el < 0:
            return 0
        if self._subtree is None or len(self._subtree) != len(self.tags):
            counts = array("q", bytes(8 * len(self.tags)))
            for e in self.elems:
                counts[e] += 1
            for e in range(len(self.tags) - 1, 0, -1):  # a child's id is larger than its parent's (document order)
                counts[self.parents[e]] += counts[e]
            self._subtree = counts
        return self._subtree[el]

    def inside(self, el: int, ancestor: int) -> bool:
        """True when ``el`` is ``ancestor`` or one of its descendants."""
        while el >= 0:
            if el == ancestor:
                return True
            el = self.parents[el]
        return False

    def _mark(self, el: int, tag: str, attrs: Any) -> None:
        """Record furniture markers and main-content landmarks of a new element (see :data:`_FURNITURE_TAGS`)."""
        a = {k.lower(): (v or "") for k, v in attrs}
        role = a.get("role", "").strip().lower()
        words = " ".join(a[k] for k in ("class", "id", "itemprop", "rel", "role", "data-testid") if a.get(k))
        if words:
            self.attr_words[el] = words.lower()
        if tag == "main" or role == "main":
            self.main_elems.append(el)
        reason = _FURNITURE_TAGS.get(tag) or _FURNITURE_ROLES.get(role)
        if reason is None and tag in _PAGE_SCOPED:
            node = self.parents[el]
            while node > 0 and self.tags[node] not in _SECTIONING and self.tags[node] != "body":
                node = self.parents[node]
            if node <= 0 or self.tags[node] == "body":
                reason = _PAGE_SCOPED[tag]
        if (reason is None and tag not in _NEVER_BANNER
                and _COOKIE_WORDS.search(" ".join((a.get("id", ""), a.get("class", ""), a.get("aria-label", ""))))):
            reason = "cookie banner"
        if reason is None and tag not in _NEVER_BANNER and (
                "hidden" in a or _HIDDEN_STYLE.search(a.get("style", ""))
                or not _HIDDEN_CLASSES.isdisjoint(a.get("class", "").lower().split())):
            reason = "hidden element"
        if reason is not None:
            self.furniture[el] = reason

    # ------------------------------------------------------------------ HTMLParser callbacks
    def handle_starttag(self, tag: str, attrs: Any) -> None:
        start = self._abs()
        if tag == "html":
            if self.lang is None:
                self.lang = next((v for k, v in attrs if k == "lang" and v), None)
            return
        if tag in ("link", "meta", "base"):
            self._head_meta(tag, attrs)
        if self.skip:
            if tag in _SKIP_TAGS:
                self.skip += 1
            return
        if tag == "head":
            self.in_head = self.body is None
            return
        if self.in_head and tag not in _HEAD_TAGS:
            self.in_head = False  # body content without </head> or <body>
        if tag in _SKIP_TAGS:
            if tag == "svg" and not self.in_head:  # an inline svg counts as an image; its text is not page text
                self._ensure_body()
                self.images.append((start, self._new(tag, self.stack[-1])))
            self.skip += 1
            return
        if self.in_head:
            return
        if tag == "body":
            self._ensure_body()
            return
        self._ensure_body()
        if tag in _P_CLOSERS:
            self._close_through(frozenset({"p"}), _SCOPE)
        if tag == "li":
            self._close_through(frozenset({"li"}), _SCOPE | {"ul", "ol"})
        elif tag in ("dt", "dd"):
            self._close_through(frozenset({"dt", "dd"}), _SCOPE | {"dl"})
        elif tag in ("td", "th"):
            self._close_through(frozenset({"td", "th"}), frozenset({"table", "tr", "html", "template"}))
        elif tag == "tr":
            self._close_through(frozenset({"tr"}), frozenset({"table", "html", "template"}))
        elif tag in ("thead", "tbody", "tfoot"):
            self._close_through(frozenset({"thead", "tbody", "tfoot"}), frozenset({"table", "html", "template"}))
        elif tag in ("option", "optgroup"):
            self._close_through(frozenset({"option"}), frozenset({"select", "datalist", "html"}))
        elif tag in _HEADINGS and self.tags[self.stack[-1]] in _HEADINGS:
            self._pop_links(len(self.stack) - 1)
            self.stack.pop()
        el = self._new(tag, self.stack[-1])
        if attrs:
            self._mark(el, tag, attrs)
        elif tag in _FURNITURE_TAGS or tag in _PAGE_SCOPED or tag == "main":
            self._mark(el, tag, ())
        if tag in _IMAGE_TAGS:
            self.images.append((start, el))
        if tag == "a" and any(k == "href" for k, _ in attrs):
            self.link_depth += 1
            self._link_elems.add(el)
            self.hrefs[el] = next((v or "") for k, v in attrs if k == "href")
        if tag not in _VOID:
            self.stack.append(el)

    def handle_startendtag(self, tag: str, attrs: Any) -> None:
        # HTML ignores the slash of <div/> (the element stays open), as browsers and lxml do; a skipped element
        # written self-closing (<svg/>, <script/>) must not leave the skip counter raised.
        before = self.skip
        self.handle_starttag(tag, attrs)
        if self.skip > before:
            self.skip = before

    def handle_endtag(self, tag: str) -> None:
        if self.skip:
            if tag in _SKIP_TAGS:
                self.skip = max(0, self.skip - 1)
            return
        if tag == "head":
            self.in_head = False
            return
        if tag in ("html", "body") or tag in _VOID or self.in_head:
            return
        for k in range(len(self.stack) - 1, 0, -1):
            if self.tags[self.stack[k]] == tag:
                self._pop_links(k)
                del self.stack[k:]
                return

    def _pop_links(self, k: int) -> None:
        """Leaving ``stack[k:]``: count down the open links among them."""
        for el in self.stack[k:]:
            if el in self._link_elems:
                self._link_elems.discard(el)
                self.link_depth = max(0, self.link_depth - 1)

    def handle_data(self, data: str) -> None:
        if not self.skip and not self.in_head and data.strip():
            self._ensure_body()
            self._emit(data, self._abs(), True)

    def handle_entityref(self, name: str) -> None:
        if not self.skip and not self.in_head:
            self._ensure_body()
            self._emit(htmllib.unescape(f"&{name};"), self._abs(), False)

    def handle_charref(self, name: str) -> None:
        if not self.skip and not self.in_head:
            self._ensure_body()
            self._emit(htmllib.unescape(f"&#{name};"), self._abs(), False)

    def _head_meta(self, tag: str, attrs: Any) -> None:
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag == "link" and "canonical" in a.get("rel", "").lower().split() and a.get("href") and not self.canonical:
            self.canonical = a["href"].strip()
        elif tag == "meta" and a.get("property", a.get("name", "")).lower() == "og:url" and a.get("content"):
            self.og_url = self.og_url or a["content"].strip()
        elif tag == "base" and a.get("href") and not self.base_href:
            self.base_href = a["href"].strip()


class _Aligner:
    """Whitespace-insensitive, order-preserving alignment of item texts onto the visible text of the raw HTML.

    :meth:`align` works in two passes: needles of at least :data:`SHORT_NEEDLE` characters are anchors, searched
    forward from the end of the previous anchor; shorter needles (and anchors that failed) are then searched only
    between the anchors around them, so a short text such as "Facebook" cannot match a word far ahead and strand
    everything before it.
    """

    def __init__(self, raw: str) -> None:
        p = _PositionMap(raw)
        try:
            p.feed(raw)
            p.close()
        except Exception:  # HTMLParser is lenient; anything it still rejects leaves a partial map
            pass
        self.map = p
        self.stream = "".join(p.chars).translate(_FOLD)
        self.offs = p.offs
        self.elems = p.elems
        self.raw_len = len(raw)

    @staticmethod
    def key(text: str) -> str:
        """The needle for ``text``: entities decoded, all whitespace removed, quotes and dashes folded."""
        return _WS.sub("", htmllib.unescape(text) if "&" in text else text).translate(_FOLD)

    def _find(self, needle: str, lo: int, hi: int) -> tuple[int, int] | None:
        pos = self.stream.find(needle, lo, hi)
        if pos >= 0:
            return pos, pos + len(needle)
        if len(needle) > 40:  # docling may alter the middle (list markers, cell joins): anchor both ends
            head, tail = needle[:20], needle[-20:]
            pos = self.stream.find(head, lo, hi)
            if pos >= 0:
                tail_pos = self.stream.find(tail, pos + len(head), min(hi, pos + 4 * len(needle)))
                if tail_pos >= 0:
                    return pos, tail_pos + len(tail)
        return None

    def align(self, texts: list[str]) -> list[tuple[int, int] | None]:
        """``[start, end)`` in :attr:`stream` for each text (None when not found).

        Mostly in non-decreasing order; an anchor that is only found before the cursor (docling read it out of source
        order) is matched at its first occurrence."""
        keys = [self.key(t) for t in texts]
        out: list[tuple[int, int] | None] = [None] * len(keys)
        n = len(self.stream)
        cursor = 0
        for i, k in enumerate(keys):
            if len(k) >= SHORT_NEEDLE:
                m = self._find(k, cursor, n)
                if m is not None:
                    out[i], cursor = m, m[1]
        next_anchor = [n] * len(keys)
        nxt = n
        for i in range(len(keys) - 1, -1, -1):
            next_anchor[i] = nxt
            if out[i] is not None:
                nxt = out[i][0]
        prev_end = 0
        for i, k in enumerate(keys):
            if out[i] is not None:
                prev_end = out[i][1]
                continue
            if k:
                m = self._find(k, prev_end, next_anchor[i])
                if m is not None:
                    out[i], prev_end = m, m[1]
        for i, k in enumerate(keys):  # docling's reading order can differ from the source order: look anywhere
            if out[i] is None and len(k) >= SHORT_NEEDLE:
                out[i] = self._find(k, 0, n)
        return out

    def raw_span(self, m: tuple[int, int] | None, after: int) -> tuple[int, int, int, int]:
        """``(raw_start, raw_end, first_element, last_element)`` of a stream match; an unaligned item (``m`` None)
        gets a one-character span at raw offset ``after`` and elements ``-1``."""
        if m is None:
            start = min(after, max(0, self.raw_len - 1))
            return start, min(self.raw_len, start + 1), -1, -1
        a, b = m
        start, end = self.offs[a], self.offs[b - 1] + 1
        return start, max(end, start + 1), self.elems[a], self.elems[b - 1]


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


@dataclass(slots=True)
class HtmlItem:
    """One docling item, rendered and aligned: ``text`` is what becomes the block (Markdown-like), ``plain`` the
    words used for matching; ``raw_start``/``raw_end`` are code-point offsets into the raw HTML; ``first_el``/
    ``last_el`` the elements (ids in the position map) holding its first and last characters, ``-1`` if unaligned."""

    kind: str
    text: str
    plain: str
    raw_start: int
    raw_end: int
    first_el: int = -1
    last_el: int = -1
    level: int = 0
    title: str = ""
    info: str = ""
    is_title: bool = False
    stream: tuple[int, int] | None = None  # [start, end) in the aligner's whitespace-free visible text
    layer: str = "body"  # docling's content layer: body, or furniture (docling puts there all text before the
    # first heading as well as what it takes for page furniture)


@dataclass
class HtmlPage:
    """All docling items of a page in reading order, plus what the raw HTML says about the page."""

    items: list[HtmlItem]
    aligner: _Aligner
    source_url: str | None = None
    html_lang: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def furniture_reason(self, item: HtmlItem) -> str | None:
        """Why ``item`` is page furniture by the page's HTML (``navigation``, ``page header``, ``page footer``,
        ``sidebar``, ``cookie banner``), or None when it is not inside such an element. An item docling placed in its
        furniture layer that cannot be found in the page's visible text (the ``<title>``, text from attributes) is
        ``not visible page text``."""
        if item.is_title and item.layer == "furniture":
            return "page title (<title>)"  # docling's title item from <head><title>, not page text
        pm = self.aligner.map
        for el in (item.first_el, item.last_el):
            reason = pm.furniture_of(el)
            if reason is not None:
                return reason
        if item.stream is None and item.layer == "furniture":
            return "not visible page text"
        return None

    def link_share(self, item: HtmlItem) -> float:
        """Share of the item's visible characters (whitespace excluded) that are link text (inside ``<a href>``);
        0.0 for an unaligned item. The link density of boilerpipe (Kohlschütter et al., WSDM 2010)."""
        if item.stream is None:
            return 0.0
        a, b = item.stream
        if b <= a:
            return 0.0
        links = self.aligner.map.links
        return sum(links[a:b]) / (b - a)

    def within(self, item: HtmlItem, tags: frozenset[str]) -> bool:
        """True when the element of the item's first character or one of its ancestors has a tag in ``tags``."""
        pm = self.aligner.map
        return item.first_el >= 0 and any(pm.tags[e] in tags for e in pm.ancestors(item.first_el))

    def in_main(self, item: HtmlItem) -> bool:
        """True when the item lies inside a ``<main>`` (or ``role=main``) element of the page."""
        pm = self.aligner.map
        return item.first_el >= 0 and any(pm.inside(item.first_el, m) for m in pm.main_elems)


def extract_items(raw: str, name: str = "page.html") -> HtmlPage:
    """Run docling on ``raw`` and return its body-layer items, rendered and aligned (see module docstring).

    Raises whatever docling raises for input it cannot convert (the caller quarantines the file).
    """
    from docling_core.types.doc import (CodeItem, ContentLayer, InlineGroup, ListItem, PictureItem, RichTableCell,
                                        SectionHeaderItem, TableItem, TextItem, TitleItem)

    doc = docling_html(raw, name)
    aligner = _Aligner(raw)
    items: list[HtmlItem] = []
    skip_refs: set[str] = set()
    layout_tables = 0

    layer = "body"

    def add(kind: str, text: str, plain: str, **kw: Any) -> None:
        items.append(HtmlItem(kind, text, plain, -1, -1, layer=layer, **kw))

    # Both content layers, in reading order: docling's HTML backend puts everything before the first heading into
    # its furniture layer (a lead paragraph, text loose in <body>), so that layer cannot tell furniture from content;
    # the page's own HTML does (HtmlPage.furniture_reason).
    for item, _level in doc.iterate_items(with_groups=True,
                                          included_content_layers={ContentLayer.BODY, ContentLayer.FURNITURE}):
        layer = "furniture" if getattr(item, "content_layer", None) == ContentLayer.FURNITURE else "body"
        ref = getattr(item, "self_ref", "")
        if ref in skip_refs:
            if getattr(item, "children", None):
                skip_refs.update(c.cref for c in item.children)
            continue
        if isinstance(item, InlineGroup):
            parts = []
            for child in _descendants(item, doc):
                skip_refs.add(child.self_ref)
                if isinstance(child, TextItem) and child.text.strip():
                    parts.append(child.text.strip())
            if parts:
                add("paragraph", " ".join(parts), " ".join(parts))
            continue
        if isinstance(item, TitleItem):
            add("heading", f"# {item.text}", item.text, level=1, title=" ".join(item.text.split()), is_title=True)
        elif isinstance(item, SectionHeaderItem):
            lvl = min(6, (item.level or 1) + 1)
            add("heading", f"{'#' * lvl} {item.text}", item.text, level=lvl, title=" ".join(item.text.split()))
        elif isinstance(item, TableItem):
            cells = item.data.table_cells
            if _is_layout_table(item, doc):
                layout_tables += 1  # its cell contents follow as ordinary items
                continue
            for cell in cells:  # rich cells are rendered inside the table; their items must not come again
                if isinstance(cell, RichTableCell) and cell.ref is not None:
                    skip_refs.add(cell.ref.cref)
            skip_refs.update(c.cref for c in item.children)
            texts = [c.text for c in cells if c.text.strip()]
            if texts:
                add("table", table_markdown(item), " ".join(texts))
        elif isinstance(item, CodeItem):
            lang_name = getattr(item.code_language, "value", "") or ""
            lang_name = "" if lang_name.lower() == "unknown" else lang_name.lower()
            add("code", f"```{lang_name}\n{item.text}\n```", item.text, info=lang_name)
        elif isinstance(item, ListItem):
            marker = getattr(item, "marker", "") or "-"
            add("list_item", f"{marker} {item.text}", item.text)
        elif isinstance(item, PictureItem):
            continue  # images are located in the raw HTML (position map), not through docling
        elif isinstance(item, TextItem):
            add("paragraph", item.text, item.text)
    matches = aligner.align([it.plain for it in items])
    last_end = 0
    unaligned = 0
    for it, m in zip(items, matches):
        it.raw_start, it.raw_end, it.first_el, it.last_el = aligner.raw_span(m, last_end)
        it.stream = m
        if m is None:
            unaligned += not (it.is_title and it.layer == "furniture")  # the <head><title> is not page text
        else:
            last_end = it.raw_end
    pm = aligner.map
    url = pm.canonical or pm.og_url
    return HtmlPage(items, aligner, source_url=url, html_lang=pm.lang,
                    meta={"layout_tables": layout_tables, "base_href": pm.base_href, "unaligned_items": unaligned})


def table_markdown(table) -> str:
    """A docling ``TableItem`` as a GFM pipe table of its cell texts (first grid row as header).

    Written here instead of ``TableItem.export_to_markdown`` because that one puts link targets, ``<!-- image -->``
    comments and an empty header row into the cells, which would then be chunked, embedded and indexed as text.
    Spanning cells are repeated in every grid position they cover; ``|`` in a cell is escaped as ``\\|``.
    """
    rows = [[" ".join(c.text.split()).replace("|", "\\|") for c in row] for row in table.data.grid]
    rows = [r for r in rows if any(r)]
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines)


def _is_layout_table(table, doc) -> bool:
    """A table used for page layout: one of its cells holds a heading, a nested table or two or more paragraphs."""
    from docling_core.types.doc import RichTableCell, SectionHeaderItem, TableItem, TextItem, TitleItem

    for cell in table.data.table_cells:
        if not isinstance(cell, RichTableCell) or cell.ref is None:
            continue
        paragraphs = 0
        for node in _descendants(cell.ref.resolve(doc), doc):
            if isinstance(node, (TitleItem, SectionHeaderItem, TableItem)):
                return True
            if isinstance(node, TextItem) and type(node) is TextItem and len(node.text.split()) >= 8:
                paragraphs += 1
                if paragraphs >= 2:
                    return True
    return False


def parse_html(raw: str, *, doc_id: str, source_path: str, lang: str, source_type: str = "document",
               max_level: int = 3, keep: Callable[[str, "HtmlPage"], tuple[list[bool], dict[str, Any]]] | None = None,
               name: str | None = None, records: list[dict[str, Any]] | None = None) -> ParsedDocument:
    """Parse HTML into a derived-text :class:`ParsedDocument` (headings as ``#`` lines, tables as Markdown).

    ``keep(raw, page) -> (flags, info)`` selects the items of ``page.items`` to keep (main content; ``info`` goes
    into ``doc.meta``); default: every item that is not page furniture by the page's HTML
    (:meth:`HtmlPage.furniture_reason`: inside ``<nav>``, ``<aside>``, a page-level ``<header>``/``<footer>``, their
    ARIA landmark roles or a cookie banner), whichever docling content layer it is in.
    Every section gets ``meta`` ``xpath`` and ``html_tag`` (its own element when its blocks have one that holds no
    other section's blocks, else the element of its first block), ``has_images`` (an image tag inside the section's
    raw region) and, through ``doc.meta["chunk_meta"]``, every chunk gets ``source_url`` (``<link rel=canonical>``,
    else ``og:url``, else ``source_path``). ``records`` (``text``, ``raw_start``, ``raw_end``, ``anchors``, ``key``,
    ``meta``) become blocks of kind ``record`` after the page's own blocks, each a standalone section (one chunk) of
    its own (the structured data of :mod:`heritage_pipeline.sources.structured`). Raises whatever docling raises (the
    caller quarantines the file).
    """
    page = extract_items(raw, name or source_path.rsplit("/", 1)[-1])
    if keep is not None:
        flags, info = keep(raw, page)
    else:
        flags = [page.furniture_reason(it) is None for it in page.items]
        info = {"main_content": "all but page furniture"}
    builder = DerivedTextBuilder()
    block_elems: list[int] = []  # per block: the element holding all of its text (-1 when unaligned)
    for it, k in zip(page.items, flags):
        if not k:
            continue
        bi = builder.add(it.kind, it.text, it.raw_start, it.raw_end, level=it.level, title=it.title, info=it.info)
        if bi is not None:
            el = page.aligner.map.lca(it.first_el, it.last_el) if it.first_el >= 0 and it.last_el >= 0 else it.first_el
            block_elems.append(el)
    n_page_blocks = len(builder.blocks)
    record_sections = []
    for rec in records or ():
        bi = builder.add("record", rec["text"], rec["raw_start"], rec["raw_end"])
        if bi is not None:
            record_sections.append(Section(anchors=list(rec["anchors"]), level=1, first=bi, last=bi + 1,
                                           meta=dict(rec["meta"]), standalone=True, key=rec["key"]))
    text = builder.text
    for b in builder.blocks:  # the fence line / table header rows, repeated as context when a block is split
        if b.kind == "code":
            b.header_end = text.find("\n", b.start) + 1
        elif b.kind == "table":
            first_nl = text.find("\n", b.start)
            second_nl = text.find("\n", first_nl + 1) if first_nl >= 0 else -1
            b.header_end = second_nl + 1 if 0 <= second_nl < b.content_end else 0
    sections = build_sections(builder.blocks[:n_page_blocks], max_level)
    _section_elements(page, builder.blocks, block_elems, sections)
    title = next((b.title for b in builder.blocks if b.kind == "heading"), "")
    page_title = page_title_anchor(page.items, builder.blocks[:n_page_blocks])
    if page_title:
        for sec in sections:
            if not sec.anchors or sec.anchors[0].casefold() != page_title.casefold():
                sec.anchors = [page_title] + list(sec.anchors)
        title = page_title
    sections += record_sections
    meta = {"title": title, "unaligned_items": page.meta["unaligned_items"], "items": len(page.items),
            "kept_items": sum(flags), "layout_tables": page.meta["layout_tables"], "html_lang": page.html_lang,
            "source_url": page.source_url or source_path, "chunk_meta": {"source_url": page.source_url or source_path},
            **info}
    return ParsedDocument(doc_id=doc_id, source_path=source_path, source_type=source_type, lang=lang,
                          text=text, blocks=builder.blocks, sections=sections, text_is_raw=False, meta=meta)


def page_title_anchor(items: list[HtmlItem], blocks) -> str:
    """The page's ``<title>`` as the root anchor of its sections, or ``""``.

    SPEC §3 makes the anchors the parent headings H1 › H2 › H3; a page whose kept blocks have no H1 (the headline
    is in ``<title>`` only: ``<title>Visit us</title>`` over ``<h2>`` sections) would otherwise have no root, and
    its chunks no context naming the page. The ``<title>`` then stands for the H1, as a Markdown file's front-matter
    title does (:func:`heritage_pipeline.sources.markdown.parse_markdown`). It is never in a chunk's text (it is
    not page text, :meth:`HtmlPage.furniture_reason`), only in the anchors and so in the context prefix.

    Args:
        items: the page's docling items (:func:`extract_items`); docling gives the ``<title>`` as a title item in
            its furniture layer.
        blocks: the kept page blocks (headings have ``level``; an H1 is level 1).

    Returns:
        The title, whitespace collapsed, when the page has one and no kept block is an H1; else ``""``.
    """
    if any(b.kind == "heading" and b.level == 1 for b in blocks):
        return ""
    t = next((it for it in items if it.is_title and it.layer == "furniture" and it.stream is None), None)
    return " ".join(t.plain.split()) if t is not None else ""


def _section_elements(page: HtmlPage, blocks, block_elems: list[int], sections) -> None:
    """Set ``xpath``, ``html_tag`` and ``has_images`` on every section (see :func:`parse_html`)."""
    pm = page.aligner.map
    owner: dict[int, int] = {}  # element -> index of the section whose blocks it holds (-1: several sections)
    sec_lca: list[int] = []
    for si, sec in enumerate(sections):
        els = [e for e in block_elems[sec.first : sec.last] if e >= 0]
        node = els[0] if els else -1
        for e in els[1:]:
            node = pm.lca(node, e)
        sec_lca.append(node)
        for e in set(els):
            for anc in pm.ancestors(e):
                owner[anc] = si if owner.get(anc, si) == si else -1
    img_offsets = sorted(off for off, _ in pm.images)
    import bisect

    for si, sec in enumerate(sections):
        node = sec_lca[si]
        if node >= 0 and owner.get(node, -1) != si:
            node = next((e for e in block_elems[sec.first : sec.last] if e >= 0), -1)
        if node >= 0:
            sec.meta["xpath"] = pm.xpath(node)
            sec.meta["html_tag"] = pm.tags[node]
        else:
            sec.meta["xpath"] = None
            sec.meta["html_tag"] = None
        lo = min(b.raw_start for b in blocks[sec.first : sec.last])
        hi = max(b.raw_end for b in blocks[sec.first : sec.last])
        i = bisect.bisect_left(img_offsets, lo)
        sec.meta["has_images"] = i < len(img_offsets) and img_offsets[i] < hi


def _descendants(group, doc):
    for child_ref in getattr(group, "children", None) or []:
        child = child_ref.resolve(doc)
        yield child
        if getattr(child, "children", None):
            yield from _descendants(child, doc)
