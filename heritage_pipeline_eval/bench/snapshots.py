"""Readable snapshots of the chunker's output on a few real documents, next to the output-hash guard.

The hash guard (:mod:`.output_hash`) says *whether* any record changed; these files show *what* the chunks of three
bundled documents are (a FastAPI tutorial page, a French legal article group, a FAQ), one Markdown file per
document: per chunk its id, token count (cl100k tokens of the embedded text), character span, breadcrumb, then the
text. A deliberate chunker change regenerates them (``--write``) in the same commit, and ``git diff`` shows the
change chunk by chunk; ``heritage_pipeline_tests/chunking/test_chunk_snapshots.py`` fails when they differ.

Usage: ``.venv/bin/python -m heritage_pipeline_eval.bench.snapshots [--write]``
"""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SNAPSHOT_DIR = Path(__file__).resolve().parent / "snapshots"
DOCUMENTS = {  # snapshot name -> (data-relative path, language, domain as the default rules pick it)
    "fastapi_first_steps": ("raw/document/fastapi/en/tutorial/first-steps.md", "en", "tech"),
    "legal_fr_bibliotheques": ("raw/document/legal_fr/concat/code-du-patrimoine-partie-legislative/livre-iii-bibliotheques.md",
                               "fr", "legal"),
    "faq_gbif_grscicoll": ("raw/document/faq/gbif_grscicoll/en/faq.md", "en", "faq"),
}


def render(name: str) -> str:
    """The snapshot text of one document of :data:`DOCUMENTS`, chunked with the default configuration.

    Args:
        name: a key of :data:`DOCUMENTS`.

    Returns:
        Markdown: a header line, then one section per chunk (id, tokens, span in code points, breadcrumb, text).
    """
    from heritage_pipeline import chunk_text

    rel, lang, domain = DOCUMENTS[name]
    text = (REPO / "data" / rel).read_text(encoding="utf-8")
    chunks = chunk_text(text, doc_id=name, source_path=rel, lang=lang, domain=domain)
    out = [f"# {rel} ({len(chunks)} chunks, default configuration, domain {domain})", ""]
    for c in chunks:
        out += [f"## {c.id}", "",
                f"- tokens: {c.meta.len_tokens}; span: {c.spans.char_start}-{c.spans.char_end}; "
                f"breadcrumb: {c.meta.context_prefix or '(none)'}", "", "~~~~text", c.text, "~~~~", ""]
    return "\n".join(out)


def diffs() -> dict[str, str]:
    """Unified diff per snapshot whose stored file differs from the current output (empty when all agree)."""
    out = {}
    for name in DOCUMENTS:
        path = SNAPSHOT_DIR / f"{name}.md"
        stored = path.read_text(encoding="utf-8") if path.exists() else ""
        now = render(name)
        if stored != now:
            out[name] = "".join(difflib.unified_diff(stored.splitlines(True), now.splitlines(True),
                                                     f"stored/{name}.md", f"now/{name}.md", n=2))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite the stored snapshots from the current chunker")
    args = ap.parse_args(argv)
    if args.write:
        SNAPSHOT_DIR.mkdir(exist_ok=True)
        for name in DOCUMENTS:
            (SNAPSHOT_DIR / f"{name}.md").write_text(render(name), encoding="utf-8")
            print(f"wrote {SNAPSHOT_DIR / (name + '.md')}")
        return 0
    found = diffs()
    for name, d in found.items():
        print(d)
    print("snapshots identical" if not found else f"{len(found)} snapshot(s) differ: {', '.join(found)}")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
