"""Issue 13 items 4-6 and issue 16 item 5 on small documents written for each failure: split code blocks embed a
balanced fence, unclosed fences are flagged, table pieces share a table id and carry their rows, multi-row HTML
headers are repeated whole, table / code chunks have their own length rule, context prefixes have a budget, tiny
sibling sections merge under their parent, running headers / footers and Markdown markup are excluded from the
embedded text (SPEC §3) while ``text`` stays the raw slice."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_pipeline import chunk_text
from heritage_pipeline.chunking.excluded import embedded_text, remove_ranges
from heritage_pipeline.core.config import config_from
from heritage_pipeline.core.models import join_prefix
from heritage_pipeline.enrich.quality import assess_chunk

from heritage_pipeline_tests._chunk_checks import check_basic

FENCE_LINE = re.compile(r"^\s*(`{3,}|~{3,})", re.M)


def _code_doc(n: int = 100, close: bool = True, fence: str = "```") -> str:
    code = "\n".join(f"def f{i}(x):\n    return x * {i} + sum(range({i}))  # comment number {i}" for i in range(n))
    return f"# Code\n\nSome text.\n\n{fence}python\n{code}\n{fence + chr(10) if close else ''}\nAfter the code.\n"


def _balanced(s: str) -> bool:
    return len(FENCE_LINE.findall(s)) % 2 == 0


def test_every_piece_of_a_split_code_block_embeds_a_balanced_fenced_block(tokenizer):
    for fence in ("```", "~~~~"):
        text = _code_doc(fence=fence)
        chunks = chunk_text(text, max_tokens=400, size_tokens=300, min_tokens=50)
        check_basic(text, chunks, tokenizer, 400)
        code = [c for c in chunks if "code" in c.meta.block_kinds]
        assert len(code) >= 5
        for c in code:
            e = c.embedding_text()
            assert _balanced(e), (c.id, e[:80], e[-80:])
            assert c.len_tokens == tokenizer.count(e) <= 400
            assert not c.quality.unclosed_fence
        # later pieces carry the fence line with its language in the prefix, non-final pieces a closing fence
        assert all(c.meta.context_prefix.endswith(f"{fence}python") for c in code[1:])
        assert all(c.meta.context_suffix == fence for c in code[:-1])
        assert code[-1].meta.context_suffix == ""  # the last piece holds the real closing fence
        assert all(c.text == text[c.char_start : c.char_end] for c in chunks)  # text stays the raw slice


def test_an_unclosed_fence_is_flagged_and_still_embeds_balanced(tokenizer):
    text = _code_doc(close=False)
    chunks = chunk_text(text, max_tokens=400, size_tokens=300, min_tokens=50)
    check_basic(text, chunks, tokenizer, 400)
    code = [c for c in chunks if "code" in c.meta.block_kinds]
    assert code and all(c.quality.unclosed_fence for c in code)
    assert all(_balanced(c.embedding_text()) for c in code)
    small = chunk_text("# A\n\nText before.\n\n```\nx = 1\n")
    assert [c.quality.unclosed_fence for c in small] == [True]
    assert not any(c.quality.unclosed_fence for c in chunk_text("# A\n\n```\nx = 1\n```\n"))


def _fenced_in(container: str, close: bool = True) -> str:
    lines = [f"result_{i} = compute_value({i}) + other_value({i})" for i in range(200)]
    if container == "list":  # a fence indented inside an ordered list item
        body = "\n".join(f"    {ln}" for ln in lines)
        return ("# Guide\n\n1. Install the tool:\n\n    ```python\n" + body + ("\n    ```" if close else "")
                + "\n\n2. Run it.\n")
    body = "\n".join(lines)  # an admonition of the FastAPI docs: /// tip ... ///
    return "# Guide\n\n/// tip\n\n~~~~python\n" + body + ("\n~~~~" if close else "") + "\n\n///\n\nThe end.\n"


def test_split_fences_inside_list_items_and_admonitions_embed_balanced_blocks(tokenizer):
    for container, fence in (("list", "```"), ("admonition", "~~~~")):
        for close in (True, False):
            text = _fenced_in(container, close)
            chunks = chunk_text(text, max_tokens=400, size_tokens=300, min_tokens=50)
            check_basic(text, chunks, tokenizer, 400)
            code = [c for c in chunks if "compute_value" in c.text]
            assert len(code) >= 4, (container, close)
            for c in code:
                e = c.embedding_text()
                assert _balanced(e), (container, close, c.id, e[-80:])
                assert c.len_tokens == tokenizer.count(e) <= 400  # the closing fence counts in the cap
            assert all(c.meta.context_suffix == fence for c in code[:-1])
            assert code[-1].meta.context_suffix == ("" if close else fence)  # the real closing fence, if any
            assert all(c.meta.context_prefix.endswith(f"{fence}python") for c in code[1:])
            assert all(c.text == text[c.char_start : c.char_end] for c in chunks)


QUOTED_FENCE_LINE = re.compile(r"^[ \t]*(?:>[ \t]?)*[ \t]*(`{3,}|~{3,})", re.M)


def _quoted_fence_doc(depth: int, close: bool, fence: str = "```") -> str:
    q = "> " * depth
    lines = "\n".join(f"{q}result_{i} = compute_value({i}) + other_value({i})" for i in range(200))
    return (f"# Guide\n\nIntro text.\n\n{q}Note: run this first:\n{q}\n{q}{fence}python\n{lines}\n"
            + (f"{q}{fence}\n" if close else "") + "\nThe end.\n")


def test_split_fences_inside_blockquotes_embed_balanced_blocks(tokenizer):
    """A fenced code block inside a ``> `` blockquote split across chunks: every piece's embedded text is a balanced
    fenced block inside its quote (the quoted fence line with its language in the prefix, the quoted closing fence as
    the suffix, counted in the cap); before, the first and last pieces had one fence each (trial: 2 of 10)."""
    for depth, fence in ((1, "```"), (2, "~~~~")):
        for close in (True, False):
            text = _quoted_fence_doc(depth, close, fence)
            chunks = chunk_text(text, max_tokens=400, size_tokens=300, min_tokens=50)
            check_basic(text, chunks, tokenizer, 400)
            code = [c for c in chunks if "compute_value" in c.text]
            assert len(code) >= 4 and all("blockquote" in c.meta.block_kinds for c in code)
            q = "> " * depth
            for c in code:
                e = c.embedding_text()
                assert len(QUOTED_FENCE_LINE.findall(e)) % 2 == 0, (depth, close, c.id, e[-80:])
                assert c.len_tokens == tokenizer.count(e) <= 400  # the closing fence counts in the cap
            assert all(c.meta.context_suffix == q + fence for c in code[:-1])
            assert code[-1].meta.context_suffix == ("" if close else q + fence)
            assert all(c.meta.context_prefix.endswith(f"{q}{fence}python") for c in code[1:])
            assert all(c.text == text[c.char_start : c.char_end] for c in chunks)
    plain = chunk_text("# A\n\n> A quote that is only text.\n> Second line.\n")  # no fence: nothing added
    assert [c.meta.context_suffix for c in plain] == [""]


def test_table_pieces_share_a_table_id_and_carry_their_rows(tokenizer):
    rows = "\n".join(f"| {i} | Museum number {i} of the city | {i * 3} visitors per day |" for i in range(1, 120))
    text = f"# T\n\n| id | name | visitors |\n|---|---|---|\n{rows}\n\n## Next\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    chunks = chunk_text(text, max_tokens=400, size_tokens=300, min_tokens=50)
    check_basic(text, chunks, tokenizer, 400)
    first = [c for c in chunks if c.meta.table_id == "text#table-1"]
    assert len(first) >= 5
    covered = set()
    for c in first:
        lo, hi = c.meta.table_rows
        body = [ln for ln in c.text.splitlines() if ln.startswith("| ") and not ln.startswith("| id ")]
        assert [int(ln.split("|")[1]) for ln in body] == list(range(lo, hi + 1))
        covered.update(range(lo, hi + 1))
    assert covered == set(range(1, 120))
    assert [c.meta.table_rows for c in chunks if c.meta.table_id == "text#table-2"] == [[1, 1]]


def test_a_two_row_html_header_is_repeated_whole(tokenizer):
    head = ("<table>\n<thead>\n<tr><th colspan=2>Museum</th><th>Visitors</th></tr>\n"
            "<tr><th>Name</th><th>City</th><th>2023</th></tr>\n</thead>\n<tbody>\n")
    body = "\n".join(f"<tr><td>Museum number {i}</td><td>City {i}</td><td>{i * 1000}</td></tr>" for i in range(1, 80))
    text = f"# H\n\n{head}{body}\n</tbody>\n</table>\n"
    chunks = chunk_text(text, max_tokens=400, size_tokens=300, min_tokens=50)
    check_basic(text, chunks, tokenizer, 400)
    assert len(chunks) >= 4
    for c in chunks[1:]:
        assert "<th colspan=2>Museum</th>" in c.meta.context_prefix and "<th>Name</th>" in c.meta.context_prefix
        assert c.meta.table_id == "text#table-1"
        lo, hi = c.meta.table_rows
        assert f"Museum number {lo}<" in c.text and f"Museum number {hi}<" in c.text
    # without <thead>: leading rows of <th> cells are the header
    plain = text.replace("<thead>\n", "").replace("</thead>\n", "")
    assert all("<th>Name</th>" in c.meta.context_prefix for c in chunk_text(plain, max_tokens=400, size_tokens=300,
                                                                           min_tokens=50)[1:])


def test_table_and_code_chunks_have_their_own_length_rule():
    cfg = config_from(None, {})
    small_table = chunk_text("# Prices\n\n| ticket | price |\n|---|---|\n| adult | 12 |\n| child | 6 |\n")
    prose = chunk_text("# Note\n\nThe museum is closed on Mondays and on public holidays in winter.\n")
    for c in small_table + prose:
        assess_chunk(c, cfg)
    assert [c.quality.length_ok for c in small_table] == [True]
    assert [c.quality.length_ok for c in prose] == [False]


def test_remove_ranges_and_embedded_text():
    t = "Hello<br>world {: .x } end"
    assert remove_ranges(t, [[5, 9]]) == "Hello world {: .x } end"
    assert remove_ranges(t, [[5, 9], [15, 23]]) == "Hello world end"
    assert embedded_text("A", "x", (), "```") == "A\n\nx\n```"
    assert embedded_text("", "x y", [[1, 2]]) == "x y"  # (a space stands in: removing the gap never glues words)
    assert remove_ranges("a\n{* f.py *}\nb", [[2, 12]]) == "a\nb"  # a whole line goes with its line break


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=0, max_size=60), st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), max_size=4))
def test_removing_no_range_is_identity_and_ranges_remove_only_their_characters(text, pairs):
    """Property: no range -> the text; otherwise every kept character appears, in order, and nothing excluded does
    (a space may stand in between two word characters; a removed whole line takes one line break)."""
    assert embedded_text("", text) == join_prefix("", text) == text
    cuts = sorted({min(max(a, 0), len(text)) for p in pairs for a in p})
    ranges = [[cuts[k], cuts[k + 1]] for k in range(0, len(cuts) - 1, 2) if cuts[k] < cuts[k + 1]]
    out = remove_ranges(text, ranges)
    kept = "".join(ch for i, ch in enumerate(text) if not any(s <= i < e for s, e in ranges))
    assert out.replace(" ", "").replace("\n", "") == kept.replace(" ", "").replace("\n", "")
    assert len(out) <= len(kept) + len(ranges)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=" \n\t\x1c\u3000ab<>", max_size=30),
       st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=4))
def test_has_content_tells_whether_the_embedded_body_is_blank(text, pairs):
    """Property: ``has_content`` (a search of the gaps between the ranges) says whether the embedded body has
    anything :meth:`str.strip` keeps, as building the body would."""
    from heritage_pipeline.chunking.excluded import has_content

    cuts = sorted({min(max(a, 0), len(text)) for p in pairs for a in p})
    ranges = [[cuts[k], cuts[k + 1]] for k in range(0, len(cuts) - 1, 2) if cuts[k] < cuts[k + 1]]
    assert has_content(text, ranges) == bool(embedded_text("", text, ranges).strip())


# ------------------------------------------------------------------ 13.6 running headers / footers
TOPICS = ["the founding of the museum in 1884", "the textile collection and its donors", "restoration of the organ",
          "the library reading room", "loans to other institutions", "the photographic archive"]


def _paged(n: int, sep: str = "\f") -> str:
    pages = []
    for i, t in enumerate(TOPICS[:n], 1):
        pages.append(f"ACME Journal · ISSN 1234-5678 · Vol. {i}\n\nThis page is about {t}. "
                     + f"It was written by staff member {i} with care and checked twice. " * 3
                     + f"\n\nA second paragraph on {t}.\n\nPage {i} of {n}\n")
    return sep.join(pages)


def test_running_headers_and_footers_are_excluded_from_the_embedding_not_from_the_text(tokenizer):
    from heritage_pipeline.sources.markdown import parse_markdown

    text = _paged(5)
    doc = parse_markdown(text, doc_id="j", source_path="j.txt")
    assert doc.meta["excluded_counts"] == {"markup": 0, "running_lines": 10}  # one header + one footer per page
    chunks = chunk_text(text, source_path="j.txt", doc_id="j")
    check_basic(text, chunks, tokenizer, 1200)
    joined = "".join(c.text for c in chunks)
    assert joined.count("ACME Journal") == 5 and joined.count("of 5") == 5  # text stays the raw slice
    for c in chunks:
        e = c.embedding_text()
        assert "ACME Journal" not in e and not re.search(r"Page \d of 5", e)
        assert "This page is about" in e
        assert c.len_tokens == tokenizer.count(e)


def test_too_few_pages_or_a_line_on_fewer_than_half_of_them_is_kept():
    from heritage_pipeline.sources.markdown import parse_markdown

    assert "excluded" not in parse_markdown(_paged(2), doc_id="j", source_path="j.txt").meta
    # a header on 2 of 6 pages is not running
    pages = _paged(6).split("\f")
    pages = [p if k < 2 else p.split("\n", 1)[1] for k, p in enumerate(pages)]
    ex = parse_markdown("\f".join(pages), doc_id="j", source_path="j.txt").meta["excluded_counts"]
    assert ex["running_lines"] == 6  # only the six footers


def test_sections_of_a_plain_text_file_count_as_pages_but_not_in_markdown():
    from heritage_pipeline.sources.markdown import parse_markdown

    body = "".join(f"# Part {i}\n\nText of part {i} on {t}, long enough to matter here.\n\nBack to top\n\n"
                   for i, t in enumerate(TOPICS[:4], 1))
    assert parse_markdown(body, doc_id="t", source_path="t.txt").meta["excluded_counts"]["running_lines"] == 4
    assert "excluded" not in parse_markdown(body, doc_id="t", source_path="t.md").meta


# ------------------------------------------------------------------ 16.5 markup hygiene
def test_mkdocs_kramdown_and_inline_html_markup_is_not_embedded(tokenizer):
    text = ("# Python Types { #python-types }\n\nIntro with <abbr title='application'>app</abbr> and "
            "<a href='/x.md' title='y'>a link</a>.<br/>\n{: .lead }\n\n"
            "{* ../../docs_src/app_py310.py hl[3] *}\n\n"
            "Use `<div>` and `{ #not-an-attr }` in code spans.\n\n```html\n<p>kept in code</p>\n```\n")
    [c] = chunk_text(text)
    check_basic(text, [c], tokenizer, 1200)
    e = c.embedding_text()
    assert c.text == text.rstrip()  # text stays the raw slice
    for gone in ("{ #python-types }", "<abbr", "</abbr>", "<a href", "</a>", "<br/>", "{: .lead }", "{*", "*}"):
        assert gone not in e, gone
    for kept in ("# Python Types\n", "app and a link.", "`<div>`", "`{ #not-an-attr }`", "<p>kept in code</p>"):
        assert kept in e, kept
    assert c.len_tokens == tokenizer.count(e) < tokenizer.count(join_prefix(c.meta.context_prefix, c.text))


def test_real_fastapi_page_embeds_no_attribute_lists_or_includes(tokenizer):
    from pathlib import Path

    p = Path(__file__).resolve().parents[2] / "data" / "raw" / "document" / "fastapi" / "en" / "python-types.md"
    text = p.read_text(encoding="utf-8")
    chunks = chunk_text(text)
    check_basic(text, chunks, tokenizer, 1200)
    assert sum(len(c.meta.excluded) for c in chunks) >= text.count("{ #") + text.count("{*")
    for c in chunks:
        assert not re.search(r"\{ #[\w-]+ \}|\{\*", c.embedding_text())


# ------------------------------------------------------------------ 13.5 prefix budget, tiny sibling sections
def test_a_long_breadcrumb_is_shortened_to_its_budget_and_meta_anchors_keep_the_full_path(tokenizer):
    h1 = "A very long heading about the history of the collection " * 3
    h2 = "Second level heading with many many words in it " * 4
    text = f"# {h1}\n\n## {h2}\n\n### Third level heading\n\nShort text here, eight tokens or so.\n"
    for size, ratio in ((300, 0.25), (600, 0.1), (400, 0.5)):
        chunks = chunk_text(text, size_tokens=size, min_tokens=50, **{"context.prefix_budget_ratio": ratio})
        check_basic(text, chunks, tokenizer, 1200)
        [c] = [c for c in chunks if "Short text" in c.text]
        assert tokenizer.count(c.meta.context_prefix) <= int(ratio * size)
        assert c.meta.anchors == [" ".join(h1.split()), " ".join(h2.split()), "Third level heading"]
    [c] = [c for c in chunk_text(text, size_tokens=600, min_tokens=50, **{"context.prefix_budget_ratio": 0.1})
           if "Short text" in c.text]
    assert c.meta.context_prefix.endswith(" › … › Third level heading")  # the middle anchor is elided first
    # a breadcrumb within the budget is untouched
    [c] = chunk_text("# A\n\n## B\n\nText.\n")
    assert c.meta.context_prefix == "A › B"


def test_tiny_sibling_sections_merge_up_to_the_target_under_their_parent(tokenizer):
    parts = ["# Guide\n\nIntro paragraph for the guide.\n"]
    for h2 in range(3):
        parts.append(f"## Chapter {h2}\n")
        for h3 in range(12):
            parts.append(f"### Option {h2}.{h3}\n\nSet option {h3} to enable feature {h3}; default is off.\n")
    text = "\n".join(parts)
    chunks = chunk_text(text)
    check_basic(text, chunks, tokenizer, 1200)
    merged = [c for c in chunks if c.meta.sections]
    assert len(merged) == 3 and len(chunks) == 4
    for k, c in enumerate(merged):
        assert c.meta.anchors == ["Guide", f"Chapter {k}"]  # the parent's path
        assert c.id == f"text#guide/chapter-{k}/option-{k}-0#000"  # named after the first merged section
        assert c.meta.sections == [f"Option {k}.{i}" for i in range(12)]
        assert c.len_tokens <= 600
    # siblings under different parents never merge, and no merge passes the target size
    small = chunk_text(text, size_tokens=300, min_tokens=200)
    check_basic(text, small, tokenizer, 1200)
    assert all(len({a[1] for a in [c.meta.anchors] if len(a) > 1}) <= 1 for c in small)
    assert all(c.len_tokens <= 300 for c in small if c.meta.sections)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["Text with <b>bold</b> words.", "  indented <i>line</i>", "## Head { #h }",
                                 "{* f.py *}", "plain line.", "", "* item <br/> two", "end</a>.", "x{: .c }",
                                 "<br/> after a tag", "<img src='a.png'>", "  <b>x</b>", "word:", "   ", "1.5 GB",
                                 "\u4e2d\u6587<br>\u65e5\u672c"]),
                min_size=1, max_size=12))
def test_the_local_recount_equals_a_full_count(tokenizer, lines):
    """Property: excluded_count (re-encoding only the lines around each range) equals the count of the whole
    embedded text, for markup at line starts, ends, indented lines, whole lines (includes, tags) and blank lines,
    with and without known counts of the old pieces."""
    from heritage_pipeline.chunking.excluded import excluded_count
    from heritage_pipeline.sources.markdown import markup_ranges, scan_blocks

    text = "\n".join(lines).rstrip()
    if not text.strip():
        return
    ranges = [list(r) for r in markup_ranges(text, scan_blocks(text)) if r[1] <= len(text)]
    asked: list[tuple[int, int]] = []

    def known(a: int, b: int) -> int:
        asked.append((a, b))
        return tokenizer.count(text[a:b])

    for prefix in ("", "A › B"):
        n_full = tokenizer.count(embedded_text(prefix, text))
        expected = tokenizer.count(embedded_text(prefix, text, ranges))
        assert excluded_count(tokenizer.count, prefix, text, ranges, "", n_full) == expected
        assert excluded_count(tokenizer.count, prefix, text, ranges, "", n_full, known) == expected
    # known is asked only at the text's start, its end, or line starts of non-blank lines
    for a, b in asked:
        assert a < b and (a == 0 or (text[a - 1] == "\n" and text[a:].split("\n", 1)[0].strip()))
        assert b == len(text) or (text[b - 1] == "\n" and text[b:].split("\n", 1)[0].strip())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["<tr>", "<TR class='a'>", "<track>", "<td>x</td>", "</tr>", "\n", "<tr", "text"]),
                min_size=1, max_size=30), st.data())
def test_html_table_rows_from_the_shared_row_list_equal_a_scan_of_the_slice(parts, data):
    """Property: ``table_rows`` of an HTML table from the document's row list (shared by its chunks) equals the
    rows found by scanning each slice itself, for any slice (also one cut right after ``<tr`` of ``<track``)."""
    import re as _re

    from heritage_pipeline.chunking.boundaries import html_row_starts, table_rows
    from heritage_pipeline.core.structure import Block

    text = "<table>\n<tr><th>h</th></tr>\n" + "".join(parts) + "\n</table>"
    header_end = text.index("</tr>") + len("</tr>")
    b = Block("html_table", 0, len(text), len(text), header_end=header_end)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    tr = _re.compile(r"<tr\b", _re.IGNORECASE)  # the slice scan table_rows did before the shared list
    lo, hi = max(start, header_end), min(end, len(text))
    before = len(tr.findall(text, header_end, lo))
    inside = len(tr.findall(text, lo, hi)) if hi > lo else 0
    partial = 1 if lo > header_end and text.rfind("<tr", header_end, lo) > text.rfind("</tr", header_end, lo) else 0
    first, last = before + 1 - partial, before + inside
    expected = [0, 0] if last < first else [first, last]
    assert table_rows(text, b, start, end, html_row_starts(text, b)) == expected
    assert table_rows(text, b, start, end) == expected
