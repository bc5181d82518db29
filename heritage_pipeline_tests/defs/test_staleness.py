"""Config-driven staleness: a chunking.yaml edit marks exactly the assets it shapes unsynced, an edited raw file marks
its partition's downstream unsynced, and backfilling the partition makes everything fresh again.

Statuses come from Dagster's ``CachingStaleStatusResolver`` (what the UI's "Unsynced" label and GraphQL
``staleStatus`` use), built through Dagster's own test helper.
"""

from __future__ import annotations

import subprocess
import sys

import dagster as dg
import pytest
from dagster._utils.test.data_versions import get_stale_status_resolver

from heritage_pipeline_tests.ops_fixtures import (HANDWRITTEN_PATH, make_project, materialize_index,
    materialize_partition, metadata, register_languages)

PARTITIONED = ["raw_sources", "parsed_sections", "chunks", "enriched_chunks", "deduped_chunks", "embedded_chunks"]


def statuses(instance, defs, partition: str) -> dict[str, str]:
    resolver = get_stale_status_resolver(instance, list(defs.assets))
    out = {k: resolver.get_status(dg.AssetKey(k), partition).value for k in PARTITIONED}
    out["lancedb_index"] = resolver.get_status(dg.AssetKey("lancedb_index")).value
    return out


def causes(instance, defs, asset: str, partition: str | None) -> list[str]:
    resolver = get_stale_status_resolver(instance, list(defs.assets))
    return [c.reason for c in resolver.get_stale_causes(dg.AssetKey(asset), partition)]


FRESH = dict.fromkeys(PARTITIONED + ["lancedb_index"], "FRESH")


@pytest.fixture()
def project(tmp_path):
    # two partitions: en|document (a hand-written page) and en|yaml_instance (a real bundled instance)
    return make_project(tmp_path, files={"raw/yaml_instance/kb.yaml": "raw/yaml_instance/koninklijke_bibliotheek.yaml"})


def test_config_edit_marks_exactly_the_affected_assets_unsynced_and_a_partition_backfill_clears_it(project):
    defs = project.definitions()
    with dg.instance_for_test(temp_dir=str(project.home)) as instance:
        parts = register_languages(instance, project)
        assert parts == [("document", "en"), ("yaml_instance", "en")]
        for part in parts:
            materialize_partition(defs, instance, *part)
        materialize_index(defs, instance)
        assert statuses(instance, defs, "en|document") == FRESH

        project.set_chunking("sliding_window.size_tokens", 400)
        reloaded = project.definitions()  # what "Reload" in the UI does: the code location is rebuilt
        for partition in ("en|document", "en|yaml_instance"):
            assert statuses(instance, reloaded, partition) == {**FRESH, "chunks": "STALE"}
            assert causes(instance, reloaded, "chunks", partition) == ["has a new code version"]

        # backfill one partition: chunks and everything downstream of it in that partition
        res = materialize_partition(reloaded, instance, "document", "en",
                                    selection=["chunks", "enriched_chunks", "deduped_chunks", "embedded_chunks"])
        assert metadata(res, "chunks")["reused"] is False  # recomputed with the new size, not served from storage
        assert statuses(instance, reloaded, "en|document") == {**FRESH, "lancedb_index": "STALE"}
        assert "has a new dependency data version" in causes(instance, reloaded, "lancedb_index", None)
        assert statuses(instance, reloaded, "en|yaml_instance")["chunks"] == "STALE"  # the other partition waits
        materialize_index(reloaded, instance)
        assert statuses(instance, reloaded, "en|document") == FRESH

        # reverting the edit marks chunks unsynced again (the code version is the config's hash, not a counter)
        project.set_chunking("sliding_window.size_tokens", 700)
        assert statuses(instance, project.definitions(), "en|document")["chunks"] == "STALE"


