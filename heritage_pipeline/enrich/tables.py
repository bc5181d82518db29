"""Tables -> text: Markdown pipe tables and HTML tables (also HTML inside Markdown) found in a chunk are parsed into
rows of cells, rendered as Markdown (or CSV) with at most ``max_rows`` data rows, summarised extractively when
large, and fingerprinted.

The chunk ``text`` is never changed (it stays the exact source slice); everything goes into metadata:

* ``meta.table_text``: the rendering of every table (or table piece) in the chunk, joined by a blank line;
* ``meta.table_digest``: SHA-256 (hex) of ``meta.table_text``, i.e. of the rendered table(s);
* ``meta.table_summary``: for tables with more than ``summarize_over_rows`` rows or ``summarize_over_cols``
  columns, a 2-3 sentence extractive summary (:func:`summarize_table`); None otherwise.

Why metadata and not the context prefix: ``meta.len_tokens`` counts ``context_prefix + text`` and is checked
against the hard maximum by the chunker; adding a rendering to the prefix after chunking would silently break
that budget (docling's ``contextualize`` overflow). Users who want the rendering embedded can embed
``table_text`` as a second vector.

A table split by the chunker over several chunks (it exceeded the hard maximum) is seen piece by piece: each
piece is parsed with the header rows the chunker repeated in ``meta.context_prefix``, so each piece's rendering
has the header and that piece's rows (HTML pieces cut inside a cell are parsed leniently; the cut cell is
rendered as far as it goes).

Parsing HTML uses BeautifulSoup with the standard-library ``html.parser`` (bs4 is already installed by docling;
lenient with the unclosed fragments that split pieces are). Pipe tables are split on unescaped ``|``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import re
from collections import Counter
from dataclasses import dataclass

from heritage_pipeline.sources.markdown import scan_blocks

_PIPE_SPLIT = re.compile(r"(?<!\\)\|")
_DELIM_CELL = re.compile(r"^\s*:?-{1,}:?\s*$")
_HTML_TABLE_OPEN = re.compile(r"<table\b", re.I)
from heritage_pipeline.core.text import WORD_RE as _WORD  # noqa: E402  (the one word tokenizer)


@dataclass
class ParsedTable:
    """A table as rows of cell strings (whitespace-collapsed). ``header`` may be empty (no header row known)."""

    header: list[str]
    rows: list[list[str]]
    source: str  # "markdown" | "html"

    @property
    def n_cols(self) -> int:
        return max([len(self.header)] + [len(r) for r in self.rows]) if (self.header or self.rows) else 0


def _clean(cell: str) -> str:
    return " ".join(cell.replace("\\|", "|").split())


def parse_pipe_table(lines: list[str]) -> ParsedTable | None:
    """Parse GFM pipe-table lines (header, delimiter, rows; or rows only for a split piece without header)."""
    rows: list[list[str]] = []
    header: list[str] = []
    for line in lines:
        s = line.strip()
        if not s or "|" not in s:
            continue
        if s.startswith("|"):
            s = s[1:]
        if s.endswith("|") and not s.endswith("\\|"):
            s = s[:-1]
        cells = [_clean(c) for c in _PIPE_SPLIT.split(s)]
        if all(_DELIM_CELL.match(c) for c in cells) and cells:
            if rows and not header:
                header = rows.pop()
            continue
        rows.append(cells)
    if not rows and not header:
        return None
    return ParsedTable(header, rows, "markdown")


def parse_html_table(html: str) -> ParsedTable | None:
    """Parse the first ``<table>`` of an HTML fragment (unclosed fragments accepted). The first row is the header
    (as in GFM, and as the chunker assumes when it repeats a split table's header) unless it is the only row and
    is not made of ``<th>`` cells. ``colspan`` cells are padded with empty cells."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    table = soup.find("table")
    if table is None:
        return None
    rows: list[list[str]] = []
    header_is_th = False
    for i, tr in enumerate(table.find_all("tr")):
        cells = tr.find_all(["td", "th"], recursive=False) or tr.find_all(["td", "th"])
        if not cells:
            continue
        texts = []
        for c in cells:
            span = c.get("colspan")
            texts.append(_clean(c.get_text(" ")))
            if span and str(span).isdigit():
                texts.extend([""] * (min(int(span), 50) - 1))
        if not rows:
            header_is_th = all(c.name == "th" for c in cells) or tr.find_parent("thead") is not None
        rows.append(texts)
    if not rows:
        return None
    if header_is_th or len(rows) > 1:
        return ParsedTable(rows[0], rows[1:], "html")
    return ParsedTable([], rows, "html")


def render_table(t: ParsedTable, fmt: str = "markdown", max_rows: int = 30) -> str:
    """Markdown pipe table (or CSV) of the header and the first ``max_rows`` data rows; when rows were left out,
    a last line ``(N more rows)`` says how many. Rows are padded to the table's column count."""
    n = t.n_cols
    header = (t.header + [""] * (n - len(t.header))) if t.header else [f"col{i + 1}" for i in range(n)]
    body = [r + [""] * (n - len(r)) for r in t.rows[:max_rows]]
    more = len(t.rows) - len(body)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(header)
        w.writerows(body)
        out = buf.getvalue().rstrip("\n")
    else:
        esc = [[c.replace("|", "\\|") for c in r] for r in [header] + body]
        lines = ["| " + " | ".join(esc[0]) + " |", "|" + "---|" * n]
        lines += ["| " + " | ".join(r) + " |" for r in esc[1:]]
        out = "\n".join(lines)
    if more > 0:
        out += f"\n({more} more rows)"
    return out


def _row_text(header: list[str], row: list[str], limit: int = 240) -> str:
    parts = []
    for i, v in enumerate(row):
        if not v:
            continue
        name = header[i] if i < len(header) and header[i] else f"col{i + 1}"
        parts.append(f"{name}: {v}")
    s = "; ".join(parts)
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


def summarize_table(t: ParsedTable, max_rows_listed: int = 2) -> str:
    """A 2-3 sentence extractive summary of a table.

    Sentence 1 states the shape and the column names (first 8). Sentences 2-3 quote the ``max_rows_listed``
    most representative rows verbatim ("col: value; ..."), chosen as the rows whose bag of words is closest
    (cosine of TF-IDF vectors) to the centroid of all rows, the centroid method of extractive summarisation
    (Radev et al. 2004, MEAD); ties go to the earlier row.
    """
    n_rows, n_cols = len(t.rows), t.n_cols
    cols = [c for c in t.header if c][:8]
    first = f"Table of {n_rows} rows and {n_cols} columns"
    if cols:
        extra = len([c for c in t.header if c]) - len(cols)
        first += ": " + ", ".join(cols) + (f" and {extra} more" if extra > 0 else "")
    sentences = [first + "."]
    docs = [Counter(w.lower() for w in _WORD.findall(" ".join(r))) for r in t.rows]
    if docs:
        df = Counter(w for d in docs for w in d)
        idf = {w: math.log((1 + len(docs)) / (1 + f)) + 1 for w, f in df.items()}
        vecs = []
        for d in docs:
            v = {w: c * idf[w] for w, c in d.items()}
            norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
            vecs.append({w: x / norm for w, x in v.items()})
        centroid: Counter[str] = Counter()
        for v in vecs:
            centroid.update(v)
        scores = [sum(x * centroid[w] for w, x in v.items()) for v in vecs]
        best = sorted(range(len(vecs)), key=lambda i: (-scores[i], i))[:max_rows_listed]
        for rank, i in enumerate(sorted(best)):
            label = "A representative row" if rank == 0 else "Another"
            sentences.append(f"{label} (row {i + 1}): {_row_text(t.header, t.rows[i])}.")
    return " ".join(sentences[:3])


def tables_in_chunk(text: str, context_prefix: str = "") -> list[ParsedTable]:
    """Every table in a chunk's text, in order. A chunk that starts inside a split table (its header repeated in
    ``context_prefix``) gets that header prepended before parsing."""
    out: list[ParsedTable] = []
    lead = _continued_table_head(text, context_prefix)
    if lead is not None:
        text = lead + text
    if "|" not in text and "<" not in text:  # no pipe row, no HTML tag: no table (skips the block scan of a registry row)
        return out
    for b in scan_blocks(text):
        body = text[b.start : b.end]
        if b.kind == "table":
            t = parse_pipe_table(body.splitlines())
        elif b.kind in ("html_table", "html") and _HTML_TABLE_OPEN.search(body):
            t = parse_html_table(body[_HTML_TABLE_OPEN.search(body).start() :])
        else:
            continue
        if t is not None and (t.rows or t.header):
            out.append(t)
    return out


def _continued_table_head(text: str, prefix: str) -> str | None:
    """The repeated header of a split table from the context prefix, when ``text`` continues that table."""
    if not prefix:
        return None
    first = text.lstrip()[:200]
    pipe_lines = [ln for ln in prefix.splitlines() if ln.strip().startswith("|")]
    if pipe_lines and first.startswith("|"):
        return "\n".join(pipe_lines) + "\n"
    m = _HTML_TABLE_OPEN.search(prefix)
    if m and "<table" not in first.lower():
        # the HTML piece is a continuation: header part of the table + the fragment, parsed as one table
        start = prefix.rfind("\n", 0, m.start()) + 1
        # a piece cut inside a row or a cell: reopen a row (and a cell) so the parser keeps its content
        reopen = "" if first.lower().startswith("<tr") else ("<tr>" if first.lower().startswith("<td") else "<tr><td>")
        return prefix[start:] + reopen
    return None


@dataclass
class TableMeta:
    table_text: str | None
    table_digest: str | None
    table_summary: str | None
    n_tables: int


def table_meta(text: str, context_prefix: str = "", *, fmt: str = "markdown", max_rows: int = 30,
               summarize: bool = True, summarize_over_rows: int = 30, summarize_over_cols: int = 20) -> TableMeta:
    """Rendering, digest and summary of the tables of one chunk (module docstring); all None without a table."""
    tables = tables_in_chunk(text, context_prefix)
    if not tables:
        return TableMeta(None, None, None, 0)
    rendered = "\n\n".join(render_table(t, fmt, max_rows) for t in tables)
    summaries = [summarize_table(t) for t in tables
                 if summarize and (len(t.rows) > summarize_over_rows or t.n_cols > summarize_over_cols)]
    return TableMeta(rendered, hashlib.sha256(rendered.encode("utf-8")).hexdigest(),
                     "\n".join(summaries) if summaries else None, len(tables))
