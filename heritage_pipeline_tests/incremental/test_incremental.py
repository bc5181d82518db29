"""Incremental runs: versions, reuse of unchanged outputs and rows, and partition-level index syncs.

The end-to-end property: materialising after an edit gives exactly what a cold run over the edited data gives,
while redoing only the work the edit requires.
"""

from __future__ import annotations

import shutil

import dagster as dg
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heritage_pipeline.incremental.versions import (ROW_KEY, add_row_keys, chained_version, digest, module_closure,
    read_if_version, reusable_rows, source_hash, stored_versions, with_versions)
from heritage_pipeline.core.models import table_to_chunks
from heritage_pipeline.index.schema import index_schema
from heritage_pipeline.index.writer import (indexed_partition_versions, indexed_partitions, sync_partitions,
    write_partitions)

from heritage_pipeline_tests.ops_fixtures import (HANDWRITTEN_PATH, index_rows, make_project, materialize_index,
    materialize_partition, metadata, register_languages)


# ----------------------------------------------------------------------------------------------- versions, rows
def test_digest_separates_parts_and_chained_versions_ignore_input_order():
    assert digest("ab", "c") != digest("a", "bc")
    a, b = (with_versions(pa.table({"x": [i]}), f"v{i}", "c") for i in (1, 2))
    assert chained_version("chunks", "cv", [a, b]) == chained_version("chunks", "cv", [b, a])
    assert chained_version("chunks", "cv", [a]) != chained_version("chunks", "cv2", [a])
    assert chained_version("chunks", "cv", [a]) != chained_version("enriched_chunks", "cv", [a])
    assert chained_version("chunks", "cv", [pa.table({"x": [1]})]) is None  # unversioned input: never reuse


def test_source_hash_follows_imports_and_extra_files(tmp_path):
    closure = {p.relative_to(p.parents[1]).as_posix() for p in module_closure("sources.dispatch")}
    assert {"sources/dispatch.py", "sources/markdown.py", "sources/html.py", "core/structure.py", "core/text.py",
            "sources/registry.py"} <= closure
    # (embed/embedders.py is in it: the optional zero-shot section typing of websites embeds with the pipeline's model)
    assert "embed/embedders.py" in closure and "dedup/minhash.py" not in closure
    extra = tmp_path / "mappings.yaml"
    extra.write_text("a: 1\n")
    h1 = source_hash("chunking", files=[extra])
    extra.write_text("a: 2\n")
    assert source_hash("chunking", files=[extra]) != h1
    assert source_hash("chunking") == source_hash("chunking")


@given(previous=st.lists(st.sampled_from("abcdefg"), max_size=20), wanted=st.lists(st.sampled_from("abcdxyz"), max_size=10))
def test_reusable_rows_returns_every_previous_row_of_each_wanted_key(previous, wanted):
    table = add_row_keys(pa.table({"i": list(range(len(previous)))}), previous)
    got = reusable_rows(table, wanted)
    assert set(got) == set(wanted) & set(previous)
    for k, rows in got.items():
        assert rows == [i for i, p in enumerate(previous) if p == k]
    assert reusable_rows(pa.table({"i": [1]}), wanted) == {}  # no key column: nothing reusable
    assert reusable_rows(None, wanted) == {}