def test_an_edited_raw_file_marks_its_partition_stale_and_an_unchanged_one_does_not(tmp_path):
    project = make_project(tmp_path, files={})
    defs = project.definitions()
    with dg.instance_for_test(temp_dir=str(project.home)) as instance:
        parts = register_languages(instance, project)
        for part in parts:
            materialize_partition(defs, instance, *part)
        materialize_index(defs, instance)

        # re-materialising raw_sources over unchanged files keeps the data version: nothing becomes unsynced
        for st, lang in parts:
            res = materialize_partition(defs, instance, st, lang, selection=["raw_sources"])
            assert metadata(res, "raw_sources")["changed"] is False
        assert statuses(instance, defs, "en|document") == FRESH

        path = project.data / HANDWRITTEN_PATH
        path.write_text(path.read_text() + "\n## Research help\n\nArchivists answer questions by e-mail within a week.\n")
        res = materialize_partition(defs, instance, "document", "en", selection=["raw_sources"])
        assert metadata(res, "raw_sources")["changed"] is True
        assert statuses(instance, defs, "en|document") == {**FRESH, "parsed_sections": "STALE", "deduped_chunks": "STALE"}
        assert causes(instance, defs, "parsed_sections", "en|document") == ["has a new dependency data version"]

        res = materialize_partition(defs, instance, "document", "en")
        assert metadata(res, "parsed_sections")["files_parsed_now"] == 1
        assert statuses(instance, defs, "en|document") == {**FRESH, "lancedb_index": "STALE"}
        materialize_index(defs, instance)
        assert statuses(instance, defs, "en|document") == FRESH


