"""The nightly registry schedule: one run request per registered language, stable run keys, valid run config, and a
nightly run over unchanged registries that does (almost) nothing."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import dagster as dg
import pytest

from heritage_pipeline.defs.automation import PARTITIONED_KEYS, nightly_csv_registry

from heritage_pipeline_tests.ops_fixtures import (make_project, materialize_gazetteer, materialize_index, metadata,
    register_languages)

NIGHT = datetime(2026, 3, 14, 2, 0, tzinfo=timezone.utc)


@pytest.fixture()
def instance(tmp_path):
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as inst:
        yield inst


def _requests(instance, when=NIGHT):
    ctx = dg.build_schedule_context(instance=instance, scheduled_execution_time=when)
    return list(nightly_csv_registry(ctx))


def test_one_request_per_registered_language_with_stable_run_keys(tmp_path, instance):
    instance.add_dynamic_partitions("language", ["nl", "en", "fr"])
    reqs = _requests(instance)
    assert all(isinstance(r, dg.RunRequest) for r in reqs)
    # partition keys are "<language>|<source_type>": Dagster sorts the dimensions by name
    assert [r.partition_key for r in reqs] == ["en|csv_registry", "fr|csv_registry", "nl|csv_registry"]
    assert [r.run_key for r in reqs] == [f"20260314-{k}|csv_registry" for k in ("en", "fr", "nl")]
    for r in reqs:
        lang = r.partition_key.split("|")[0]
        assert r.tags["dagster/partition/source_type"] == "csv_registry" and r.tags["dagster/partition/language"] == lang
    # re-evaluating the same tick gives the same keys (the daemon then launches nothing twice); the next night differs
    assert [r.run_key for r in _requests(instance)] == [r.run_key for r in reqs]
    assert not {r.run_key for r in _requests(instance, NIGHT + timedelta(days=1))} & {r.run_key for r in reqs}
    # a language registered later is picked up by the next tick without a code change
    instance.add_dynamic_partitions("language", ["de"])
    assert "de|csv_registry" in [r.partition_key for r in _requests(instance)]


def test_requests_are_valid_for_the_ingest_job(tmp_path, instance):
    defs = make_project(tmp_path / "p", files={}, extra={}).definitions()
    instance.add_dynamic_partitions("language", ["nl"])
    job = defs.resolve_job_def("ingest_job")
    for r in _requests(instance):
        assert dg.validate_run_config(job, r.run_config)
        assert r.partition_key in job.partitions_def.get_partition_keys(dynamic_partitions_store=instance)


def test_no_language_registered_skips_with_a_reason(instance):
    (skip,) = _requests(instance)
    assert isinstance(skip, dg.SkipReason) and "no languages registered" in skip.skip_message


def test_nightly_runs_execute_and_an_unchanged_night_reuses_everything(tmp_path):
    """The schedule's run requests executed as the daemon would (one ingest_job run per request), then the index
    automation: the first night indexes the registries, a second night over unchanged files parses, enriches and
    embeds nothing, rewrites no Parquet file and does not request the index again; an edited registry does."""
    project = make_project(tmp_path, extra={})
    defs = project.definitions()
    job = defs.resolve_job_def("ingest_job")
    with dg.instance_for_test(temp_dir=str(project.home)) as instance:
        register_languages(instance, project)
        cursor = None

        def index_requested() -> int:
            nonlocal cursor
            res = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=cursor,
                                                    asset_selection=dg.AssetSelection.keys("lancedb_index"))
            cursor = res.cursor
            return res.get_num_requested(dg.AssetKey("lancedb_index"))

        assert index_requested() == 0
        materialize_gazetteer(defs, instance)  # what the first `heritage-pipeline run` does

        def night(when):
            results = {}
            for r in _requests(instance, when):
                res = job.execute_in_process(instance=instance, partition_key=r.partition_key, tags=r.tags,
                                             run_config=r.run_config)
                assert res.success
                results[r.partition_key] = res
            return results

        first = night(NIGHT)
        assert set(first) == {f"{lang}|csv_registry" for lang in instance.get_dynamic_partitions("language")}
        nl = metadata(first["nl|csv_registry"], "embedded_chunks")
        assert nl["dagster/row_count"] == 17 and nl["embedded_now"] == 17  # the 17 registry rows of the sample
        assert index_requested() == 1
        materialize_index(defs, instance)
        assert index_requested() == 0
        stored = [project.out / "storage" / a / "nl" / "csv_registry.parquet" for a in PARTITIONED_KEYS]
        assert all(p.exists() for p in stored)
        mtimes = [p.stat().st_mtime_ns for p in stored]

        second = night(NIGHT + timedelta(days=1))
        res = second["nl|csv_registry"]
        for asset in ("parsed_sections", "chunks", "enriched_chunks", "deduped_chunks", "embedded_chunks"):
            assert metadata(res, asset)["reused"] is True, asset
        assert metadata(res, "raw_sources")["changed"] is False
        assert metadata(res, "enriched_chunks")["enriched_now"] == 0
        assert metadata(res, "embedded_chunks")["embedded_now"] == 0
        assert [p.stat().st_mtime_ns for p in stored] == mtimes  # nothing rewritten
        assert all(e.passed for e in res.get_asset_check_evaluations())
        assert index_requested() == 0  # same data versions: nothing for the index to do

        registry = project.data / "raw" / "csv_registry" / "nl_erfgoedorganisaties_sample.csv"
        registry.write_bytes(registry.read_bytes() + _extra_row(registry))  # appended as an editor would: CRLF kept
        third = night(NIGHT + timedelta(days=2))["nl|csv_registry"]
        assert metadata(third, "raw_sources")["changed"] is True
        assert metadata(third, "embedded_chunks")["dagster/row_count"] == 18
        assert metadata(third, "enriched_chunks")["enriched_now"] == 1  # only the new row
        assert metadata(third, "embedded_chunks")["embedded_now"] == 1
        assert index_requested() == 1
        index = materialize_index(defs, instance)
        assert metadata(index, "lancedb_index")["partitions_rewritten"] == ["nl|csv_registry"]


def _extra_row(path) -> bytes:
    """One more registry row in the file's own separator and line ending."""
    data = path.read_bytes()
    header = data.split(b"\n", 1)[0].decode("utf-8-sig").rstrip("\r")
    sep = ";" if header.count(";") > header.count(",") else ","
    cells = ["Museum voor Incrementele Verwerking", "Utrecht"] + [""] * (len(header.split(sep)) - 2)
    newline = "\r\n" if b"\r\n" in data else "\n"
    return (sep.join(cells) + newline).encode("utf-8")
