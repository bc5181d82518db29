"""Tables -> text: Markdown/CSV rendering, row limit, extractive summary, digest; HTML tables in Markdown."""

from __future__ import annotations

import hashlib

from heritage_pipeline.chunking.chunker import chunk_text
from heritage_pipeline.enrich.tables import (parse_html_table, parse_pipe_table, render_table, summarize_table,
    table_meta)

PIPE = "| Name | City | Type |\n|---|---|---|\n| Rijksmuseum | Amsterdam | M |\n| KB \\| National Library | Den Haag | L |\n"


def test_pipe_table_rendering_and_digest():
    t = parse_pipe_table(PIPE.splitlines())
    assert t.header == ["Name", "City", "Type"] and t.rows[1][0] == "KB | National Library"
    md = render_table(t)
    assert md.splitlines()[0] == "| Name | City | Type |" and "KB \\| National Library" in md
    assert render_table(t, "csv").splitlines() == ["Name,City,Type", "Rijksmuseum,Amsterdam,M", "KB | National Library,Den Haag,L"]
    m = table_meta("Intro.\n\n" + PIPE)
    assert m.n_tables == 1 and m.table_digest == hashlib.sha256(m.table_text.encode()).hexdigest()
    assert m.table_summary is None


def test_large_table_is_cut_at_30_rows_and_summarised():
    rows = "\n".join(f"| {i} | Museum {i} | {'Amsterdam' if i % 3 else 'Utrecht'} |" for i in range(45))
    m = table_meta("| id | name | city |\n|---|---|---|\n" + rows + "\n")
    lines = m.table_text.splitlines()
    assert len(lines) == 2 + 30 + 1 and lines[-1] == "(15 more rows)"
    sentences = [s for s in m.table_summary.split(". ") if s]
    assert m.table_summary.startswith("Table of 45 rows and 3 columns: id, name, city.")
    assert 2 <= len(sentences) <= 3 + 2  # 2-3 sentences (row quotes may contain periods)
    assert "Museum" in m.table_summary  # rows are quoted verbatim (extractive)


def test_wide_table_is_summarised():
    header = "| " + " | ".join(f"c{i}" for i in range(25)) + " |\n|" + "---|" * 25 + "\n"
    row = "| " + " | ".join(str(i) for i in range(25)) + " |\n"
    assert table_meta(header + row * 3).table_summary.startswith("Table of 3 rows and 25 columns")


def test_html_table_in_markdown():
    html = "<table><tr><th>Article</th><th>Objet</th></tr><tr><td>L. 211-1</td><td>Archives</td></tr></table>"
    t = parse_html_table(html)
    assert t.header == ["Article", "Objet"] and t.rows == [["L. 211-1", "Archives"]]
    assert "| L. 211-1 | Archives |" in table_meta("Texte.\n\n" + html + "\n").table_text


def test_split_pipe_table_pieces_carry_the_header():
    rows = "\n".join(f"| {i} | {'lorem ipsum dolor sit amet ' * 3} |" for i in range(300))
    chunks = chunk_text("# T\n\n| id | text |\n|---|---|\n" + rows + "\n")
    assert len(chunks) > 2
    for c in chunks:
        m = table_meta(c.text, c.meta.context_prefix)
        assert m.table_text.startswith("| id | text |"), c.id
        assert c.text.lstrip().startswith(("# T", "| "))  # the chunk text itself is untouched source


def test_legal_annex_html_table(shared_data):
    """The 287 KB HTML table inside Markdown: every piece gets a rendering with the header row and its digest."""
    path = (shared_data / "legal_fr" / "raw" / "code-de-lentree-et-du-sejour-des-etrangers-et-du-droit-dasile" /
            "partie-reglementaire" / "annexes" / "annexe-10.md")
    chunks = chunk_text(path.read_text(encoding="utf-8"), source_path="annexe-10.md", domain="legal")
    metas = [table_meta(c.text, c.meta.context_prefix) for c in chunks]
    assert len(chunks) > 100 and all(m.n_tables == 1 for m in metas)
    assert all("Pièces justificatives" in m.table_text.splitlines()[0] for m in metas)
    assert len({m.table_digest for m in metas}) > len(metas) // 2  # pieces differ by their rows


def test_summary_of_small_table_is_deterministic():
    t = parse_pipe_table(PIPE.splitlines())
    assert summarize_table(t) == summarize_table(t)
