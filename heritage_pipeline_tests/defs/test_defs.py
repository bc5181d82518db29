"""The Dagster definitions: graph, groups, kinds, partitions, checks, jobs, executors, IO manager, code versions."""

from __future__ import annotations

import os

import dagster as dg
import pyarrow as pa
import pytest

from heritage_pipeline.core.config import SOURCE_TYPES, load_chunking_config, load_pipeline_config
from heritage_pipeline.defs.io_managers import ParquetIOManager, partition_path
from heritage_pipeline.defs.versions import STAGES, code_versions
from heritage_pipeline.incremental.versions import table_versions, with_versions

from heritage_pipeline_tests.ops_fixtures import REPO, make_project

GRAPH = ["raw_sources", "parsed_sections", "chunks", "gazetteer", "enriched_chunks", "deduped_chunks", "embedded_chunks",
         "lancedb_index", "ablation_report"]
PARTITIONED = [k for k in GRAPH[:7] if k != "gazetteer"]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return make_project(tmp_path_factory.mktemp("defs"))


def test_definitions_load_with_the_nine_assets_in_graph_order(project):
    defs = project.definitions()
    dg.Definitions.validate_loadable(defs)
    graph = defs.resolve_asset_graph()
    assert [a.key.to_user_string() for a in defs.assets] == GRAPH
    for upstream, downstream in zip(PARTITIONED + GRAPH[7:], PARTITIONED[1:] + GRAPH[7:]):
        assert dg.AssetKey(upstream) in graph.get(dg.AssetKey(downstream)).parent_keys
    # the gazetteer: built from every parsed_sections partition, upstream of every enriched_chunks partition
    assert graph.get(dg.AssetKey("gazetteer")).parent_keys == {dg.AssetKey("parsed_sections")}
    assert dg.AssetKey("gazetteer") in graph.get(dg.AssetKey("enriched_chunks")).parent_keys
    # deduped_chunks also reads the raw files and parsed documents for its checks
    assert {dg.AssetKey("raw_sources"), dg.AssetKey("parsed_sections")} <= graph.get(dg.AssetKey("deduped_chunks")).parent_keys


def test_ui_groups_kinds_descriptions_and_partitions(project):
    defs = project.definitions()
    graph = defs.resolve_asset_graph()
    groups = {k.to_user_string(): graph.get(k).group_name for k in graph.get_all_asset_keys()}
    # stage families: the graph opens as one row ingest -> chunk -> index -> evaluate
    assert groups == {"raw_sources": "ingest", "parsed_sections": "ingest", "chunks": "chunk", "gazetteer": "chunk",
                      "enriched_chunks": "chunk",
                      "deduped_chunks": "chunk", "embedded_chunks": "index", "lancedb_index": "index",
                      "ablation_report": "evaluate"}
    for key in graph.get_all_asset_keys():  # every partitioned asset says why some combinations stay empty
        assert ("never materialised" in graph.get(key).description) == (graph.get(key).partitions_def is not None)
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        assert node.kinds, f"{key} has no kinds"
        assert node.description and len(node.description) > 60, f"{key} has no real description"
        assert node.code_version and node.code_version.startswith("cfg-"), key
    pdef = graph.get(dg.AssetKey("chunks")).partitions_def
    assert isinstance(pdef, dg.MultiPartitionsDefinition)
    dims = {d.name: d.partitions_def for d in pdef.partitions_defs}
    assert sorted(dims) == ["language", "source_type"]
    assert dims["source_type"].get_partition_keys() == list(SOURCE_TYPES)
    assert isinstance(dims["language"], dg.DynamicPartitionsDefinition) and dims["language"].name == "language"
    for fan_in in ("gazetteer", "lancedb_index", "ablation_report"):
        assert graph.get(dg.AssetKey(fan_in)).partitions_def is None
    checks = {k.name for k in graph.asset_check_keys if k.asset_key == dg.AssetKey("deduped_chunks")}
    assert checks == {"spans_round_trip", "no_chunk_over_max", "no_empty_chunk", "ids_unique", "inputs_accounted_for",
                      "dedup_log_complete"}


