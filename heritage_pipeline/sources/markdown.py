"""Markdown block scanner that records character offsets while scanning.

Why our own scanner and not docling's Markdown backend or markdown-it-py: docling gives no character offsets for
Markdown (``item.prov == []``, measured) and markdown-it-py gives line ranges only, at a fraction of tokenizer speed;
the chunker needs exact code-point offsets at several MB/s. This is the CommonMark *block* structure plus the GFM
and MkDocs extensions met in real documentation: ATX and setext headings, fenced code (``` and ~~~, any
indentation, so fences inside list items are code too), indented code, GFM pipe tables (header and delimiter rows
must have the same number of cells), HTML blocks (``<pre>``/``<script>``/``<style>``/``<textarea>`` and comments
run to their closing tag; an open ``<table>`` continues across blank lines until it is closed), blockquotes (with
lazy continuation lines that stop at anything that would interrupt a paragraph), list items (one block per item,
nested items are their own blocks), thematic breaks, YAML front matter (``---``, YAML with at least one ``key:``
line, ``---``; a document that just starts with a thematic break is not front matter) and pymdownx ``/// note`` /
``//// tab`` blocks (closed by as many slashes as opened them). Inline syntax is not parsed; heading titles are
cleaned of inline HTML tags, ``{ #anchor }`` attribute lists and closing hashes without losing their words (text in
angle brackets that is not a tag, such as ``<|endoftext|>``, is kept).

Agreement with CommonMark is tested against markdown-it-py (top-level headings and fences) on generated documents
and on every Markdown file of ../shared/data.

Deliberate deviations from CommonMark: a U+FEFF (BOM) at the start of a line is ignored when classifying the line
(real files carry stray BOMs inside the text); a line of only whitespace of any kind (VT, FF, U+2028, U+3000...,
what ``str.strip`` removes) is blank, not a paragraph (the chunk text drops it anyway); a fence indented by 4+ spaces
still opens a fenced block (MkDocs nests them in admonitions); a line without ``|`` still continues a table (as GFM
does).

Speed: the scanner works on offsets, not on a line list. Runs of ordinary paragraph lines are skipped by one C-level
regex search for the next line that is blank or could start another block (:data:`_PARA_STOP`); only those
candidate lines are examined in Python, so the cost is linear in the input and small per paragraph. The common
one-line blocks (a paragraph or ATX heading followed by an empty line, a run of one-line bullet items) take fast
paths in :meth:`_Scanner.run` that give exactly what the general path gives (each explains why).
Line endings: CRLF and lone CR are scanned as LF through a same-length copy of the text (``\\r\\n`` -> `` \\n``,
``\\r`` -> ``\\n``), so every offset is an offset into the original text.

Invariants (checked by the tests): blocks are contiguous (``blocks[i].end == blocks[i + 1].start``), every block
starts at the start of a non-blank line, the first block starts at the first non-blank line, the last block ends at
``len(text)``, and ``start < content_end <= end`` where ``content_end`` excludes trailing whitespace and BOMs.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache

from heritage_pipeline.core.structure import Block, ParsedDocument, Section
from heritage_pipeline.core.text import normalize_inner

# "Blank" characters: whitespace other than LF, and U+FEFF (a line of only these is a blank line).
_BL = r"(?:[^\S\n]|\ufeff)"
_BLANK_LINES = re.compile(rf"(?:{_BL}*\n)*")
_NEXT_BLANK_LINE = re.compile(rf"\n(?={_BL}*(?:\n|\Z))")
# A line that is blank or whose first non-space character could open a block other than a paragraph continuation.
_PARA_STOP = re.compile(rf"\n(?={_BL}*(?:\n|\Z)|\ufeff*[ ]{{0,3}}[#`~>=\-*+_|:<0-9/])")

_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]|$)")  # the title is the rest of the line (cleaned by clean_heading)
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_HR = re.compile(r"^ {0,3}([-*_])[ \t]*(?:\1[ \t]*){2,}$")
_LIST = re.compile(r"^([ \t]*)(?:[-+*]|\d{1,9}[.)])(?:[ \t]+|$)")
# _LIST for the line after the LF at the match position (``$`` of a one-line string = LF or end of text)
_NEXT_LINE_IS_ITEM = re.compile(r"\n[ \t]*(?:[-+*]|\d{1,9}[.)])(?=[ \t\n]|\Z)")
# An unindented one-line bullet item whose block ends after its own line, i.e. what run() + block() +
# list_item_end() find for it, in one match (the caller checks that the line has no "|": no table): a first word
# that is not "-"/"*" (so no thematic break: that needs only marker characters), then the line is the last one, or
# the next line is an item (_LIST), or it is empty and the line after starts with a non-blank character (indent 0:
# no continuation) or is the end. (".*" is scanned much faster than a character class such as "[^|\n]*".)
_SIMPLE_ITEM = re.compile(r"[-*+][ \t]+[^\s*-].*(?=\n?\Z|\n[ \t]*(?:[-+*]|\d{1,9}[.)])(?:[ \t\n]|\Z)|\n\n(?:[^\s\ufeff]|\Z))")
_LIST_INTERRUPTS = re.compile(r"^ {0,3}(?:[-+*]|1[.)])[ \t]+\S")  # a non-empty bullet or "1." item ends a paragraph
_QUOTE = re.compile(r"^ {0,3}>")
_ADMONITION_OPEN = re.compile(r"^ {0,3}(/{3,})[ \t]*[^\s/]")  # pymdownx blocks: /// note, //// tab (nesting)
_FRONT_MATTER_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.M)
_YAML_START = re.compile(r"[ \t]*(?:#|[\w\"'.-][^\n:]*:(?:\s|$))")
_FENCE_ANY = re.compile(r"^[ \t]*(?:```|~~~)", re.M)
_YAML_KEY = re.compile(r"^[\w\"'.-][^\n:]*:(?:\s|$)", re.M)
_TABLE_DELIM = re.compile(r"^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_CELL_SEP = re.compile(r"(?<!\\)\|")
_HTML_BLOCK = re.compile(
    r"^ {0,3}<(?:!--|/?(?:address|article|aside|blockquote|body|caption|center|col|colgroup|dd|details|dialog|dir|div|"
    r"dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|"
    r"main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|pre|script|search|section|style|summary|table|tbody|"
    r"td|textarea|tfoot|th|thead|title|tr|track|ul)(?:[\s/>]|$))",
    re.IGNORECASE,
)
_HTML_RAW = re.compile(r"^ {0,3}<(pre|script|style|textarea)(?:[\s>]|$)", re.IGNORECASE)  # CommonMark HTML type 1
_TABLE_OPEN = re.compile(r"<table\b", re.IGNORECASE)
_TABLE_CLOSE = re.compile(r"</table\s*>", re.IGNORECASE)
_TR_CLOSE = re.compile(r"</tr\s*>", re.IGNORECASE)
_TAG = re.compile(r"<!--.*?-->|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")  # real tags only: "<|endoftext|>" is text
_ATTR_LIST = re.compile(r"\s*\{[^{}]*#[^{}]*\}\s*$")
_CLOSING_HASHES = re.compile(r"[ \t]+#+$")
# First characters (after indentation) of lines that may open a block other than a paragraph.
_SPECIAL_FIRST = frozenset("#`~>-*+_=|</0123456789")
_SPECIAL_FIRST_OR_INDENT = _SPECIAL_FIRST | frozenset(" \t\ufeff\u00a0")


def clean_heading(raw: str) -> str:
    """Heading text without markup: closing ``#``s, ``{ #id }`` attribute lists, inline HTML tags and entities
    removed, whitespace collapsed, and the chunk text's normalisation applied (BOMs dropped, odd spaces, NFC: the
    breadcrumb reads like the text). The words themselves are never dropped (``# <i>Title</i>`` -> ``Title``)."""
    s = raw.strip() if raw.isascii() else normalize_inner(raw).strip()
    if "#" not in s and "<" not in s and "&" not in s and "{" not in s:  # plain words: only whitespace to collapse
        return " ".join(s.split())
    # ``s`` is stripped, so the end-anchored patterns can only match as tested here (the checks skip the
    # regex calls, which cost more than the rest of the function):
    if s[-1:] == "#":  # closing hashes; a title of hashes only (which ends in "#") is no title
        s = _CLOSING_HASHES.sub("", s)
        if s.startswith("#") and set(s) == {"#"}:
            return ""
    b = s.rfind("{")
    if b >= 0:  # what _ATTR_LIST.sub does: "{...#...}" (no braces inside) at the end, with the whitespace around it
        e = s.find("}", b)
        if e > 0 and "#" in s[b:e] and not s[e + 1 :].strip():  # str.strip and re's \s: the same whitespace
            s = s[:b].rstrip()
    if "<" in s:
        s = _TAG.sub("", s)
    if "&" in s:
        s = html.unescape(s)
    return " ".join(s.split())


def _is_blank(line: str) -> bool:
    return not line.strip() or not line.replace("\ufeff", "").strip()


def _indent(line: str) -> int:
    """Indentation width in columns (a tab advances to the next multiple of 4, as in CommonMark)."""
    k = len(line) - len(line.lstrip(" \t"))
    return len(line[:k].expandtabs(4)) if "\t" in line[:k] else k


def _cells(row: str) -> int:
    t = row.strip()
    if t.startswith("|"):
        t = t[1:]
    if t.endswith("|") and not t.endswith("\\|"):
        t = t[:-1]
    return len(_CELL_SEP.split(t))


@lru_cache(maxsize=64)
def _fence_close(char: str, length: int) -> re.Pattern[str]:
    """Closing fence line (matched against one line)."""
    return re.compile(r"^[ \t]*" + re.escape(char) + "{" + str(length) + r",}[ \t]*$", re.M)


# The closing-line patterns searched forward start with the LF before the line, not with a MULTILINE "^": sre then
# jumps from LF to LF (a literal first character) instead of trying "^" at every offset (about 3x faster). Searched
# from the LF ending the opening line, they find the same lines; the match ends where the closing line ends.
@lru_cache(maxsize=64)
def _fence_close_after(char: str, length: int) -> re.Pattern[str]:
    return re.compile(r"\n[ \t]*" + re.escape(char) + "{" + str(length) + r",}[ \t]*(?=\n|\Z)")


@lru_cache(maxsize=16)
def _admonition_close(slashes: int) -> re.Pattern[str]:
    return re.compile(r"\n {0,3}/{" + str(slashes) + r"}[ \t]*(?=\n|\Z)")


def _fence_open(line: str) -> re.Match[str] | None:
    m = _FENCE.match(line)
    if m and not (m.group(2)[0] == "`" and "`" in m.group(3)):
        return m
    return None


def _interrupts_paragraph(cl: str) -> bool:
    """True when line ``cl`` (leading BOMs removed) starts a block that may interrupt a paragraph."""
    stripped = cl.lstrip(" ")
    if len(cl) - len(stripped) > 3 or not stripped:
        return False
    c = stripped[0]
    if c == "#":
        return bool(_ATX.match(cl))
    if c in "`~":
        return _fence_open(cl) is not None
    if c == ">":
        return True
    if c in "-*_" and _HR.match(cl):
        return True
    if c in "-*+" or c == "1":
        return bool(_LIST_INTERRUPTS.match(cl))
    if c == "<":
        return bool(_HTML_BLOCK.match(cl))
    if c == "/":
        return bool(_ADMONITION_OPEN.match(cl))
    return False


class _Scanner:
    """One pass over the scan text ``s`` (same length as the original text, line endings as LF)."""

    __slots__ = ("s", "n", "blocks")

    def __init__(self, s: str) -> None:
        self.s = s
        self.n = len(s)
        self.blocks: list[Block] = []

    # -- line helpers
    def eol(self, pos: int) -> int:
        """Offset of the LF ending the line that starts at ``pos`` (or ``n``)."""
        e = self.s.find("\n", pos)
        return self.n if e < 0 else e

    def after(self, eol: int) -> int:
        """Start of the line after the one ending at ``eol``."""
        return eol + 1 if eol < self.n else self.n

    def add(self, kind: str, start: int, level: int = 0, title: str = "", info: str = "", header_end: int = 0) -> None:
        self.blocks.append(Block(kind, start, 0, 0, level, title, info, header_end))

    # -- the scan
    def run(self) -> list[Block]:
        s, n = self.s, self.n
        pos = 0
        # YAML front matter at the very start: "---", then YAML right away (comments and at least one "key:" line),
        # then a "---" or "..." line; a document that merely starts with a thematic break is not front matter
        first_eol = self.eol(0)
        if s[:first_eol].rstrip().lstrip("\ufeff") == "---" and _YAML_START.match(s, self.after(first_eol)):
            m = _FRONT_MATTER_CLOSE.search(s, self.after(first_eol))
            if m and _YAML_KEY.search(s, self.after(first_eol), m.start()) \
                    and not _FENCE_ANY.search(s, self.after(first_eol), m.start()):
                self.add("front_matter", 0)
                pos = self.after(self.eol(m.start()))
        blocks = self.blocks
        append = blocks.append
        blank_lines = _BLANK_LINES.match
        special = _SPECIAL_FIRST_OR_INDENT
        list_match = _LIST.match
        simple_item = _SIMPLE_ITEM.match
        hr = _HR.match
        find = s.find
        startswith = s.startswith
        while True:
            if startswith("\n", pos):
                nxt = s[pos + 1 : pos + 2]
                if nxt.isspace() or nxt == "\ufeff":
                    pos = blank_lines(s, pos).end()
                else:  # fast path: one empty line, then the end or a line that starts with neither whitespace nor
                    pos += 1  # a BOM (so it is not blank): blank_lines would skip just the empty line
            if pos >= n:
                break
            eol = find("\n", pos)
            if eol < 0:
                eol = n
            line = s[pos:eol]
            c = line[:1]
            if (c.isspace() or c == "\ufeff") and _is_blank(line):  # a blank line the empty-line check did not skip
                pos = eol + 1  # (spaces, BOMs, or any other whitespace: VT, U+2028, U+3000...)
                continue
            if c not in special:
                # fast path: a one-line paragraph of ordinary text followed by an empty line (most prose)
                if "|" not in line and (startswith("\n\n", eol) or eol >= n - 1) and not line.isspace() \
                        and not ("<" in line and _TABLE_OPEN.search(line)):
                    append(Block("paragraph", pos, 0, 0))
                    pos = eol + 1
                    continue
            elif c == "#":  # fast path: an ATX heading (what block() does for it), _ATX without the regex call:
                rest = line.lstrip("#")  # 1 to 6 "#"s, then a space or tab (skipped) or the end of the line
                level = len(line) - len(rest)
                if level <= 6 and rest[:1] in (" ", "\t", ""):
                    append(Block("heading", pos, 0, 0, level, clean_heading(rest[1:])))
                    pos = eol + 1
                    continue
            elif c in "-*+":
                m = simple_item(s, pos)
                if m and "|" not in line:  # fast path: a run of one-line bullet items (see _SIMPLE_ITEM)
                    while True:
                        append(Block("list_item", pos, 0, 0))
                        e = m.end()  # the LF ending the item's line, or n
                        pos = e + 1 if e < n else n
                        m = simple_item(s, pos)
                        if m is None or find("|", pos, m.end()) >= 0:
                            break
                    continue
                # fast path: an unindented bullet item. block() would find no fence, no indentation, no table (no
                # "|"), and for "-"/"*" try a thematic break first, exactly as here
                if "|" not in line and not (c != "+" and hr(line)) and list_match(line):
                    append(Block("list_item", pos, 0, 0))
                    pos = self.list_item_end(eol, 0)
                    continue
            pos = self.block(pos, eol, line)
        return blocks

    def block(self, pos: int, eol: int, line: str) -> int:
        """Scan the block whose first line is ``s[pos:eol]``; returns the offset where the next line starts."""
        s = self.s
        cl = line.lstrip("\ufeff") if line[:1] == "\ufeff" else line
        if cl[:1] in (" ", "\t"):
            stripped = cl.lstrip(" \t")
            indent = _indent(cl)
        else:
            stripped, indent = cl, 0
        c = stripped[:1]
        if c in "`~":
            m = _fence_open(cl)
            if m:
                close = _fence_close_after(m.group(2)[0], len(m.group(2))).search(s, eol)
                end = self.after(close.end()) if close else self.n
                self.add("code", pos, info=m.group(3).strip(), header_end=self.after(eol))
                return end
        if indent >= 4:
            if self.blocks and self.blocks[-1].kind == "list_item" and _LIST.match(cl):
                self.add("list_item", pos)  # a nested item indented by 4+ columns
                return self.list_item_end(eol, indent)
            return self.indented_code(pos, eol)
        if c in _SPECIAL_FIRST:
            if c == "#":
                m = _ATX.match(cl)
                if m:
                    self.add("heading", pos, level=len(m.group(1)), title=clean_heading(cl[m.end():]))
                    return self.after(eol)
            elif c in "-*_" and _HR.match(cl):
                self.add("hr", pos)
                return self.after(eol)
            elif c == "/" and (m := _ADMONITION_OPEN.match(cl)):
                close = _admonition_close(len(m.group(1))).search(s, eol)
                if close:
                    end = self.after(close.end())
                else:  # unclosed: up to the next blank line
                    nb = _NEXT_BLANK_LINE.search(s, eol)
                    end = nb.start() + 1 if nb else self.n
                self.add("admonition", pos, info=stripped.lstrip("/").strip())
                return end
            elif c == ">":
                self.add("blockquote", pos)
                return self.blockquote_end(eol)
            elif c == "<" and _HTML_BLOCK.match(cl):
                end = self.html_end(pos, eol, cl)
                self.add_html(pos, end)
                return end
            if "|" in cl:
                end = self.table(pos, eol, cl)
                if end:
                    return end
            if _LIST.match(cl):
                self.add("list_item", pos)
                return self.list_item_end(eol, indent)
        elif "|" in cl:
            end = self.table(pos, eol, cl)
            if end:
                return end
        return self.paragraph(pos, eol)

    def table(self, pos: int, eol: int, cl: str) -> int:
        """A GFM table opening at this line (header row + delimiter row with as many cells); 0 when it is not one."""
        if eol >= self.n:
            return 0
        d_start = eol + 1
        d_eol = self.eol(d_start)
        delim = self.s[d_start:d_eol]
        if not _TABLE_DELIM.match(delim) or "|" not in cl + delim or _cells(cl) != _cells(delim):
            return 0
        self.add("table", pos, header_end=self.after(d_eol))
        return self.rows_end(d_eol)

    def rows_end(self, eol: int) -> int:
        """End of the table rows after the line ending at ``eol``: the next blank or block-starting line."""
        return self.run_end(eol, quote=False)

    def run_end(self, eol: int, quote: bool) -> int:
        """Start of the first line after the one ending at ``eol`` that is blank or would interrupt a paragraph
        (with ``quote``, ``>`` lines continue the run)."""
        s = self.s
        while True:
            m = _PARA_STOP.search(s, eol)
            if m is None:
                return self.n
            ls = m.end()
            le = self.eol(ls)
            line = s[ls:le]
            cl = line.lstrip("\ufeff")
            if _is_blank(line) or (not (quote and _QUOTE.match(cl)) and _interrupts_paragraph(cl)):
                return ls
            eol = le

    def paragraph(self, pos: int, eol: int) -> int:
        """Paragraph lines up to a blank or interrupting line; a setext underline makes it a heading."""
        s = self.s
        search = eol
        while True:
            m = _PARA_STOP.search(s, search)
            if m is None:
                end = self.n
                break
            ls = m.end()
            le = self.eol(ls)
            line = s[ls:le]
            if _is_blank(line):
                end = ls
                break
            cl = line.lstrip("\ufeff") if line.startswith("\ufeff") else line
            if "|" in cl or cl.lstrip(" ")[:1] in ("-", ":"):
                if _TABLE_DELIM.match(cl):
                    prev_start = s.rfind("\n", pos, m.start()) + 1
                    prev = s[prev_start : m.start()]
                    if prev_start > pos and "|" in prev + cl and _cells(prev) == _cells(cl):
                        end = prev_start  # the previous line is a table's header row
                        break
            sm = _SETEXT.match(cl)
            if sm:
                title = clean_heading(" ".join(x.strip() for x in s[pos : m.start()].split("\n")))
                self.add("heading", pos, level=1 if sm.group(1)[0] == "=" else 2, title=title)
                return self.after(le)
            if _interrupts_paragraph(cl):
                end = ls
                break
            search = le
        if _TABLE_OPEN.search(s, pos, end) and _unbalanced_table(s, pos, end):
            end = self.html_end(pos, eol, "")
            self.add_html(pos, end, force_table=True)
            return end
        self.add("paragraph", pos)
        return end

    def blockquote_end(self, eol: int) -> int:
        """End of a blockquote: its ``>`` lines and lazy continuation lines, up to a blank line or a line that would
        interrupt a paragraph (a heading, fence, thematic break, list or HTML block is not lazy text)."""
        return self.run_end(eol, quote=True)

    def list_item_end(self, eol: int, marker_indent: int) -> int:
        """End of the list item whose first line ends at ``eol`` (lazy lines, indented continuations, fences)."""
        s, n = self.s, self.n
        # fast paths for the usual one-line item, where the loop below stops at the first line it looks at:
        if eol + 1 >= n:  # the item's line is the last line
            return n
        if _NEXT_LINE_IS_ITEM.match(s, eol):  # the next line is another item: "if _LIST.match(line): break"
            return eol + 1
        if s.startswith("\n", eol + 1):  # an empty line, then a line that does not start with a blank character
            c2 = s[eol + 2 : eol + 3]  # (or the end): its indent is 0 <= marker_indent, so the loop breaks there
            if not c2.isspace() and c2 != "\ufeff":
                return eol + 1
        last = eol
        j = eol + 1
        fence: re.Pattern[str] | None = None
        while j < n:
            je = self.eol(j)
            line = s[j:je]
            if fence is not None:
                if fence.match(line):
                    fence = None
                last, j = je, self.after(je)
                continue
            if _is_blank(line):
                nb = _BLANK_LINES.match(s, j).end()
                if nb >= n:
                    break
                nl = s[nb : self.eol(nb)]
                if _indent(nl) > marker_indent and not _LIST.match(nl) and not _is_blank(nl):
                    j = nb
                    continue
                break
            if _LIST.match(line):
                break  # a new item (sibling or nested) is its own block
            ind = _indent(line)
            if ind <= 3 and (_ATX.match(line) or _QUOTE.match(line) or _HR.match(line) or _HTML_BLOCK.match(line)):
                break
            fm = _fence_open(line)
            if fm:
                if ind <= marker_indent:
                    break
                fence = _fence_close(fm.group(2)[0], len(fm.group(2)))
            last, j = je, self.after(je)
        return self.after(last)

    def indented_code(self, pos: int, eol: int) -> int:
        s, n = self.s, self.n
        last = eol
        j = self.after(eol)
        while j < n:
            je = self.eol(j)
            line = s[j:je]
            if not _is_blank(line):
                if _indent(line) < 4:
                    break
                last = je
            j = self.after(je)
        self.add("code", pos, info="indented")
        return self.after(last)

    def html_end(self, pos: int, eol: int, cl: str) -> int:
        """End of an HTML block: raw blocks and comments run to their closing tag; others to a blank line, but an
        open ``<table>`` continues until it is closed (depth counted incrementally, so the scan stays linear)."""
        s, n = self.s, self.n
        raw = _HTML_RAW.match(cl) if cl else None
        if raw:
            close = re.compile(r"</" + raw.group(1) + r"\s*>", re.IGNORECASE).search(s, pos)
            return self.after(self.eol(close.end() - 1)) if close else n
        if cl and cl.lstrip(" ").startswith("<!--"):
            close = s.find("-->", pos)
            return self.after(self.eol(close)) if close >= 0 else n
        depth = 0
        start = pos
        while True:
            nb = _NEXT_BLANK_LINE.search(s, start)
            stop = nb.start() + 1 if nb else n
            depth += len(_TABLE_OPEN.findall(s, start, stop)) - len(_TABLE_CLOSE.findall(s, start, stop))
            if nb is None or depth <= 0:
                return stop
            start = _BLANK_LINES.match(s, stop).end()
            if start >= n:
                return n

    def add_html(self, start: int, end: int, force_table: bool = False) -> None:
        if force_table or _TABLE_OPEN.search(self.s, start, end):
            self.add("html_table", start, header_end=html_header_end(self.s, start, end))
        else:
            self.add("html", start)


_TD_OPEN = re.compile(r"<td\b", re.IGNORECASE)
_THEAD_CLOSE = re.compile(r"</thead\s*>", re.IGNORECASE)


def html_header_end(s: str, start: int, end: int) -> int:
    """End of the header rows of the HTML table in ``s[start:end]`` (repeated whole in each later piece when the
    table is split): the last ``</tr>`` inside ``<thead>``, else of the leading rows that hold ``<th>`` cells and
    no ``<td>`` (a two-row header: a group row and a column row), else of the first row; 0 without rows."""
    first = _TR_CLOSE.search(s, start, end)
    if first is None:
        return 0
    td = _TD_OPEN.search(s, start, end)
    limit = td.start() if td else end
    thead = _THEAD_CLOSE.search(s, start, limit)
    header = first.end()
    while True:
        nxt = _TR_CLOSE.search(s, header, limit)
        if nxt is None:
            break
        if thead is None and "<th" not in s[header : nxt.end()].lower():
            break
        if thead is not None and nxt.end() > thead.start():
            break
        header = nxt.end()
    return header


def _unbalanced_table(s: str, start: int, end: int) -> bool:
    return len(_TABLE_OPEN.findall(s, start, end)) > len(_TABLE_CLOSE.findall(s, start, end))


def scan_blocks(text: str) -> list[Block]:
    """Scan Markdown ``text`` into blocks with exact offsets (see the module docstring). Never raises on any input.

    Linear in ``len(text)``. Offsets are code points into ``text``.
    """
    s = text
    if "\r" in s:
        s = s.replace("\r\n", " \n").replace("\r", "\n")  # same length: offsets stay offsets into ``text``
    blocks = _Scanner(s).run()
    _fix_ends(blocks, text)
    return blocks


def _fix_ends(blocks: list[Block], text: str) -> None:
    """Make blocks contiguous (each ends where the next starts) and set ``content_end``."""
    n = len(text)
    ends = [b.start for b in blocks[1:]]
    ends.append(n)
    for b, e in zip(blocks, ends):
        b.end = e
        s = b.start
        ce = s + len(text[s:e].rstrip())  # C-level strip: cheaper than a character loop for typical "\n\n" tails
        while ce > s and text[ce - 1] == "\ufeff":
            ce = s + len(text[s : ce - 1].rstrip())
        b.content_end = ce


def build_sections(blocks: list[Block], max_level: int) -> list[Section]:
    """Group blocks into heading sections: a heading of level <= ``max_level`` opens a section.

    ``anchors`` are the titles of the enclosing headings, outermost first; skipped levels leave no empty entries
    (H1 then H3 gives ``[h1, h3]``) and an H2 after that H3 replaces it (``[h1, h2]``). A heading with no text gets
    ``(untitled hN)``. Content before the first heading forms a section with no anchors. Deeper headings stay inside
    their section. Never raises.
    """
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    start = 0
    cur_level = 0
    for j, b in enumerate(blocks):
        if b.kind == "heading" and b.level <= max_level:
            if j > start:
                sections.append(Section([t for _, t in stack], cur_level, start, j))
            while stack and stack[-1][0] >= b.level:
                stack.pop()
            stack.append((b.level, b.title or f"(untitled h{b.level})"))
            start = j
            cur_level = b.level
    if start < len(blocks):
        sections.append(Section([t for _, t in stack], cur_level, start, len(blocks)))
    return sections


def parse_markdown(text: str, *, doc_id: str, source_path: str, lang: str = "und", max_level: int = 3,
                   source_type: str = "document") -> ParsedDocument:
    """Parse decoded Markdown (or plain text) into a :class:`ParsedDocument` whose spans index ``text`` directly.

    YAML front matter belongs to no chunk (the text contract: README, "Chunk record"): its block is in no section, so the first chunk
    starts after it; its ``title`` becomes the root anchor of every section (not repeated when the document's first
    heading says the same) and ``meta["title"]``; the other front-matter keys are kept in ``meta["front_matter"]``.
    """
    blocks = scan_blocks(text)
    sections = build_sections(blocks, max_level)
    front = front_matter(text, blocks)
    fm_title = front.get("title") if isinstance(front.get("title"), str) and front["title"].strip() else ""
    if blocks and blocks[0].kind == "front_matter" and sections:
        sections[0].first = max(sections[0].first, 1)
        if sections[0].first >= sections[0].last:
            sections.pop(0)
    title = next((b.title for b in blocks if b.kind == "heading" and b.title), "")
    if fm_title:
        root = clean_heading(fm_title)
        for sec in sections:
            if not sec.anchors or not _same_title(sec.anchors[0], root):
                sec.anchors = [root] + list(sec.anchors)
        title = root
    meta: dict = {"title": title}
    markup = markup_ranges(text, blocks)
    running = running_lines(text, blocks, sections, source_path.lower().endswith(".txt"))
    if markup or running:  # (SPEC §3: excluded from the embedded text; the chunker cuts them per chunk)
        meta["excluded"] = [list(r) for r in _union(markup + running)]
        meta["excluded_counts"] = {"markup": len(markup), "running_lines": len(running)}
    if front:
        meta["front_matter"] = {str(k): (v if isinstance(v, (str, int, float, bool, list, dict)) or v is None else str(v))
                                for k, v in front.items()}
    return ParsedDocument(
        doc_id=doc_id,
        source_path=source_path,
        source_type=source_type,
        lang=lang,
        text=text,
        blocks=blocks,
        sections=sections,
        text_is_raw=True,
        meta=meta,
    )


# Markup that is not content (SPEC §3 excluded ranges; issue 16.5). Found in prose-like blocks only: code, raw HTML
# blocks and HTML tables keep their markup (it is their content, or what renders a table), and inline code spans are
# left alone (`<div>` in backticks is text about a tag).
_MARKUP_KINDS = frozenset({"paragraph", "heading", "list_item", "blockquote", "admonition", "table"})
# MkDocs / Python-Markdown attribute lists ``{ #id .class key=value }`` and Kramdown ``{: .class }`` (an attribute
# list starts with "#", "." or ":" after the brace and optional spaces; "{x}" prose and "{{ jinja }}" are not one)
_ATTR = re.compile(r"\{(?!\{)[ \t]*(?::[^{}\n]*|[#.][A-Za-z_][^{}\n]*)\}")
# MkDocs include directives (FastAPI's docs: ``{* ../../docs_src/app.py hl[3] *}``)
_INCLUDE = re.compile(r"\{\*[^\n]*?\*\}")
_CODE_SPAN = re.compile(r"(`+)[^\n]*?\1")


def markup_ranges(text: str, blocks: list[Block]) -> list[tuple[int, int]]:
    """Character ranges of ``text`` holding markup that is not content, to be left out of the embedded text
    (never out of ``text``): MkDocs attribute lists ``{ #anchor }``, include directives ``{* file *}``, Kramdown
    ``{: .class }``, inline HTML tags and comments (``<p>``, ``<a href='...'>``, ``</a>``, ``<br/>``; the words
    between tags stay). Only in paragraphs, headings, list items, blockquotes, admonitions and pipe tables, never
    inside inline code spans. Sorted, non-overlapping; with the whitespace before an attribute list or include at
    the end of a line, so no trailing blank is left."""
    if "<" not in text and "{" not in text:
        return []
    out: list[tuple[int, int]] = []
    for b in blocks:
        if b.kind not in _MARKUP_KINDS:
            continue
        seg = text[b.start : b.content_end]
        if "<" not in seg and "{" not in seg:
            continue
        masked = _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), seg) if "`" in seg else seg
        found: list[tuple[int, int]] = []
        if "{" in masked:
            for pat in (_INCLUDE, _ATTR):
                for m in pat.finditer(masked):
                    a, e = m.start(), m.end()
                    while a > 0 and masked[a - 1] in " \t":  # the blank before it goes too
                        a -= 1
                    found.append((a, e))
        if "<" in masked:
            found.extend(m.span() for m in _TAG.finditer(masked))
        for a, e in found:
            out.append((b.start + a, b.start + e))
    return _union(out)


