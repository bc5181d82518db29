"""Hypothesis strategies for Markdown documents that stress the scanner and the chunker.

A generated document records what it contains (``GenDoc.parts``: kind, character span, heading level/title), so
tests can check structure properties against the generator's own truth instead of the code under test. The text
mixes everything the issue lists: ATX headings (with inline HTML, ``{ #id }``, closing hashes, skipped levels,
empty bodies), setext headings, fenced code with ``#`` lines and blank lines, pipe tables, blockquotes, lists,
thematic breaks, long paragraphs, runs without whitespace, CJK, RTL, emoji ZWJ sequences, combining marks,
non-breaking and odd spaces, BOMs, tokenizer special tokens, and LF / CRLF / CR line endings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

WORDS = [
    "archive", "museum", "collection", "the", "of", "and", "records", "catalogue", "heritage", "library", "data",
    "Rijksmuseum", "KB", "ISIL", "2024", "3.14", "naïve", "café", "Straße", "ÉLÉVATION", "über", "fiançailles",
    "数据", "博物馆档案", "東京", "한국어", "مرحبا", "بالعالم", "שלום", "Ελλάδα", "Москва",
    "👨\u200d👩\u200d👧\u200d👦", "🇫🇷", "👍🏽", "e\u0301te\u0301", "a\u0308", "Z\u0351\u0327\u0301a\u0300\u0346",
    "<|endoftext|>", "<|fim_prefix|>", "<|im_start|>", "`code`", "**bold**", "*em*", "[link](http://x.org/a_b)",
    "x\u00a0y", "a\u2009b", "c\u3000d", "in\ufeffside", "—", "«quoted»", "(paren)", "e.g.", "U.S.A.",
    "\ufeff", "sep\x1cx", "\x1f", "q\x0bq",
]
# (an odd space before line-final punctuation is French typography, and the one pre-token that spans a space)
PUNCT = [".", ".", ".", "?", "!", ";", ":", "。", "！", "…", "\u00a0:", "\u00a0!!", "\u2009?!", "\u3000…"]


@dataclass
class GenDoc:
    """A generated document: ``text`` and what is where (spans are code-point offsets into ``text``)."""

    text: str
    parts: list[dict] = field(default_factory=list)
    eol: str = "\n"
    tight: bool = False  # blocks may touch without a blank line: CommonMark may then join them (parts are approximate)

    def of_kind(self, *kinds: str) -> list[dict]:
        return [p for p in self.parts if p["kind"] in kinds]


@st.composite
def sentences(draw, min_words: int = 2, max_words: int = 25) -> str:
    words = draw(st.lists(st.sampled_from(WORDS), min_size=min_words, max_size=max_words))
    return " ".join(words) + draw(st.sampled_from(PUNCT))


@st.composite
def paragraph(draw) -> tuple[str, str]:
    sents = draw(st.lists(sentences(), min_size=1, max_size=12))
    if draw(st.booleans()) and len(sents) > 2:  # hard-wrapped paragraph
        cut = draw(st.integers(1, len(sents) - 1))
        return "paragraph", " ".join(sents[:cut]) + "\n" + " ".join(sents[cut:])
    return "paragraph", " ".join(sents)


@st.composite
def heading(draw, level: int | None = None) -> tuple[str, str, int, str]:
    level = level or draw(st.integers(1, 6))
    title_words = draw(st.lists(st.sampled_from(WORDS[:24] + ["数据", "Москва", "naïve"]), min_size=0, max_size=5))
    title = " ".join(title_words)
    style = draw(st.sampled_from(["atx", "atx", "html", "anchor", "closing", "setext"]))
    if style == "setext" and level <= 2 and title:
        underline = "=" * draw(st.integers(1, 8)) if level == 1 else "-" * draw(st.integers(2, 8))
        return "heading", f"{title}\n{underline}", level, title
    if style == "html" and title:
        return "heading", f"{'#' * level} <i><span lang=\"en\">{title}</span></i>", level, title
    if style == "anchor" and title:
        return "heading", f"{'#' * level} {title} {{ #{title_words[0].lower()} }}", level, title
    if style == "closing" and title:
        return "heading", f"{'#' * level} {title} ##", level, title
    return "heading", (f"{'#' * level} {title}" if title else "#" * level), level, title


@st.composite
def fenced_code(draw) -> tuple[str, str]:
    fence = draw(st.sampled_from(["```", "````", "~~~"]))
    lang = draw(st.sampled_from(["", "python", "bash", "json"]))
    lines = draw(st.lists(st.sampled_from([
        "# not a heading", "## also not", "def f(x):", "    return x  # comment", "", "print('<|endoftext|>')",
        "echo \"数据\"", "x = {'a': 1}", "---", "=====", "> not a quote", "| not | a table |",
    ]), min_size=1, max_size=30))
    return "code", f"{fence}{lang}\n" + "\n".join(lines) + f"\n{fence}"


@st.composite
def table(draw) -> tuple[str, str]:
    ncols = draw(st.integers(2, 5))
    header = "| " + " | ".join(f"col{i} {draw(st.sampled_from(WORDS[:20]))}" for i in range(ncols)) + " |"
    delim = "|" + "|".join(["---"] * ncols) + "|"
    rows = []
    cell_words = [w for w in WORDS if "|" not in w]
    for _ in range(draw(st.integers(1, 25))):
        rows.append("| " + " | ".join(draw(st.sampled_from(cell_words)) for _ in range(ncols)) + " |")
    return "table", "\n".join([header, delim, *rows])


@st.composite
def blockquote(draw) -> tuple[str, str]:
    lines = draw(st.lists(sentences(), min_size=1, max_size=5))
    return "blockquote", "\n".join("> " + s for s in lines)


@st.composite
def bullet_list(draw) -> tuple[str, str]:
    items = draw(st.lists(sentences(max_words=12), min_size=1, max_size=8))
    ordered = draw(st.booleans())
    return "list", "\n".join((f"{i + 1}. " if ordered else "- ") + s for i, s in enumerate(items))


@st.composite
def long_run(draw) -> tuple[str, str]:
    unit = draw(st.sampled_from(["a", "xY7", "汉", "👍🏽", "e\u0301", "=-", "/"]))
    n = draw(st.integers(200, 3000))
    return "paragraph", unit * (n // len(unit) + 1)


def block():
    return st.one_of(
        paragraph(), paragraph(), paragraph(), heading(), heading(), fenced_code(), table(), blockquote(),
        bullet_list(), st.just(("hr", "---")), long_run(),
    )


@st.composite
def markdown_docs(draw, min_blocks: int = 1, max_blocks: int = 40, eols=("\n", "\r\n", "\r"),
                  allow_bom: bool = True, tight: bool = False) -> GenDoc:
    """A Markdown document of ``min_blocks`` to ``max_blocks`` blocks separated by one or two blank lines (with
    ``tight``, sometimes by a bare line break, where CommonMark may join blocks: lazy continuation, table rows)."""
    blocks = draw(st.lists(block(), min_size=min_blocks, max_size=max_blocks))
    eol = draw(st.sampled_from(list(eols)))
    out: list[str] = []
    parts: list[dict] = []
    pos = 0
    if allow_bom and draw(st.booleans()):
        out.append("\ufeff")
        pos = 1
    for b in blocks:
        kind, body = b[0], b[1]
        sep = eol * draw(st.integers(1 if tight else 2, 3)) if out and pos > (1 if out[0] == "\ufeff" else 0) else ""
        out.append(sep)
        pos += len(sep)
        body = body.replace("\n", eol)
        rec = {"kind": kind, "start": pos, "end": pos + len(body)}
        if kind == "heading":
            rec["level"], rec["title"] = b[2], b[3]
        parts.append(rec)
        out.append(body)
        pos += len(body)
    out.append(eol)
    return GenDoc("".join(out), parts, eol, tight)