def test_jobs_schedule_and_sensors_are_defined(project):
    defs = project.definitions()
    ingest = defs.resolve_job_def("ingest_job")
    assert {k.to_user_string() for k in ingest.asset_layer.executable_asset_keys} == set(PARTITIONED)
    assert {k.to_user_string() for k in defs.resolve_job_def("gazetteer_job").asset_layer.executable_asset_keys} == {"gazetteer"}
    assert {k.to_user_string() for k in defs.resolve_job_def("parse_job").asset_layer.executable_asset_keys} == set(PARTITIONED[:2])
    index = defs.resolve_job_def("index_job")
    assert {k.to_user_string() for k in index.asset_layer.executable_asset_keys} == {"lancedb_index", "ablation_report"}
    sched = defs.resolve_schedule_def("nightly_csv_registry")
    assert sched.cron_schedule == "0 2 * * *" and sched.execution_timezone == "Europe/Amsterdam"
    assert sched.default_status == dg.DefaultScheduleStatus.RUNNING and sched.job_name == "ingest_job"
    for name in ("language_sensor", "index_automation"):
        assert defs.resolve_sensor_def(name).default_status == dg.DefaultSensorStatus.RUNNING


@pytest.mark.parametrize("kind, executor_name", [("in_process", "in_process"), ("multiprocess", "multiprocess"),
                                                 ("celery", "celery")])
def test_executor_is_chosen_by_pipeline_yaml(tmp_path, kind, executor_name):
    project = make_project(tmp_path, executor={"kind": kind, "celery_broker": "redis://127.0.0.1:6390/0"})
    assert load_pipeline_config(project.pipeline).executor.kind == kind
    defs = project.definitions()
    for job in ("ingest_job", "index_job"):
        ex = defs.resolve_job_def(job).executor_def
        assert ex.name == executor_name
    # the executor comes configured from pipeline.yaml: a run needs no execution block in its run config
    assert dg.validate_run_config(defs.resolve_job_def("ingest_job"), {}) is not None


def test_io_manager_writes_one_file_per_partition_atomically_and_skips_unchanged(tmp_path):
    manager = ParquetIOManager(base_path=__import__("upath").UPath(tmp_path))
    key = dg.MultiPartitionKey({"source_type": "csv_registry", "language": "nl"})
    table = with_versions(pa.table({"x": [1, 2, 3]}), "v1", "c1")

    def ctx():
        return dg.build_output_context(asset_key=dg.AssetKey("chunks"), partition_key=key)

    manager.handle_output(ctx(), table)
    path = partition_path(tmp_path, "chunks", "nl|csv_registry")
    assert path.exists() and str(path).endswith("chunks/nl/csv_registry.parquet")
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    first = path.stat().st_mtime_ns
    manager.handle_output(ctx(), with_versions(pa.table({"x": [1, 2, 3]}), "v1", "c1"))
    assert path.stat().st_mtime_ns == first  # same data version: not rewritten
    manager.handle_output(ctx(), with_versions(pa.table({"x": [4]}), "v2", "c1"))
    loaded = manager.load_input(dg.build_input_context(asset_key=dg.AssetKey("chunks"), partition_key=key,
                                                       upstream_output=ctx()))
    assert loaded.column("x").to_pylist() == [4] and table_versions(loaded) == ("v2", "c1")
    with pytest.raises(TypeError, match="expected a pyarrow.Table"):
        manager.handle_output(ctx(), {"not": "a table"})


EDITS = [
    ("sliding_window.size_tokens", 650, {"chunks", "ablation_report"}),
    ("hierarchy.levels", ["h1", "h2"], {"parsed_sections", "chunks", "ablation_report"}),
    ("context.keywords.top_k", 4, {"enriched_chunks", "ablation_report"}),
    ("quality.dedup.threshold", 0.95, {"deduped_chunks", "ablation_report"}),
    ("quality.length.min_tokens", 200, {"chunks", "enriched_chunks", "deduped_chunks", "ablation_report"}),
    ("outputs.fields", ["id", "text", "meta", "spans"], {"lancedb_index", "ablation_report"}),
    ("context.tables.max_rows", 10, {"enriched_chunks", "ablation_report"}),
    ("quality.drop_reasons", ["boilerplate", "length"], {"deduped_chunks", "ablation_report"}),
]


