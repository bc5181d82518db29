"""LanceDB index: schema, upsert by chunk id, exact partition replacement, filters, language-aware BM25, fusion."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from heritage_pipeline.chunking.chunker import chunk_text
from heritage_pipeline.index.schema import FILTER_COLUMNS, chunk_rows, index_schema
from heritage_pipeline.index.search import WeightedRRFReranker, search, search_table
from heritage_pipeline.index.writer import open_table, write_partitions

DIM = 8


def _chunks(doc_id: str, lang: str, paragraphs: list[str], **meta):
    text = "# " + doc_id + "\n\n" + "\n\n".join(paragraphs)
    out = chunk_text(text, doc_id=doc_id, source_path=f"{doc_id}.md", lang=lang, mode="hierarchical")
    for c in out:
        c.meta.lang = lang
        c.meta.language = lang
        for k, v in meta.items():
            setattr(c.meta, k, v)
    return out


def _vecs(n: int, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _ids(uri: str) -> dict[str, set[str]]:
    t = open_table(uri, "chunks").to_arrow()
    out: dict[str, set[str]] = {}
    for pid, cid in zip(t["partition"].to_pylist(), t["id"].to_pylist()):
        out.setdefault(pid, set()).add(cid)
    return out


def test_schema_has_every_filter_column_and_model_metadata():
    schema = index_schema(DIM, ["fr"], "m")
    for col in FILTER_COLUMNS + ("id", "text", "search_text", "vector", "section_emb", "anchors", "record", "search_text_fr"):
        assert col in schema.names
    assert schema.field("vector").type == pa.list_(pa.float32(), DIM)
    assert schema.metadata[b"embedding_model"] == b"m"


def test_chunk_rows_rejects_vector_count_mismatch():
    chunks = _chunks("a", "en", ["one paragraph"])
    with pytest.raises(ValueError, match="vectors"):
        chunk_rows(chunks, _vecs(len(chunks) + 1), "en|document")


def test_rematerialising_one_partition_replaces_exactly_its_rows(tmp_path):
    uri = str(tmp_path / "db")
    a = _chunks("doc-a", "en", ["alpha text"]) + _chunks("doc-a2", "en", ["second alpha document"])
    b = _chunks("doc-b", "fr", ["texte bravo"])
    write_partitions(uri, "chunks", {"en|document": chunk_rows(a, _vecs(len(a)), "en|document"),
                                     "fr|document": chunk_rows(b, _vecs(len(b), 1), "fr|document")})
    before = _ids(uri)
    assert before["en|document"] == {c.id for c in a} and before["fr|document"] == {c.id for c in b}
    # doc-a2 was deleted upstream, doc-a changed text, doc-a3 is new
    a_new = _chunks("doc-a", "en", ["alpha text, edited"]) + _chunks("doc-a3", "en", ["a new document"])
    stats = write_partitions(uri, "chunks", {"en|document": chunk_rows(a_new, _vecs(len(a_new), 2), "en|document")})
    after = _ids(uri)
    assert after["en|document"] == {c.id for c in a_new}  # stale rows of deleted chunks are gone
    assert after["fr|document"] == before["fr|document"]  # the other partition is untouched
    assert stats.deleted == len([c for c in a if c.id not in {x.id for x in a_new}])
    assert stats.updated == len({c.id for c in a} & {c.id for c in a_new})
    t = open_table(uri, "chunks").to_arrow().to_pylist()
    edited = [r for r in t if r["doc_id"] == "doc-a"]
    assert all("edited" in r["text"] for r in edited)  # upserted by id: the row holds the new text
    assert len({r["id"] for r in t}) == len(t)  # ids stay unique


def test_empty_partition_and_drop_missing(tmp_path):
    uri = str(tmp_path / "db")
    a = _chunks("doc-a", "en", ["alpha"])
    b = _chunks("doc-b", "en", ["bravo"])
    write_partitions(uri, "chunks", {"en|document": chunk_rows(a, _vecs(1), "en|document"),
                                     "en|website": chunk_rows(b, _vecs(1), "en|website")})
    write_partitions(uri, "chunks", {"en|website": pa.table({})})
    assert set(_ids(uri)) == {"en|document"}
    write_partitions(uri, "chunks", {"en|website": chunk_rows(b, _vecs(1), "en|website")}, drop_missing=True)
    assert set(_ids(uri)) == {"en|website"}


def test_changed_embedding_model_needs_a_full_rebuild(tmp_path):
    uri = str(tmp_path / "db")
    a = _chunks("doc-a", "en", ["alpha"])
    write_partitions(uri, "chunks", {"p": chunk_rows(a, _vecs(1), "p", embedding_model="m1")})
    other = chunk_rows(a, np.ones((1, DIM + 1), np.float32) / 3, "q", embedding_model="m2")
    with pytest.raises(ValueError, match="re-materialise every partition"):
        write_partitions(uri, "chunks", {"q": other})
    write_partitions(uri, "chunks", {"q": other}, drop_missing=True)
    assert open_table(uri, "chunks").schema.metadata[b"embedding_model"] == b"m2"


def test_new_language_adds_a_stemmed_column(tmp_path):
    uri = str(tmp_path / "db")
    en = _chunks("doc-en", "en", ["The archives were catalogued"])
    write_partitions(uri, "chunks", {"en|document": chunk_rows(en, _vecs(1), "en|document")})
    fr = _chunks("doc-fr", "fr", ["Les bibliothèques municipales conservent les manuscrits"])
    write_partitions(uri, "chunks", {"fr|document": chunk_rows(fr, _vecs(1, 3), "fr|document")})
    tbl = open_table(uri, "chunks")
    assert {"search_text_en", "search_text_fr"} <= set(tbl.schema.names)
    # stemming: "bibliothèque" (singular, accented) finds "bibliothèques" only through the French index
    hits = search_table(tbl, "bibliotheque manuscrit", mode="fts", fts_lang="fr", k=5)
    assert [h["doc_id"] for h in hits] == ["doc-fr"]
    assert search_table(tbl, "bibliotheque manuscrit", mode="fts", k=5) == []  # neutral index: no stemming


def test_filters_and_fts_stop_words_only_query(tmp_path):
    uri = str(tmp_path / "db")
    a = _chunks("museum", "en", ["The museum holds paintings"], custodian_type="M", country_code="NL",
                data_tier="TIER_1_AUTHORITATIVE")
    b = _chunks("library", "en", ["The library holds paintings too"], custodian_type="L", country_code="FR")
    write_partitions(uri, "chunks", {"en|document": chunk_rows(a + b, _vecs(2), "en|document")})
    tbl = open_table(uri, "chunks")
    assert {h["doc_id"] for h in search_table(tbl, "paintings", mode="fts", k=5)} == {"museum", "library"}
    for f, expect in [({"custodian_type": "M"}, "museum"), ({"country_code": "FR"}, "library"),
                      ({"data_tier": "TIER_1_AUTHORITATIVE"}, "museum")]:
        assert [h["doc_id"] for h in search_table(tbl, "paintings", mode="fts", k=5, filters=f)] == [expect]
    assert search_table(tbl, "the of", mode="fts", fts_lang="en", k=5) == []
    with pytest.raises(ValueError, match="unknown filter"):
        search_table(tbl, "x", mode="fts", filters={"colour": "red"})


def test_hybrid_search_fuses_and_checks_the_embedder(tmp_path):
    uri = str(tmp_path / "db")
    chunks = _chunks("d1", "en", ["apples and pears"]) + _chunks("d2", "en", ["ships and harbours"])
    vecs = _vecs(2, 5)
    write_partitions(uri, "chunks", {"en|document": chunk_rows(chunks, vecs, "en|document", embedding_model="fake")})

    class Fake:
        model_id = "fake"

        def embed_query(self, text):
            return vecs[1]  # points at d2

    hits = search(uri, "chunks", "apples", mode="hybrid", k=2, embedder=Fake())
    assert {h["doc_id"] for h in hits} == {"d1", "d2"}  # one from BM25, one from the vector list
    # d1: BM25 rank 1 + vector rank 2; d2: vector rank 1 only (RRF, k = 60)
    assert [h["doc_id"] for h in hits] == ["d1", "d2"]
    assert [h["score"] for h in hits] == pytest.approx([1 / 61 + 1 / 62, 1 / 61])
    favour_vectors = search(uri, "chunks", "apples", mode="hybrid", k=2, embedder=Fake(), fts_weight=0.0)
    assert [h["doc_id"] for h in favour_vectors] == ["d2", "d1"]
    vec_only = search(uri, "chunks", "apples", mode="vector", k=1, embedder=Fake())
    assert vec_only[0]["doc_id"] == "d2" and vec_only[0]["score"] == pytest.approx(1.0, abs=1e-5)
    Fake.model_id = "other"
    with pytest.raises(ValueError, match="built with fake"):
        search(uri, "chunks", "apples", mode="hybrid", embedder=Fake())


def test_weighted_rrf_formula():
    r = WeightedRRFReranker(k=10, vector_weight=2.0, fts_weight=1.0)
    vec = pa.table({"_rowid": pa.array([1, 2], pa.uint64()), "id": ["a", "b"], "_distance": pa.array([0.1, 0.2], pa.float32())})
    fts = pa.table({"_rowid": pa.array([2, 3], pa.uint64()), "id": ["b", "c"], "_score": pa.array([5.0, 4.0], pa.float32())})
    out = r.rerank_hybrid("q", vec, fts).to_pylist()
    got = {row["id"]: row["_relevance_score"] for row in out}
    assert got == pytest.approx({"a": 2 / 11, "b": 2 / 12 + 1 / 11, "c": 1 / 12})
    assert [row["id"] for row in out] == ["b", "a", "c"]


def test_missing_index_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no LanceDB table"):
        search(str(tmp_path / "none"), "chunks", "q", mode="fts")


def test_search_command_prints_ranked_hits_and_json(tmp_path, capsys):
    """`heritage-pipeline search` on an index built with the configured embedder (multilingual USE)."""
    import json

    from heritage_pipeline.cli import main
    from heritage_pipeline.core.config import load_pipeline_config
    from heritage_pipeline.embed.embedders import make_embedder

    emb = make_embedder(load_pipeline_config().embedder)
    chunks = (_chunks("musee", "fr", ["Le musée municipal conserve des peintures flamandes."], custodian_type="M")
              + _chunks("gare", "fr", ["La gare accueille des trains régionaux."]))
    for c in chunks:
        c.meta.embedding_model = emb.model_id
    vecs, _ = emb.embed_passages([c.embedding_text() for c in chunks])
    write_partitions(str(tmp_path / "lancedb"), "chunks", {"fr|document": chunk_rows(chunks, vecs, "fr|document")})
    assert main(["search", "peintures du musée", "--out", str(tmp_path), "--lang", "fr", "--json", "--k", "2"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["meta"]["doc_id"] == "musee" and hits[0]["score"] > hits[1]["score"]
    assert {"id", "score", "rank", "tier", "text", "spans", "source_url", "lang", "source_type", "meta"} <= set(hits[0])
    assert hits[0]["spans"] == {"char_start": chunks[0].spans.char_start, "char_end": chunks[0].spans.char_end}
    assert hits[0]["meta"]["source_path"] == "musee.md" and "row_index" in hits[0]["meta"]
    assert main(["search", "peintures", "--out", str(tmp_path), "--mode", "fts", "--custodian-type", "M"]) == 0
    table = capsys.readouterr().out
    assert "musee" in table and "gare" not in table
    assert main(["search", "x", "--out", str(tmp_path / "missing")]) == 2


def test_chunk_rows_of_an_empty_partition_take_the_embedders_width():
    """An empty partition of a 512-d embedder (USE, the default) gets a 512-d vector column, not a guessed 384."""
    import numpy as np
    import pytest

    from heritage_pipeline.index.schema import chunk_rows

    table = chunk_rows([], np.zeros((0, 512), dtype=np.float32), "en|document")
    assert table.schema.field("vector").type.list_size == 512
    assert chunk_rows([], np.zeros(0, dtype=np.float32), "en|document", dim=384).schema.field("vector").type.list_size == 384
    with pytest.raises(ValueError, match="pass dim"):
        chunk_rows([], np.zeros(0, dtype=np.float32), "en|document")


_SEARCH_ALL_MODES = r"""
import sys
import numpy as np
sys.path.insert(0, sys.argv[2])
from heritage_pipeline_tests.index.test_index import _chunks, _vecs
from heritage_pipeline.index.schema import chunk_rows
from heritage_pipeline.index.search import search
from heritage_pipeline.index.writer import write_partitions

