"""Main content of a saved web page: which docling items are kept, and what was removed and why.

Three sources of evidence, in this order:

1. **Page furniture by the page's own HTML** (:meth:`heritage_pipeline.sources.html.HtmlPage.furniture_reason`):
   an item inside ``<nav>``, ``<aside>``, a page-level ``<header>``/``<footer>``, an element with one of their ARIA
   landmark roles, or a cookie/consent banner is removed, whatever else says. docling's own furniture layer is not
   used for this: its HTML backend also puts there everything before the first heading (a lead paragraph, text loose
   in ``<body>``).
2. **trafilatura** (Barbaresi 2021, ACL demo), an established main-content extractor, run with
   ``favor_recall=True``: its text selects items (the *selector*), docling gives their structure. An aligned item is
   selected when at least :data:`MIN_COVERED_SHARE` of its visible characters lie in page regions trafilatura's text
   comes from (:func:`_main_regions`) or its words are a whole line of that text; an unaligned one by its word trigrams (:data:`MIN_TRIGRAM_SHARE`) or, under four
   words, by a whole line of trafilatura's text.
3. **Where trafilatura and the structure disagree, body text stays.** trafilatura drops short headings between the
   sections it keeps and the headings of sibling sections of an ``<article>``. An item it dropped that is not
   furniture is kept again (``rescued``) when it lies in reading order between the first and the last item
   trafilatura selected *and* inside the element that holds all of them (their lowest common ancestor), and is body
   text (:func:`_body_text`: low link share, as link lists are navigation, Kohlschütter et al. 2010; not a caption,
   date or byline; a heading of selected content, a table, code, or a paragraph of at least
   :data:`MIN_RESCUE_WORDS` words). Measured on the 30 gold pages, a wider rule (everything inside ``<main>``, every
   short paragraph) brings back comments, bylines and captions and costs 2-9 points of precision
   (``python -m heritage_pipeline_eval.sources web``). Sections trafilatura dropped whole for their link density are
   kept when they are siblings of kept sections (:func:`_keep_sibling_sections`: an element divided by headings, at
   least two of them kept, is one described thing, and a licence link or a list of downloads is one of its fields);
   on the 30 gold pages this moved token recall 0.976 -> 0.978 at unchanged precision 0.962. trafilatura reads the
   page with list items outside any list wrapped in one (:func:`_wrap_orphan_list_items`), as a browser shows them.
   When trafilatura finds no main content at all, every item that is not furniture is kept.

Page metadata that article-extraction gold standards call furniture is removed by the item's markup and form
(:func:`markup_reason`, in both modes): the ``alt``/``title`` text docling emits for images (not page text); an
item in a small element whose class/id/itemprop/rel words name a byline, author note, reading time, comment count,
share widget or embedded social-media post; a short copyright line. Headings that are wholly a link to another
page with no body text under them (teaser lists such as "related articles", a logo in a heading) are removed too
(:func:`_mark_link_headings`). Dates are not removed: an event listing's dates are content. Measured on the 30 gold
pages (``python -m heritage_pipeline_eval.sources web``): token precision 0.951 -> 0.962 at unchanged recall 0.976
(trafilatura alone 0.968 / 0.974); each rule has a page of its own in ``test_main_content.py``, with the case that
must stay.

Short texts repeated :data:`REPEATED_MIN_COUNT` or more times on the page ("Read more", "Share") are removed as
repeated boilerplate. A page where nothing is left is skipped with the reason ``no main content``.

Every removed item is counted with its reason, in visible characters (code points, whitespace excluded, so the count
does not depend on the page's indentation): ``removed_chars`` (reason -> characters), ``removed_items`` (reason ->
items), plus ``visible_chars`` and ``kept_chars`` for the page and ``not_extracted_chars`` for visible text docling
produced no item for (text it does not extract, such as some form widgets). :func:`removal_summary` writes the
one-line summary the parse stage reports per document.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from typing import Any

import regex

from .html import HtmlItem, HtmlPage, _Aligner

MIN_COVERED_SHARE = 0.5
REGION_WORDS = 4
MIN_TRIGRAM_SHARE = 0.9
REPEATED_MIN_COUNT = 3
REPEATED_MAX_WORDS = 6
MAX_LINK_SHARE = 0.5
MIN_RESCUE_WORDS = 20
_CAPTION_TAGS = frozenset({"figure", "figcaption", "time", "address"})
from heritage_pipeline.core.text import WORD_RE as _TOKEN  # noqa: E402  (the one word tokenizer)
_TABLE_BAR = re.compile(r"(?:^|\s)\|(?:\s|$)")

# Page metadata the page's authors name in class/id/itemprop/rel attributes (the words trafilatura's and Mozilla
# Readability's boilerplate rules read, here kept to what is metadata in every site): author lines and author notes,
# reading-time and comment-count badges, share buttons, embedded social-media posts. An item is removed for such a
# name only when the named element is small (at most MAX_MARKED_CHARS visible characters), so that a whole article
# whose class happens to hold the author's name (WordPress writes ``<article class="post author-jane-doe">``) stays.
# Dates are not among them: an event's date in a listing of events is content.
MAX_MARKED_CHARS = 400
_MARKED = (
    ("byline", regex.compile(r"\b(?:byline|by line|author|authors|autor|auteur|auteurs|signature|dateline|"
                             r"read time|reading time|readtime|estimated read|comment count|comments count)\b")),
    ("share widget", regex.compile(r"\b(?:share|sharing|sharebar|sharedaddy|sharethis|addthis|shariff|social share|"
                                   r"social links|socials)\b")),
    ("embedded social post", regex.compile(r"\b(?:twitter tweet|instagram media|tiktok embed|fb post|fb video)\b")),
)
_WORD_SPLIT = regex.compile(r"[\s_\-]+")
# A short paragraph that is the page's copyright notice: starts with a copyright sign or word and holds a year or
# the sign.
_COPYRIGHT = regex.compile(r"^\W*(?:©|ⓒ|\(c\)|copyright\b)", regex.I)
_COPYRIGHT_YEAR = regex.compile(r"©|ⓒ|\(c\)|\b(?:19|20)\d\d\b", regex.I)
MAX_COPYRIGHT_WORDS = 20
MIN_LINK_HEADING_SHARE = 0.9

TRAFILATURA = "trafilatura"
NOT_SELECTED = "not main content (trafilatura)"
REPEATED = "repeated boilerplate"
ATTRIBUTE_TEXT = "image or attribute text"
COPYRIGHT = "copyright line"
LINK_HEADING = "teaser link heading"
EMPTY = "no text"


def _tokens(s: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(s)]


def _visible_chars(item: HtmlItem) -> int:
    """Visible characters of an item: its aligned stream length, else its text without whitespace (code points)."""
    if item.stream is not None:
        return item.stream[1] - item.stream[0]
    return sum(1 for ch in item.plain if not ch.isspace())


def trafilatura_selection(raw: str, page: HtmlPage) -> tuple[list[bool], bool]:
    """Which items trafilatura's text covers (see module docstring, point 2); second value: whether trafilatura
    found any main content at all."""
    import trafilatura

    from trafilatura.utils import load_html

    items = page.items
    tree = load_html(raw)
    if tree is not None:
        _wrap_orphan_list_items(tree)
    result = trafilatura.bare_extraction(tree if tree is not None else raw, favor_recall=True, include_tables=True,
                                         include_comments=False, with_metadata=True)
    main_text = (getattr(result, "text", None) or "") if result is not None else ""
    meta_title = (getattr(result, "title", None) or "") if result is not None else ""
    main_tokens = _tokens(main_text)
    if not main_tokens:
        return [False] * len(items), False
    covered = _main_regions(page.aligner.stream, main_text)
    trigrams = {tuple(main_tokens[i : i + 3]) for i in range(len(main_tokens) - 2)}
    lines = {" ".join(_tokens(line)) for line in main_text.splitlines()}
    joined = " " + " ".join(main_tokens) + " "
    title_joined = " " + " ".join(_tokens(meta_title)) + " "
    flags = []
    for it in items:
        toks = _tokens(it.plain)
        if not toks:
            flags.append(False)
        elif it.is_title:
            seq = " " + " ".join(toks) + " "
            flags.append(seq in title_joined or seq in joined)
        elif it.stream is not None:  # by page region; or the item is a whole line of trafilatura's text
            a, b = it.stream
            flags.append(_covered_share(covered, a, b) >= MIN_COVERED_SHARE or " ".join(toks) in lines)
        elif len(toks) < 4:  # not aligned to the page: fall back to the words of trafilatura's text
            flags.append(" ".join(toks) in lines or (it.kind == "heading" and f" {' '.join(toks)} " in joined))
        else:
            grams = [tuple(toks[i : i + 3]) for i in range(len(toks) - 2)]
            flags.append(sum(g in trigrams for g in grams) >= MIN_TRIGRAM_SHARE * len(grams))
    return flags, True


_LIST_PARENTS = frozenset({"ul", "ol", "menu"})


def _wrap_orphan_list_items(tree) -> int:
    """Wrap each run of ``<li>`` elements that are not in a list (``ul``/``ol``/``menu``) in a ``<ul>``, in place.

    Browsers display such items as list items; trafilatura drops them (its extractor reads ``li`` only as a child of
    a list), and with them the heading above them when nothing else follows it. They arise from markup a browser
    tolerates: ``<h3>Hours</h3`` with its ``>`` missing makes the next ``<ul class="list"`` the end tag's attributes
    (HTML Living Standard 13.2.5: an end tag has the attribute states of a start tag, attributes then discarded;
    libxml2 does the same), so the ``<li>`` that follow have no list.

    Args:
        tree: an ``lxml.html`` tree (as :func:`trafilatura.utils.load_html` returns it).

    Returns:
        The number of runs wrapped.
    """
    from lxml.html import Element

    runs: list[list[Any]] = []
    for li in tree.iter("li"):
        parent = li.getparent()
        if parent is None or parent.tag in _LIST_PARENTS:
            continue
        prev = li.getprevious()
        if runs and prev is runs[-1][-1] and not (prev.tail or "").strip():
            runs[-1].append(li)
        else:
            runs.append([li])
    for run in runs:
        parent = run[0].getparent()
        ul = Element("ul")
        parent.insert(parent.index(run[0]), ul)
        ul.tail, run[-1].tail = run[-1].tail, None
        for li in run:
            ul.append(li)  # lxml moves the element (with its tail, kept inside the list)
    return len(runs)


def select_main_content(raw: str, page: HtmlPage, mode: str = TRAFILATURA) -> tuple[list[bool], dict[str, Any]]:
    """Which items of ``page`` are main content, and the removal report (see module docstring).

    Args:
        raw: the page's raw HTML (decoded text).
        page: its docling items, aligned (:func:`heritage_pipeline.sources.html.extract_items`).
        mode: ``trafilatura`` (furniture, trafilatura's selection and the rescue rule) or ``docling`` (every item
            that is not furniture or repeated boilerplate).

    Returns:
        ``(flags, info)``: one keep flag per item; ``info`` for ``ParsedDocument.meta``: ``main_content`` (what
        decided), ``dropped_items``, ``rescued_items`` (kept against trafilatura), ``removed_chars`` and
        ``removed_items`` (per reason), ``visible_chars``, ``kept_chars``, ``not_extracted_chars``.

    Raises:
        ValueError: for an unknown ``mode``.
    """
    if mode not in (TRAFILATURA, "docling"):
        raise ValueError(f"main_content must be trafilatura or docling, got {mode!r}")
    items = page.items
    reasons: list[str | None] = []
    for it in items:
        if not _tokens(it.plain):
            reasons.append(EMPTY)
        else:
            reasons.append(page.furniture_reason(it) or markup_reason(raw, page, it))
    rescued = 0
    decided = "docling structure (furniture removed)"
    if mode == TRAFILATURA:
        selected, found = trafilatura_selection(raw, page)
        if not found:
            decided = "docling structure (trafilatura found no main content)"
        else:
            decided = TRAFILATURA
            keep_candidates = [i for i, r in enumerate(reasons) if r is None and selected[i]]
            lo = keep_candidates[0] if keep_candidates else 0
            hi = keep_candidates[-1] if keep_candidates else -1
            pm = page.aligner.map
            els = [e for i in keep_candidates for e in (items[i].first_el, items[i].last_el) if e >= 0]
            container = els[0] if els else -1
            for e in els[1:]:
                container = pm.lca(container, e)
            for i, it in enumerate(items):
                if reasons[i] is not None or selected[i]:
                    continue
                inside = (lo <= i <= hi and container >= 0 and it.first_el >= 0 and pm.inside(it.first_el, container))
                if inside and _body_text(items, selected, reasons, i, page):
                    rescued += 1
                else:
                    reasons[i] = NOT_SELECTED
        rescued += _keep_sibling_sections(items, reasons, page)
    _mark_repeated(items, reasons)
    _mark_link_headings(items, reasons, page)
    flags = [r is None for r in reasons]
    removed_chars: Counter[str] = Counter()
    removed_items: Counter[str] = Counter()
    for it, r in zip(items, reasons):
        if r is not None and r != EMPTY:
            removed_chars[r] += _visible_chars(it)
            removed_items[r] += 1
    stream_len = len(page.aligner.stream)
    covered = sorted(it.stream for it in items if it.stream is not None)
    in_items = 0
    end = 0
    for a, b in covered:  # union of the items' stream ranges
        a = max(a, end)
        if b > a:
            in_items += b - a
            end = b
    kept_chars = sum(_visible_chars(it) for it, f in zip(items, flags) if f)
    info = {"main_content": decided, "dropped_items": flags.count(False), "rescued_items": rescued,
            "removed_chars": dict(sorted(removed_chars.items())), "removed_items": dict(sorted(removed_items.items())),
            "visible_chars": stream_len, "kept_chars": kept_chars, "not_extracted_chars": max(0, stream_len - in_items)}
    return flags, info


def markup_reason(raw: str, page: HtmlPage, item: HtmlItem) -> str | None:
    """Why ``item`` is page metadata rather than main content by its markup and form, or None.

    * ``image or attribute text``: docling emits the ``alt``/``title`` text of images as paragraphs; an item that
      is not in the page's visible text and is the whole value of such an attribute in the raw HTML is not page text;
    * ``byline``, ``share widget``, ``embedded social post``: the item lies in a small element (at most
      :data:`MAX_MARKED_CHARS` visible characters) whose class/id/itemprop/rel words name it so (:data:`_MARKED`);
    * ``copyright line``: a paragraph of at most :data:`MAX_COPYRIGHT_WORDS` words that starts with a copyright sign
      or the word and holds a year or the sign.

    Args:
        raw: the page's raw HTML.
        page: the page (:func:`heritage_pipeline.sources.html.extract_items`).
        item: one of its items.

    Returns:
        The reason, or None when the item's markup says nothing against it.
    """
    if item.stream is None:
        text = " ".join(item.plain.split())
        if text and any(f'{attr}="{v}"' in raw or f"{attr}='{v}'" in raw
                        for attr in ("alt", "title", "aria-label")
                        for v in {text, text.replace("&", "&amp;").replace('"', "&quot;")}):
            return ATTRIBUTE_TEXT
        return None
    pm = page.aligner.map
    for el in pm.ancestors(item.first_el):
        if pm.subtree_chars(el) > MAX_MARKED_CHARS:
            break
        words = pm.attr_words.get(el)
        if words:
            joined = " ".join(_WORD_SPLIT.split(words))
            for reason, pattern in _MARKED:
                if pattern.search(joined):
                    return reason
    if item.kind == "paragraph" and len(_tokens(item.plain)) <= MAX_COPYRIGHT_WORDS:
        text = item.plain.strip()
        if _COPYRIGHT.search(text) and _COPYRIGHT_YEAR.search(text):
            return COPYRIGHT
    return None


def _mark_link_headings(items: list[HtmlItem], reasons: list[str | None], page: HtmlPage) -> None:
    """Mark kept headings that are wholly a link to another page (link share at least
    :data:`MIN_LINK_HEADING_SHARE`, the link not a ``#fragment`` of this page) and under which no kept body text
    follows before the next heading: the titles of teaser lists ("related articles", "latest news"), a site logo in
    a heading. A heading link whose section has body text (a home page's "Visit us" teaser with its paragraph)
    stays, and so does the page's first heading (the headline, often a link to the article itself)."""
    pm = page.aligner.map
    first = next((i for i, (it, r) in enumerate(zip(items, reasons)) if r is None and it.kind == "heading"), None)
    for i, it in enumerate(items):
        if reasons[i] is not None or it.kind != "heading" or i == first or it.first_el < 0:
            continue
        if page.link_share(it) < MIN_LINK_HEADING_SHARE:
            continue
        href = next((pm.hrefs[e] for e in pm.ancestors(it.first_el) if e in pm.hrefs), None)
        if href is None or href.strip().startswith("#"):
            continue
        has_body = False
        for j in range(i + 1, len(items)):
            if items[j].kind == "heading":
                break
            if reasons[j] is None and page.link_share(items[j]) < MAX_LINK_SHARE:
                has_body = True
                break
        if not has_body:
            reasons[i] = LINK_HEADING


_HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
MIN_KEPT_SIBLING_HEADINGS = 2


def _heading_parent(item: HtmlItem, page: HtmlPage) -> int:
    """The parent element of a heading item's ``<hN>`` element, or -1 (unaligned, or no ``<hN>`` element)."""
    pm = page.aligner.map
    if item.first_el < 0:
        return -1
    for el in pm.ancestors(item.first_el):
        if pm.tags[el] in _HEADING_TAGS:
            return pm.parents[el]
    return -1


def _keep_sibling_sections(items: list[HtmlItem], reasons: list[str | None], page: HtmlPage) -> int:
    """Keep the sections trafilatura dropped that are siblings of kept sections (module docstring, point 3).

    An element whose headings divide it into sections, at least :data:`MIN_KEPT_SIBLING_HEADINGS` of them kept, is
    a page region its author sectioned as one: a dataset or collection description (``<h3>Name</h3><p>...``,
    ``<h3>License</h3><p><a>CC-0</a>``, ``<h2>Distributions</h2><ul><li><a>...``), a visitor page. trafilatura's link
    density drops the sections whose body is a link (a licence, a URL, download links) although they are fields of
    the same description. Each heading among those siblings and the items under it up to the next heading (inside
    the same element) that trafilatura alone dropped are kept; furniture and markup reasons still apply, as do
    captions, dates and bylines (``figure``, ``figcaption``, ``time``, ``address``).

    Returns:
        The number of items kept again (``reasons`` is updated in place).
    """
    pm = page.aligner.map
    parents = [(_heading_parent(it, page) if it.kind == "heading" else -1) for it in items]
    kept: Counter[int] = Counter(p for i, p in enumerate(parents) if p >= 0 and reasons[i] is None)
    sectioned = {p for p, n in kept.items() if n >= MIN_KEPT_SIBLING_HEADINGS}
    if not sectioned:
        return 0
    rescued = 0
    i = 0
    while i < len(items):
        p = parents[i]
        if p not in sectioned or reasons[i] not in (None, NOT_SELECTED):
            i += 1
            continue
        j = i
        while j < len(items) and (j == i or items[j].kind != "heading"):
            it = items[j]
            if (reasons[j] == NOT_SELECTED and it.first_el >= 0 and pm.inside(it.first_el, p)
                    and not page.within(it, _CAPTION_TAGS)):
                reasons[j] = None
                rescued += 1
            j += 1
        i = j
    return rescued


def _body_text(items: list[HtmlItem], selected: list[bool], reasons: list[str | None], i: int, page: HtmlPage) -> bool:
    """Whether an item trafilatura dropped is body text that stays (module docstring, point 3): link share under
    :data:`MAX_LINK_SHARE`, not a caption, date or byline (inside ``figure``, ``figcaption``, ``time``,
    ``address``: trafilatura's decision stands for those), and a heading whose next non-furniture item trafilatura
    selected, a table or code block, or a paragraph / list item of at least :data:`MIN_RESCUE_WORDS` words."""
    it = items[i]
    if page.link_share(it) >= MAX_LINK_SHARE or page.within(it, _CAPTION_TAGS):
        return False
    if it.kind == "heading":
        nxt = next((j for j in range(i + 1, len(items)) if reasons[j] is None), None)
        return nxt is not None and selected[nxt]
    if it.kind in ("table", "code"):
        return True
    return len(_tokens(it.plain)) >= MIN_RESCUE_WORDS


def removal_summary(info: dict[str, Any]) -> str:
    """One line: kept and removed visible characters of a page, per reason (from :func:`select_main_content`)."""
    parts = [f"{r} {c:,} ({info['removed_items'][r]} item{'s' if info['removed_items'][r] != 1 else ''})"
             for r, c in sorted(info["removed_chars"].items(), key=lambda kv: -kv[1])]
    line = (f"kept {info['kept_chars']:,} of {info['visible_chars']:,} visible characters; removed: "
            + ("; ".join(parts) if parts else "nothing"))
    if info.get("not_extracted_chars"):
        line += f"; not extracted by docling: {info['not_extracted_chars']:,}"
    if info.get("rescued_items"):
        line += f"; kept against trafilatura: {info['rescued_items']} item{'s' if info['rescued_items'] != 1 else ''}"
    return line


def _main_regions(stream: str, main_text: str) -> list[tuple[int, int]]:
    """``[start, end)`` ranges of the page's whitespace-free visible text that trafilatura's text comes from.

    trafilatura's text is cut into runs of :data:`REGION_WORDS` words (its lines can join several elements of the
    page, and its tables are drawn with ``|``), each searched from a moving cursor (trafilatura keeps document
    order); a run not found after the cursor is searched from the start of the page; a run of fewer than 12
    characters only just ahead of the cursor.
    """
    regions = []
    cursor = 0
    for line in main_text.splitlines():
        for piece in _TABLE_BAR.split(line):
            words = piece.split()
            for i in range(0, len(words), REGION_WORDS):
                needle = _Aligner.key(" ".join(words[i : i + REGION_WORDS]))
                if not needle:
                    continue
                short = len(needle) < 12
                pos = stream.find(needle, cursor, cursor + 2000 + len(needle) if short else len(stream))
                if pos < 0 and not short:
                    pos = stream.find(needle)
                    if pos >= 0:
                        regions.append((pos, pos + len(needle)))
                    continue
                if pos >= 0:
                    regions.append((pos, pos + len(needle)))
                    cursor = pos + len(needle)
    regions.sort()
    merged: list[tuple[int, int]] = []
    for a, b in regions:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def _covered_share(regions: list[tuple[int, int]], a: int, b: int) -> float:
    """Share of ``[a, b)`` covered by the sorted, disjoint ``regions``."""
    if b <= a:
        return 0.0
    i = bisect.bisect_right(regions, (a, float("inf"))) - 1
    i = max(i, 0)
    covered = 0
    while i < len(regions) and regions[i][0] < b:
        lo, hi = max(a, regions[i][0]), min(b, regions[i][1])
        covered += max(0, hi - lo)
        i += 1
    return covered / (b - a)


def _mark_repeated(items: list[HtmlItem], reasons: list[str | None]) -> None:
    """Mark short non-heading texts that occur :data:`REPEATED_MIN_COUNT` or more times on the page (repeated
    boilerplate), counting every occurrence, furniture included."""
    keys = [" ".join(_tokens(it.plain)) for it in items]
    counts = Counter(k for k in keys if k and len(k.split()) <= REPEATED_MAX_WORDS)
    for i, (k, it) in enumerate(zip(keys, items)):
        if reasons[i] is None and it.kind != "heading" and counts.get(k, 0) >= REPEATED_MIN_COUNT:
            reasons[i] = REPEATED