@pytest.mark.parametrize("key, value, affected", EDITS)
def test_a_chunking_yaml_edit_changes_exactly_the_code_versions_of_the_assets_it_shapes(tmp_path, key, value, affected):
    project = make_project(tmp_path, files={}, extra={})
    before = code_versions(load_chunking_config(project.chunking), load_pipeline_config(project.pipeline))
    project.set_chunking(key, value)
    after = code_versions(load_chunking_config(project.chunking), load_pipeline_config(project.pipeline))
    assert {k for k in before if before[k] != after[k]} == affected
    # and the definitions (what a reloaded code location shows) carry the new versions
    defs = project.definitions()
    graph = defs.resolve_asset_graph()
    assert {k: graph.get(dg.AssetKey(k)).code_version for k in STAGES} == after


def test_embedder_settings_that_do_not_change_vectors_do_not_change_versions():
    c = load_chunking_config(REPO / "configs" / "chunking.yaml")
    p = load_pipeline_config(REPO / "configs" / "pipeline.yaml")
    base = code_versions(c, p)
    same = code_versions(c, p.model_copy(update={"embedder": p.embedder.model_copy(update={"batch_size": 7, "device": "cpu:1"})}))
    assert same == base
    other = code_versions(c, p.model_copy(update={"embedder": p.embedder.model_copy(update={"passage_prefix": "passage: "})}))
    assert {k for k in base if base[k] != other[k]} == {"enriched_chunks", "embedded_chunks", "ablation_report"}


def test_workspace_yaml_points_at_the_definitions_module():
    import yaml

    ws = yaml.safe_load((REPO / "workspace.yaml").read_text())
    assert ws["load_from"][0]["python_module"]["module_name"] == "heritage_pipeline.definitions"
    assert os.path.exists(REPO / "heritage_pipeline" / "definitions.py")


def test_tokenizer_backend_of_chunking_yaml_reaches_the_run(tmp_path):
    """``tokenizer_backend: tiktoken`` is honoured by ``heritage-pipeline run`` (its Dagster tokenizer resource),
    as it is by ``chunk_text``."""
    import yaml

    from heritage_pipeline.core.config import DEFAULT_CHUNKING_CONFIG, DEFAULT_PIPELINE_CONFIG
    from heritage_pipeline.defs.resources import build_resources

    data = yaml.safe_load(DEFAULT_CHUNKING_CONFIG.read_text(encoding="utf-8"))
    data["tokenizer_backend"] = "tiktoken"
    path = tmp_path / "chunking.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    resources = build_resources(path, DEFAULT_PIPELINE_CONFIG, output_dir=tmp_path / "out")
    assert resources["tokenizer"].get().backend == "tiktoken"


def test_project_dagster_yaml_queues_runs_and_limits_index_writers(tmp_path, project):
    """configs/dagster.yaml loads as an instance config: telemetry off, a run queue of 2, one index writer at a
    time; the runs that write the index carry the tag that limit counts."""
    from heritage_pipeline.core.config import CONFIG_DIR
    from heritage_pipeline.defs.automation import INDEX_WRITES_TAG

    (tmp_path / "dagster.yaml").write_text((CONFIG_DIR / "dagster.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        queue = instance.get_concurrency_config().run_queue_config
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        assert queue.max_concurrent_runs == 2
        assert [{"key": k, "limit": 1} for k in INDEX_WRITES_TAG] == queue.tag_concurrency_limits
        assert instance.get_settings("telemetry") == {"enabled": False}
    defs = project.definitions()
    assert defs.resolve_job_def("index_job").tags.items() >= INDEX_WRITES_TAG.items()
    assert defs.resolve_sensor_def("index_automation").run_tags == INDEX_WRITES_TAG


def test_every_code_version_hashes_the_stage_logic_it_runs():
    """An asset's code version covers defs/assets.py (its body holds reuse logic) and, for the index, index/sync.py:
    editing either can never reuse outputs stored by the old code."""
    from heritage_pipeline.defs.versions import STAGES, hashed_files
    from heritage_pipeline.incremental.versions import module_closure

    package = REPO / "heritage_pipeline"
    for stage, spec in STAGES.items():
        covered = set(module_closure(*spec.modules)) | set(hashed_files(stage))
        assert package / "defs" / "assets.py" in covered, stage
    assert package / "index" / "sync.py" in set(module_closure(*STAGES["lancedb_index"].modules))