uri = sys.argv[1]
chunks = _chunks("d1", "en", ["apples and pears"]) + _chunks("d2", "en", ["ships and harbours"])
vecs = _vecs(2, 5)
write_partitions(uri, "chunks", {"en|document": chunk_rows(chunks, vecs, "en|document", embedding_model="fake")})

class Fake:
    model_id = "fake"
    def embed_query(self, text):
        return vecs[1]

for mode in ("fts", "vector", "hybrid"):
    hits = search(uri, "chunks", "apples", mode=mode, k=2, embedder=Fake())
    print(mode, [h["doc_id"] for h in hits])
"""


def test_searches_log_no_lance_deprecation(tmp_path):
    """Every search mode selects its score columns (or none at all in a hybrid query): with LanceDB's Rust log at
    ``warn``, not one "Deprecation warning ... _score / _distance" line (a run printed 1,800 of them)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "LANCEDB_LOG": "warn", "LANCE_LOG": "warn"}
    proc = subprocess.run([sys.executable, "-c", _SEARCH_ALL_MODES, str(tmp_path / "db"), str(root)], env=env,
                          capture_output=True, text=True, timeout=300, cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["fts ['d1']", "vector ['d2', 'd1']", "hybrid ['d1', 'd2']"]
    assert "Deprecation" not in proc.stderr and "_distance" not in proc.stderr, proc.stderr
