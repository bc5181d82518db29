"""Issue #3 properties on every Markdown file of ../shared/data (1 028 real files: FastAPI docs in 3 languages with a
700 KB release-notes page, French legal codes with a 287 KB HTML-table annex, Wikipedia articles with BOMs inside,
FAQ pages with a 219 KB repeated-sentence paragraph, an 80 KB-line heritage report), in four configurations."""

from __future__ import annotations

import re

import pytest

from heritage_pipeline import chunk_text
from heritage_pipeline_eval.bench.chunker import find_blocks
from heritage_pipeline.chunking.params import params_for
from heritage_pipeline.chunking.chunker import resolve_config
from heritage_pipeline.core.text import decode_bytes, normalize

from heritage_pipeline_tests._chunk_checks import check_basic

CONFIGS = {
    "default": {},
    "cap700": {"size_tokens": 700, "overlap_ratio": 0.2, "max_tokens": 700},
    "sliding-small": {"mode": "sliding", "size_tokens": 300, "max_tokens": 400, "min_tokens": 100, "overlap_ratio": 0.3},
    "hierarchical": {"mode": "hierarchical"},
}
_WS = re.compile(r"\s+")
_TABLE_NOISE = re.compile(r"[\s|:\-]+")


@pytest.fixture(scope="module")
def corpus(shared_data):
    files = sorted(shared_data.rglob("*.md"))
    assert len(files) > 1000
    return [(str(f.relative_to(shared_data)), decode_bytes(f.read_bytes(), name=str(f)).text) for f in files]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_real_markdown_file(corpus, tokenizer, name):
    cfg = resolve_config(**CONFIGS[name])
    cap = cfg.quality.length.max_tokens
    budget = params_for(cfg).overlap_tokens
    n_chunks = cut = overlapping = continuing = 0
    for path, raw in corpus:
        chunks = chunk_text(raw, config=cfg, doc_id=path)
        n_chunks += len(chunks)
        check_basic(raw, chunks, tokenizer, cap, name=path)
        # fitting fenced code blocks and tables (found by the benchmark's independent detector) are never cut
        code, tables = find_blocks(raw)
        for items, norm in ((code, lambda s: _WS.sub("", s)), (tables, lambda s: _TABLE_NOISE.sub("", s))):
            if not items:
                continue
            texts = [norm(c.text) for c in chunks]
            for inner in items:
                key = norm(inner)
                if key and tokenizer.count(inner) <= cap and not any(key in t for t in texts):
                    cut += 1
        for a, b in zip(chunks, chunks[1:]):
            if b.char_start < a.char_end:
                overlapping += 1
                shared = tokenizer.count(normalize(raw[b.char_start : a.char_end]))
                assert shared <= budget, f"{path}: {b.id} repeats {shared} tokens of {a.id}, budget {budget}"
            if a.id.rsplit("#", 1)[0] == b.id.rsplit("#", 1)[0] and not b.text.startswith("#"):
                continuing += 1
    assert cut == 0, f"{cut} fitting code blocks or tables were cut"
    assert n_chunks > 1000
    # real overlap: almost every window that continues a section repeats the end of the previous one (exceptions:
    # the previous window ends with an atomic block larger than the overlap budget)
    assert continuing > 100 and overlapping >= 0.9 * continuing, (overlapping, continuing)


def test_whole_corpus_is_deterministic(corpus):
    cfg = resolve_config()
    sample = corpus[::25]
    first = [[c.model_dump_json() for c in chunk_text(raw, config=cfg, doc_id=p)] for p, raw in sample]
    second = [[c.model_dump_json() for c in chunk_text(raw, config=cfg, doc_id=p)] for p, raw in sample]
    assert first == second