def _union(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, e in sorted(ranges):
        if out and a <= out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((a, e))
    return out


_DIGITS = re.compile(r"\d+")
RUNNING_EDGE_LINES = 2  # non-blank lines at the top and at the bottom of a page / section that may be running lines
RUNNING_MIN_PAGES = 3  # fewer pages (or sections) than this: nothing can be said to recur
RUNNING_MAX_CHARS = 100  # a running header / footer is one short line (a title, an ISSN, "Page 3 of 12")


def running_lines(text: str, blocks: list[Block], sections: list, plain_text: bool) -> list[tuple[int, int]]:
    """Running page headers and footers: a line among the first / last :data:`RUNNING_EDGE_LINES` non-blank lines
    of a page (the first and last one only on a page of at most twice as many lines) of at most
    :data:`RUNNING_MAX_CHARS` characters that recurs, digits aside ("Page 3 of 12" = "Page 7 of 12"), on at least half of the pages, with at
    least :data:`RUNNING_MIN_PAGES` pages. Pages are form-feed separated; a plain-text document without form feeds
    uses its heading sections instead (their heading lines are never running lines). Returns the ranges of every
    such occurrence, each a whole line with its line break (SPEC §3 excluded ranges)."""
    if "\f" in text:
        pages: list[tuple[int, int]] = []
        pos = 0
        for m in re.finditer("\f", text):
            pages.append((pos, m.start()))
            pos = m.end()
        pages.append((pos, len(text)))
        headings: set[int] = set()
    elif plain_text and len(sections) >= RUNNING_MIN_PAGES:
        pages = [(blocks[sec.first].start, blocks[sec.last - 1].end) for sec in sections if sec.last > sec.first]
        headings = {b.start for b in blocks if b.kind == "heading"}
    else:
        return []
    pages = [(a, e) for a, e in pages if text[a:e].strip()]
    if len(pages) < RUNNING_MIN_PAGES:
        return []
    seen: dict[str, set[int]] = {}
    where: list[tuple[str, int, int]] = []
    for k, (a, e) in enumerate(pages):
        lines = []
        pos = a
        for ln in text[a:e].splitlines(keepends=True):
            if ln.strip() and pos not in headings:
                lines.append((pos, pos + len(ln), ln))
            pos += len(ln)
        n_edge = RUNNING_EDGE_LINES if len(lines) > 2 * RUNNING_EDGE_LINES else 1
        edge = lines[:n_edge] + lines[max(n_edge, len(lines) - n_edge) :]
        for ls, le, ln in edge:
            key = " ".join(_DIGITS.sub("#", ln.replace("\f", "")).split())
            if 0 < len(key) <= RUNNING_MAX_CHARS:
                seen.setdefault(key, set()).add(k)
                where.append((key, ls, le))
    need = max(2, -(-len(pages) // 2))
    # (a line on every page that is all of its page is content, not a running line)
    return _union([(ls, le) for key, ls, le in where if len(seen[key]) >= need])


def front_matter(text: str, blocks: list[Block]) -> dict:
    """The YAML front matter of a scanned document as a mapping (``{}`` when there is none, or when it is not a
    YAML mapping: it is still left out of every chunk). Dates and other YAML types are kept as YAML reads them."""
    if not blocks or blocks[0].kind != "front_matter":
        return {}
    body = text[blocks[0].start : blocks[0].end].strip().lstrip("\ufeff")
    lines = body.splitlines()[1:]  # without the opening "---" (and the closing fence below)
    if lines and lines[-1].strip() in ("---", "..."):
        lines = lines[:-1]
    data = _safe_load("\n".join(lines))
    return data if isinstance(data, dict) else {}


def _safe_load(source: str) -> object:
    """``yaml.safe_load`` of ``source`` through libyaml (PyYAML's ``CSafeLoader``: same resolver and constructors,
    about 10x faster than the pure-Python parser, measured on the 84 front matters of ../shared/data, which both
    read identically); what libyaml rejects is read again by the pure-Python ``SafeLoader``, so nothing that
    ``safe_load`` accepts is lost. Returns None when neither accepts it (a YAML error: no front-matter mapping)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", None)  # (absent when PyYAML was built without libyaml)
    if loader is not None and "\t" not in source:  # libyaml accepts tabs where PyYAML rejects them ("a:\tb")
        try:
            return yaml.load(source, Loader=loader)  # noqa: S506 (a safe loader)
        except Exception:  # YAMLError, or UnicodeEncodeError for lone surrogates: the reference parser decides
            pass
    try:
        return yaml.safe_load(source)
    except yaml.YAMLError:
        return None


def _same_title(a: str, b: str) -> bool:
    """Two headings say the same when they agree without inline emphasis markers, case and spacing."""
    def norm(x: str) -> str:
        return " ".join(re.sub(r"[_*`]", "", x).casefold().split())
    return norm(a) == norm(b)