@pytest.mark.slow
def test_the_readme_backfill_command_materialises_one_partition(project):
    """The README's command for backfilling one partition after a config change, run as a user would."""
    defs = project.definitions()
    with dg.instance_for_test(temp_dir=str(project.home)) as instance:
        for part in register_languages(instance, project):
            materialize_partition(defs, instance, *part)
        materialize_index(defs, instance)
    project.set_chunking("sliding_window.size_tokens", 500)
    cmd = [sys.executable, "-m", "dagster", "asset", "materialize", "-m", "heritage_pipeline.definitions",
           "--select", "chunks,enriched_chunks,deduped_chunks,embedded_chunks", "--partition", "en|document"]
    proc = subprocess.run(cmd, env=project.env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with dg.instance_for_test(temp_dir=str(project.home)) as instance:
        reloaded = project.definitions()
        assert statuses(instance, reloaded, "en|document") == {**FRESH, "lancedb_index": "STALE"}
        assert statuses(instance, reloaded, "en|yaml_instance")["chunks"] == "STALE"


STALE_QUERY = """query($keys: [AssetKeyInput!], $partitions: [String!]) { assetNodes(assetKeys: $keys) {
    assetKey { path } staleStatusByPartition(partitions: $partitions) } }"""


@pytest.mark.slow
def test_graphql_shows_each_partition_unsynced_after_a_config_edit_and_reload(project, tmp_path):
    """What the UI shows, asked through Dagster's own GraphQL API (the webserver's schema, in a test workspace
    loaded out of process as the webserver loads it): after a chunking.yaml edit and a reload, ``chunks`` is STALE
    (Unsynced) in each materialised partition, the assets the edit does not shape stay FRESH in each."""
    from dagster_graphql.test.utils import define_out_of_process_context, execute_dagster_graphql

    defs = project.definitions()
    entry = tmp_path / "code_location.py"
    entry.write_text("from heritage_pipeline.definitions import build_definitions\n"
                     f"defs = build_definitions({str(project.chunking)!r}, {str(project.pipeline)!r})\n")
    partitions = ["en|document", "en|yaml_instance"]
    with dg.instance_for_test(temp_dir=str(project.home)) as instance:
        parts = register_languages(instance, project)
        for part in parts:
            materialize_partition(defs, instance, *part)
        project.set_chunking("sliding_window.size_tokens", 400)  # the edit; loading the location is the reload
        with define_out_of_process_context(str(entry), None, instance) as context:
            result = execute_dagster_graphql(context, STALE_QUERY, {"partitions": partitions,
                                                                    "keys": [{"path": [k]} for k in PARTITIONED]})
    assert not result.errors, result.errors
    by_asset = {"/".join(n["assetKey"]["path"]): n["staleStatusByPartition"] for n in result.data["assetNodes"]}
    assert by_asset["chunks"] == ["STALE", "STALE"]
    for asset in ("raw_sources", "parsed_sections", "enriched_chunks", "deduped_chunks", "embedded_chunks"):
        assert by_asset[asset] == ["FRESH", "FRESH"], asset  # (downstream: stale only once chunks is re-materialised)


def _gazetteer_status(instance, defs) -> str:
    return get_stale_status_resolver(instance, list(defs.assets)).get_status(dg.AssetKey("gazetteer")).value


def test_a_registry_edit_makes_the_other_partitions_enriched_chunks_stale_through_the_gazetteer(project):
    """The gazetteer is an asset built from the parsed registry / LinkML partitions, upstream of every partition's
    enriched_chunks: renaming an institution in a LinkML instance shows the document partition's enriched_chunks
    unsynced (its mentions resolve against the old name) once the gazetteer is rebuilt; an edit that changes no
    gazetteer field (a description) leaves it fresh. The stored gazetteer is the one the plain function builds from
    the same files (the ``chunk`` command's route)."""
    from heritage_pipeline.core.storage import OutputLayout
    from heritage_pipeline.enrich.gazetteer import default_gazetteer, gazetteer_to_json

    from heritage_pipeline_tests.ops_fixtures import materialize_gazetteer

    defs = project.definitions()
    stored = OutputLayout(project.out).gazetteer
    with dg.instance_for_test(temp_dir=str(project.home)) as instance:
        parts = register_languages(instance, project)
        for part in parts:
            materialize_partition(defs, instance, *part)
        assert statuses(instance, defs, "en|document")["enriched_chunks"] == "FRESH"
        assert _gazetteer_status(instance, defs) == "FRESH"
        assert stored.read_text(encoding="utf-8") == gazetteer_to_json(default_gazetteer(base=project.data))
        assert "Koninklijke Bibliotheek" in stored.read_text(encoding="utf-8")

        kb = project.data / "raw/yaml_instance/kb.yaml"
        text = kb.read_text(encoding="utf-8")
        # 1. a description edit: the registry partition changes, the gazetteer's content does not
        kb.write_text(text.replace("runs\n  Delpher", "runs\n  the Delpher"), encoding="utf-8")
        materialize_partition(defs, instance, "yaml_instance", "en", selection=["raw_sources", "parsed_sections"])
        assert _gazetteer_status(instance, defs) == "STALE"
        res = materialize_gazetteer(defs, instance)
        assert res.success
        assert _gazetteer_status(instance, defs) == "FRESH"
        assert statuses(instance, defs, "en|document")["enriched_chunks"] == "FRESH"

        # 2. a renamed institution: the gazetteer changes, every partition's enriched_chunks is unsynced
        kb.write_text(text.replace("preferred_label: Koninklijke Bibliotheek",
                                   "preferred_label: Nationale Bibliotheek van Nederland"), encoding="utf-8")
        materialize_partition(defs, instance, "yaml_instance", "en", selection=["raw_sources", "parsed_sections"])
        materialize_gazetteer(defs, instance)
        assert statuses(instance, defs, "en|document")["enriched_chunks"] == "STALE"
        assert "has a new dependency data version" in causes(instance, defs, "enriched_chunks", "en|document")
        assert "Nationale Bibliotheek van Nederland" in stored.read_text(encoding="utf-8")
        assert stored.read_text(encoding="utf-8") == gazetteer_to_json(default_gazetteer(base=project.data))
        res = materialize_partition(defs, instance, "document", "en")
        assert metadata(res, "enriched_chunks")["reused"] is False
        assert statuses(instance, defs, "en|document")["enriched_chunks"] == "FRESH"
