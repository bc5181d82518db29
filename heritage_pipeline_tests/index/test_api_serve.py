"""The search API, `search --queries` batches, `serve` and the search path's imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from heritage_pipeline.index.schema import chunk_rows
from heritage_pipeline.index.writer import write_partitions

from .test_analysis import _chunk, _registry

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def out_dir(tmp_path):
    chunks = (_registry("reg.csv", 0, "Stadtmuseum", "Halle", "DE-M1", "M") + _registry("reg.csv", 1, "Uni", "Bonn", "DE-5", "L")
              + _chunk("page", "en", "# Visit\n\nOpening hours: Monday to Friday 9-17.\n\n" + "More words here. " * 300))
    v = np.random.default_rng(1).normal(size=(len(chunks), 8)).astype(np.float32)
    write_partitions(str(tmp_path / "lancedb"), "chunks", {"p": chunk_rows(chunks, v, "p", embedding_model="x")})
    return tmp_path


def _cfg(out_dir):
    from heritage_pipeline.core.config import load_pipeline_config

    return load_pipeline_config().with_paths(output_dir=out_dir)


def test_api_hits_carry_spans_meta_and_explain(out_dir):
    from heritage_pipeline import search

    hits = search("ISIL DE-5", mode="fts", k=3, pipeline_config=_cfg(out_dir), explain=True)
    h = hits[0]
    assert (h.meta["source_path"], h.meta["row_index"], h.tier, h.rank) == ("reg.csv-1.md", 1, "identifier", 1)
    assert h.spans["char_end"] > h.spans["char_start"] and h.explain["matched"] == "de-5"
    assert json.loads(json.dumps(h.to_dict()))["id"] == h.id


def test_scheme_prefixed_identifier_lower_case_codes_and_bad_arguments(out_dir):
    """Fresh-user trial: "ISIL:DE-14" got no identifier match, `--country-code de` matched nothing silently, k=-1
    returned the whole index and a blank query returned arbitrary hits."""
    from heritage_pipeline.index.api import Searcher

    s = Searcher(pipeline_config=_cfg(out_dir))
    h = s.search("ISIL:DE-5", mode="fts", k=3)[0]
    assert (h.meta["row_index"], h.tier) == (1, "identifier")
    assert [x.meta["row_index"] for x in s.search("Stadtmuseum", mode="fts", k=3, filters={"custodian_type": "m"})] == [0]
    for bad in ({"query": "   "}, {"query": "Halle", "k": 0}, {"query": "Halle", "k": -2}):
        with pytest.raises(ValueError, match="empty query|k must be at least 1"):
            s.search(bad["query"], mode="fts", k=bad.get("k", 5))


def test_parent_expansion_stays_in_the_section_and_budget(out_dir):
    from heritage_pipeline.index.api import Searcher

    s = Searcher(pipeline_config=_cfg(out_dir))
    hit = s.search("opening hours Monday", mode="fts", k=1, filters={"doc_id": "page"})[0]
    for budget in (0, hit.meta["len_tokens"], 10_000):
        sec = s.section(hit, budget)
        assert hit.id in sec["ids"] and sec["len_tokens"] <= max(budget, hit.meta["len_tokens"])
        assert sec["char_start"] <= hit.spans["char_start"] and sec["char_end"] >= hit.spans["char_end"]
    n_section = len(s.table.search().where("doc_id = 'page'").select(["id"]).limit(None).to_arrow())
    assert len(s.section(hit, 10_000)["ids"]) == n_section  # a large budget holds the whole section


def test_batch_queries_one_json_line_each_and_bad_lines_named(out_dir, tmp_path, capsys):
    from heritage_pipeline.cli import main

    qf = tmp_path / "q.jsonl"
    qf.write_text('{"id": "a", "query": "DE-M1"}\n\n{"id": "b", "query": "Halle museum", "filters": {"source_type": "csv_registry"}}\n'
                  'not json\n{"id": "d"}\n', encoding="utf-8")
    assert main(["search", "--queries", str(qf), "--out", str(out_dir), "--mode", "fts", "--no-server"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["id"] for x in lines] == ["a", "b", "4", "d"]
    assert lines[0]["hits"][0]["meta"]["row_index"] == 0 and lines[1]["hits"][0]["meta"]["settlement"] == "Halle"
    assert "q.jsonl:4: not JSON" in lines[2]["error"] and "q.jsonl:5" in lines[3]["error"]


def test_serve_answers_and_search_uses_it(out_dir, capsys):
    from heritage_pipeline.cli.serve import client_for, make_server, state_path
    from heritage_pipeline.index.api import Searcher

    cfg = _cfg(out_dir)
    s = Searcher(pipeline_config=cfg)
    srv = make_server(s)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        host, port = srv.server_address[:2]
        state_path(out_dir).write_text(json.dumps({"host": host, "port": port, "pid": os.getpid(), "uri": str(s.uri),
                                                   "table": "chunks"}))
        ask = client_for(out_dir, str(s.uri), "chunks")
        assert ask is not None
        hits = ask({"query": "DE-5", "k": 2, "mode": "fts"})
        assert hits[0]["meta"]["row_index"] == 1
        with pytest.raises(ValueError, match="unknown search mode"):
            ask({"query": "x", "mode": "nope"})
        assert client_for(out_dir, "/other/index", "chunks") is None  # another index's server is not used
        from heritage_pipeline.cli import main

        assert main(["search", "DE-5", "--out", str(out_dir), "--mode", "fts", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)[0]["meta"]["row_index"] == 1
        assert main(["search", "DE-5", "--out", str(out_dir), "--mode", "fts"]) == 0
        assert f"answered by heritage-pipeline serve at http://{host}:{port}" in capsys.readouterr().out
        assert main(["search", "DE-5", "--out", str(out_dir), "--mode", "fts", "--no-server"]) == 0
        assert "answered in-process" in capsys.readouterr().out
    finally:
        srv.shutdown()
        srv.server_close()
        state_path(out_dir).unlink()
    assert client_for(out_dir, str(s.uri), "chunks") is None  # no state file: in-process


def test_fts_search_imports_neither_torch_docling_nor_dagster(out_dir):
    code = ("import sys; from heritage_pipeline.cli import main; "
            f"rc = main(['search', 'DE-5', '--out', {str(out_dir)!r}, '--mode', 'fts', '--no-server']); "
            "bad = [m for m in ('torch', 'docling', 'dagster', 'sentence_transformers') if m in sys.modules]; "
            "print('HEAVY', bad); sys.exit(rc)")
    r = subprocess.run([sys.executable, "-W", "default", "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "HEAVY []" in r.stdout
    assert "Warning" not in r.stdout and "Warning" not in r.stderr  # no library warnings (LanceDB projection notes)


def test_paused_gc_restores_the_collector_and_freezes_what_it_loaded():
    import gc

    code = ("import gc; from heritage_pipeline.index.startup import paused_gc, import_lancedb\n"
            "assert gc.isenabled() and gc.get_freeze_count() == 0\n"
            "with paused_gc():\n    assert not gc.isenabled()\n    x = [[i] for i in range(1000)]\n"
            "assert gc.isenabled() and gc.get_freeze_count() >= 1000\n"
            "n = gc.get_freeze_count(); import_lancedb(); assert gc.get_freeze_count() > n + 10000\n"
            "gc.disable()\ntry:\n    with paused_gc():\n        raise KeyError\nexcept KeyError:\n    pass\n"
            "assert not gc.isenabled(); print('OK')")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "OK" in r.stdout, r.stderr
    assert gc.isenabled()  # this process untouched