def test_stored_versions_read_the_footer_and_a_corrupt_file_is_not_reused(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(with_versions(pa.table({"x": [1, 2]}), "dv", "cv"), path)
    assert stored_versions(path) == ("dv", "cv")
    assert read_if_version(path, "dv").num_rows == 2 and read_if_version(path, "other") is None
    path.write_bytes(path.read_bytes()[:40])  # truncated
    assert stored_versions(path) == (None, None) and read_if_version(path, "dv") is None
    assert stored_versions(tmp_path / "missing.parquet") == (None, None)


# ------------------------------------------------------------------------------------------------- index syncs
DIM = 8


def _rows(partition: str, ids: list[str], tag: str) -> pa.Table:
    n = len(ids)
    rng = np.random.default_rng(abs(hash((partition, tag))) % 2**32)
    vec = rng.random((n, DIM), dtype=np.float32)
    cols = {name: [None] * n for name in index_schema(DIM).names}
    cols.update({"id": ids, "partition": [partition] * n, "text": [f"{tag} text of {i}" for i in ids],
                 "vector": pa.FixedSizeListArray.from_arrays(pa.array(vec.reshape(-1)), DIM),
                 "record": [tag] * n, "source_type": [partition.split("|")[1]] * n, "language": [partition.split("|")[0]] * n})
    return pa.table(cols, schema=index_schema(DIM))


OPS = st.lists(st.tuples(st.sampled_from(["en|document", "nl|csv_registry", "fr|website"]),
                         st.sets(st.integers(0, 12), max_size=8), st.booleans()), min_size=1, max_size=5)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_sync_replaces_exactly_the_given_partitions(tmp_path_factory, ops):
    """After any sequence of partition replacements and removals the index holds exactly the latest rows of every
    partition, each id once, and records the version of each."""
    uri = str(tmp_path_factory.mktemp("ix"))
    model: dict[str, list[str]] = {}
    versions: dict[str, str] = {}
    table_exists = False
    for step, (part, ids, remove) in enumerate(ops):
        if remove and part in model:
            sync_partitions(uri, "chunks", {}, remove=[part])
            model.pop(part)
            versions.pop(part, None)
            continue
        names = sorted(f"{part.split('|')[1]}-{i}" for i in ids)
        sync_partitions(uri, "chunks", {part: _rows(part, names, f"v{step}")}, {part: f"v{step}"})
        model[part] = names
        table_exists = table_exists or bool(names)
        if table_exists:  # before the first row there is no table to record a version in
            versions[part] = f"v{step}"
    rows = index_rows(uri)
    assert [r["id"] for r in rows] == sorted(i for ids in model.values() for i in ids)
    for r in rows:
        assert r["record"] == versions[r["partition"]]
    if rows:
        assert indexed_partition_versions(uri, "chunks") == versions
        assert indexed_partitions(uri, "chunks") == {k: len(v) for k, v in model.items() if v}


def test_sync_is_one_commit_and_rejects_an_id_in_two_partitions(tmp_path):
    import lancedb

    uri = str(tmp_path)
    sync_partitions(uri, "chunks", {"en|document": _rows("en|document", ["a", "b"], "v1")}, {"en|document": "v1"})
    tbl = lancedb.connect(uri).open_table("chunks")
    before = tbl.version
    sync_partitions(uri, "chunks", {"en|document": _rows("en|document", ["b", "c"], "v2")}, {"en|document": "v2"})
    tbl = lancedb.connect(uri).open_table("chunks")
    # the data commit is the first one after `before`: checking it out shows the whole new partition, never a half
    tbl.checkout(before + 1)
    assert sorted(tbl.to_arrow().column("id").to_pylist()) == ["b", "c"]
    with pytest.raises(ValueError, match="chunk id 'x' is in partitions"):
        sync_partitions(uri, "chunks", {"en|document": _rows("en|document", ["x"], "v3"),
                                        "nl|csv_registry": _rows("nl|csv_registry", ["x"], "v3")})
    # the legacy entry point keeps its meaning (drop_missing removes the partitions not given)
    write_partitions(uri, "chunks", {"nl|csv_registry": _rows("nl|csv_registry", ["n1"], "v4")}, drop_missing=True)
    assert [r["id"] for r in index_rows(uri)] == ["n1"]


def test_sync_rejects_an_id_indexed_under_another_partition(tmp_path):
    """merge_insert on id would silently move a row between partitions: the sync refuses and names both."""
    uri = str(tmp_path)
    sync_partitions(uri, "chunks", {"en|document": _rows("en|document", ["a", "b"], "v1")}, {"en|document": "v1"})
    with pytest.raises(ValueError, match=r"chunk id 'b' is in partitions en\|document \(indexed\) and fr\|document"):
        sync_partitions(uri, "chunks", {"fr|document": _rows("fr|document", ["b", "c"], "v1")}, {"fr|document": "v1"})
    assert sorted(r["id"] for r in index_rows(uri)) == ["a", "b"]  # nothing written
    # moving the file is fine once both partitions are synced together
    sync_partitions(uri, "chunks", {"en|document": _rows("en|document", ["a"], "v2"),
                                    "fr|document": _rows("fr|document", ["b", "c"], "v2")})
    assert {r["id"]: r["partition"] for r in index_rows(uri)} == {"a": "en|document", "b": "fr|document", "c": "fr|document"}


def test_enrichment_keys_follow_the_coreference_context():
    """An edited chunk re-enriches its whole document (mentions resolve across it); a registry row only itself."""
    from heritage_pipeline.incremental.enrichment import enrichment_keys
    from heritage_pipeline.core.models import Chunk

    def chunk(cid: str, doc: str, st_: str, text: str) -> Chunk:
        return Chunk.model_validate({"id": cid, "text": text, "meta": {"doc_id": doc, "source_type": st_,
                                                                      "source_path": doc, "source_id": doc},
                                     "spans": {"char_start": 0, "char_end": len(text)}})

    items = [chunk("d#0", "d", "document", "The Rijksmuseum opened."), chunk("d#1", "d", "document", "The museum..."),
             chunk("e#0", "e", "document", "Other."), chunk("r#0", "r", "csv_registry", "row 0"),
             chunk("r#1", "r", "csv_registry", "row 1")]
    before = enrichment_keys(items, [c.model_dump_json() for c in items])
    items[1] = chunk("d#1", "d", "document", "The museum, edited.")
    items[4] = chunk("r#1", "r", "csv_registry", "row 1, edited")
    after = enrichment_keys(items, [c.model_dump_json() for c in items])
    changed = [c.id for c, a, b in zip(items, before, after) if a != b]
    assert changed == ["d#0", "d#1", "r#1"]
    assert len(set(after)) == len(after)


# ---------------------------------------------------------------------------------------------- end to end
def _tables(project, partition: str) -> dict[str, pa.Table]:
    lang, st_ = partition.split("|")
    return {a: pq.read_table(project.out / "storage" / a / lang / f"{st_}.parquet")
            for a in ("parsed_sections", "chunks", "enriched_chunks", "embedded_chunks")}


def _comparable(t: pa.Table) -> list[tuple]:
    cols = [c for c in ("id", "text", "record", "doc_id", "source_path") if c in t.column_names]
    return sorted(zip(*(t.column(c).to_pylist() for c in cols)))


SECOND_PAGE = """# Using the library

## Borrowing

Members may borrow up to ten books at a time for three weeks. Loans can be renewed twice online, unless another
reader has reserved the book. Rare books, maps and newspapers are for reading-room use only.
"""


def test_one_edited_file_redoes_only_its_work_and_matches_a_cold_run(tmp_path):
    extra = {HANDWRITTEN_PATH: None, "raw/document/library.md": SECOND_PAGE}
    from heritage_pipeline_tests.ops_fixtures import HANDWRITTEN_MD

    extra[HANDWRITTEN_PATH] = HANDWRITTEN_MD
    project = make_project(tmp_path / "inc", files={}, extra=extra)
    defs = project.definitions()
    with dg.instance_for_test(temp_dir=str(project.home)) as instance:
        (part,) = register_languages(instance, project)
        assert part == ("document", "en")
        first = materialize_partition(defs, instance, *part)
        n_first = metadata(first, "enriched_chunks")["dagster/row_count"]
        assert metadata(first, "parsed_sections")["files_parsed_now"] == 2
        materialize_index(defs, instance)
        before = _tables(project, "en|document")

        page = project.data / "raw" / "document" / "library.md"
        page.write_text(page.read_text() + "\n## Opening hours\n\nThe library opens at ten on Saturdays.\n")
        second = materialize_partition(defs, instance, *part)
        assert metadata(second, "parsed_sections")["files_parsed_now"] == 1  # the other file's document is reused
        assert metadata(second, "parsed_sections")["files_reused"] == 1
        enriched = metadata(second, "enriched_chunks")
        changed_chunks = enriched["dagster/row_count"] - enriched["reused_rows"]
        assert enriched["enriched_now"] == changed_chunks
        assert 1 <= changed_chunks < enriched["dagster/row_count"]
        assert enriched["reused_rows"] >= 1 and n_first >= enriched["reused_rows"]
        assert metadata(second, "embedded_chunks")["embedded_now"] <= changed_chunks
        index = materialize_index(defs, instance)
        assert metadata(index, "lancedb_index")["partitions_rewritten"] == ["en|document"]
        after = _tables(project, "en|document")
        unchanged = [r for r in _comparable(before["chunks"]) if "city-archive" in r[0]]
        assert unchanged and set(unchanged) <= set(_comparable(after["chunks"]))

    # a cold run over the edited data gives byte-identical ids, texts and records, and the same index
    cold = make_project(tmp_path / "cold", files={}, extra={})
    shutil.copytree(project.data, cold.data, dirs_exist_ok=True)
    cdefs = cold.definitions()
    with dg.instance_for_test(temp_dir=str(cold.home)) as instance:
        register_languages(instance, cold)
        materialize_partition(cdefs, instance, *part)
        materialize_index(cdefs, instance)
    cold_tables = _tables(cold, "en|document")
    for asset in ("chunks", "enriched_chunks", "embedded_chunks"):
        assert _comparable(after[asset]) == _comparable(cold_tables[asset]), asset
    inc_rows, cold_rows = index_rows(project.out / "lancedb"), index_rows(cold.out / "lancedb")
    assert [(r["id"], r["text"], r["record"]) for r in inc_rows] == [(r["id"], r["text"], r["record"]) for r in cold_rows]
    np.testing.assert_allclose([r["vector"] for r in inc_rows], [r["vector"] for r in cold_rows], atol=1e-5)


REGISTRY = "naam_organisatie;postadres_plaats;ISIL-code\n{name};Gouda;NL-GdMG\n"
GOUDA_PAGE = """# Bezoek

## Collectie

Het Catharina Gasthuis toont schilderijen, zilver en aardewerk uit de stad. Het ligt achter de Sint-Janskerk en is
van dinsdag tot en met zondag open; de bibliotheek is op afspraak te bezoeken.
"""


def test_a_registry_rename_refreshes_mentions_everywhere_without_re_enriching(tmp_path):
    """Heritage mentions depend on the registries (another partition): renaming an institution changes the mentions
    found in documents; the document partition recomputes, reusing every enriched row and refreshing only mentions."""
    project = make_project(tmp_path, files={}, extra={"raw/csv_registry/musea.csv": REGISTRY.format(name="Catharina Gasthuis"),
                                                      "raw/document/gouda.md": GOUDA_PAGE})
    defs = project.definitions()
    doc = ("document", "nl")

    def mentions() -> set[str]:
        t = pq.read_table(project.out / "storage" / "enriched_chunks" / "nl" / "document.parquet")
        return {m for c in table_to_chunks(t) for m in c.meta.mentioned_entities}

    with dg.instance_for_test(temp_dir=str(project.home)) as instance:
        assert doc in register_languages(instance, project)
        materialize_partition(defs, instance, *doc)
        assert "Catharina Gasthuis" in mentions()  # known from the registry only (no type keyword in the name)
        unchanged = materialize_partition(defs, instance, *doc)
        assert metadata(unchanged, "enriched_chunks")["reused"] is True
        (project.data / "raw" / "csv_registry" / "musea.csv").write_text(REGISTRY.format(name="Museum Gouda"),
                                                                         encoding="utf-8")
        again = materialize_partition(defs, instance, *doc)
        enriched = metadata(again, "enriched_chunks")
        assert enriched["reused"] is False and enriched["enriched_now"] == 0
        assert enriched["mentions_refreshed"] == enriched["dagster/row_count"] > 0
        assert "Catharina Gasthuis" not in mentions()


def test_an_enrichment_config_change_reuses_chunks_and_recomputes_every_enriched_row(tmp_path):
    project = make_project(tmp_path, files={})
    with dg.instance_for_test(temp_dir=str(project.home)) as instance:
        (part,) = register_languages(instance, project)
        materialize_partition(project.definitions(), instance, *part)
        project.set_chunking("context.keywords.top_k", 3)
        res = materialize_partition(project.definitions(), instance, *part)
        for asset in ("parsed_sections", "chunks"):
            assert metadata(res, asset)["reused"] is True, asset
        enriched = metadata(res, "enriched_chunks")
        assert enriched["reused"] is False and enriched["reused_rows"] == 0
        assert enriched["enriched_now"] == enriched["dagster/row_count"] > 0
        table = pq.read_table(project.out / "storage" / "enriched_chunks" / "en" / "document.parquet")
        assert ROW_KEY in table.column_names
        import json

        assert all(len(json.loads(r)["meta"]["keywords"]) <= 3 for r in table.column("record").to_pylist())


def test_a_corrupt_stored_output_is_recomputed(tmp_path):
    project = make_project(tmp_path, files={})
    defs = project.definitions()
    with dg.instance_for_test(temp_dir=str(project.home)) as instance:
        (part,) = register_languages(instance, project)
        materialize_partition(defs, instance, *part)
        path = project.out / "storage" / "chunks" / "en" / "document.parquet"
        path.write_bytes(b"PAR1 not really parquet")
        res = materialize_partition(defs, instance, *part)
        assert metadata(res, "chunks")["reused"] is False
        assert pq.read_table(path).num_rows == metadata(res, "chunks")["dagster/row_count"] > 0
        assert metadata(res, "enriched_chunks")["reused"] is True  # same content again: downstream still reusable


def test_side_file_markers(tmp_path):
    """A side file counts as current only when it exists and its marker, written after it, names the version."""
    from heritage_pipeline.incremental.versions import is_current, write_text_atomic, write_version_marker

    f = tmp_path / "q" / "document.jsonl"
    assert not is_current(f, "v1")
    write_text_atomic(f, "line\n")
    assert not is_current(f, "v1")  # written, marker not yet: a crash here reads as out of date
    write_version_marker(f, "v1")
    assert is_current(f, "v1") and not is_current(f, "v2")
    f.unlink()
    assert not is_current(f, "v1")
    assert [p.name for p in f.parent.iterdir()] == ["document.jsonl.data_version"]  # no temporary file left
