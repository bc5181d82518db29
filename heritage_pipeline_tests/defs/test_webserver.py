"""The UI: a headless ``dagster-webserver`` on a free loopback port serves the code location; its GraphQL API lists the
eight assets (groups, kinds, descriptions, partitions, checks), the schedule and the sensors, and launches a
partition run that succeeds.

The instance uses the ``DefaultRunCoordinator``: the webserver alone (no daemon) then launches runs at once through
the default run launcher (a run worker process started by the code server). The default ``QueuedRunCoordinator``
would leave the run queued until a daemon dequeues it, as ``dagster dev`` does.
Every process the test starts (webserver, code server, run worker) is stopped by PID: SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request

import dagster as dg
import pytest

from heritage_pipeline_tests.ops_fixtures import (REPO, default_signals, free_port, make_project, register_languages,
    stop_tree)

ASSETS = ["raw_sources", "parsed_sections", "chunks", "gazetteer", "enriched_chunks", "deduped_chunks", "embedded_chunks",
          "lancedb_index", "ablation_report"]
LOCATION = "heritage_pipeline.definitions"
REPOSITORY = {"repositoryLocationName": LOCATION, "repositoryName": "__repository__"}
INSTANCE_YAML = """telemetry:
  enabled: false
run_coordinator:
  module: dagster._core.run_coordinator
  class: DefaultRunCoordinator
run_launcher:
  module: dagster._core.launcher
  class: DefaultRunLauncher
"""


class Server:
    def __init__(self, project, port: int, proc: subprocess.Popen, log) -> None:
        self.project, self.port, self.proc, self.log = project, port, proc, log

    def gql(self, query: str, variables: dict | None = None, timeout: float = 60) -> dict:
        body = json.dumps({"query": query, "variables": variables or {}}).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/graphql", data=body,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            out = json.loads(resp.read())
        assert "errors" not in out, out["errors"]
        return out["data"]

    def logs(self) -> str:
        self.log.flush()
        return (self.project.root / "webserver.log").read_text(errors="replace")[-4000:]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    project = make_project(tmp_path_factory.mktemp("web"),
                           files={"raw/yaml_instance/kb.yaml": "raw/yaml_instance/koninklijke_bibliotheek.yaml"}, extra={})
    (project.home / "dagster.yaml").write_text(INSTANCE_YAML)
    with dg.DagsterInstance.from_config(str(project.home)) as instance:
        register_languages(instance, project)
    port = free_port()
    log = open(project.root / "webserver.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "dagster_webserver", "-w", str(REPO / "workspace.yaml"),
                             "-h", "127.0.0.1", "-p", str(port)],
                            cwd=REPO, env=project.env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            preexec_fn=default_signals)
    srv = Server(project, port, proc, log)
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, f"dagster-webserver exited:\n{srv.logs()}"
            try:
                status = srv.gql("{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus "
                                 "locationOrLoadError { __typename ... on PythonError { message } } } } } }", timeout=10)
                entries = status["workspaceOrError"]["locationEntries"]
                if entries and entries[0]["loadStatus"] == "LOADED":
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            assert time.monotonic() < deadline, f"the webserver did not load the code location:\n{srv.logs()}"
            time.sleep(1)
        (entry,) = entries
        assert entry["name"] == LOCATION
        assert entry["locationOrLoadError"]["__typename"] == "RepositoryLocation", entry
        yield srv
    finally:
        stop_tree(proc.pid)
        log.close()
        assert proc.poll() is not None


def test_graphql_lists_assets_partitions_checks_schedule_and_sensors(server):
    nodes = server.gql("""{ assetNodes { assetKey { path } groupName kinds description isPartitioned hasAssetChecks
                           dependencyKeys { path } } }""")["assetNodes"]
    by_key = {n["assetKey"]["path"][-1]: n for n in nodes}
    assert sorted(by_key) == sorted(ASSETS)
    for name in ASSETS:
        node = by_key[name]
        assert node["groupName"] and node["kinds"] and len(node["description"]) > 60, name
        assert node["isPartitioned"] == (name not in ("gazetteer", "lancedb_index", "ablation_report")), name
    assert by_key["deduped_chunks"]["hasAssetChecks"]
    assert {"enriched_chunks", "raw_sources", "parsed_sections"} <= {d["path"][-1] for d in by_key["deduped_chunks"]["dependencyKeys"]}

    dims = server.gql("""{ assetNodeOrError(assetKey: {path: ["chunks"]}) { ... on AssetNode {
                           partitionKeysByDimension { name partitionKeys } } } }""")["assetNodeOrError"]
    keys = {d["name"]: d["partitionKeys"] for d in dims["partitionKeysByDimension"]}
    assert keys["source_type"] == ["document", "website", "conversation", "csv_registry", "yaml_instance"]
    assert keys["language"] == ["en"]  # the dynamic dimension: the languages registered so far

    checks = server.gql("""{ assetNodeOrError(assetKey: {path: ["deduped_chunks"]}) { ... on AssetNode {
                             assetChecksOrError { ... on AssetChecks { checks { name } } } } } }""")
    names = {c["name"] for c in checks["assetNodeOrError"]["assetChecksOrError"]["checks"]}
    assert names == {"spans_round_trip", "no_chunk_over_max", "no_empty_chunk", "ids_unique", "inputs_accounted_for",
                     "dedup_log_complete"}

    schedules = server.gql("""query($r: RepositorySelector!) { schedulesOrError(repositorySelector: $r) {
        ... on Schedules { results { name cronSchedule executionTimezone pipelineName scheduleState { status } } } } }""",
                           {"r": REPOSITORY})["schedulesOrError"]["results"]
    assert [(s["name"], s["cronSchedule"], s["executionTimezone"], s["pipelineName"], s["scheduleState"]["status"])
            for s in schedules] == [("nightly_csv_registry", "0 2 * * *", "Europe/Amsterdam", "ingest_job", "RUNNING")]
    sensors = server.gql("""query($r: RepositorySelector!) { sensorsOrError(repositorySelector: $r) {
        ... on Sensors { results { name sensorState { status } } } } }""", {"r": REPOSITORY})["sensorsOrError"]["results"]
    assert {s["name"]: s["sensorState"]["status"] for s in sensors} == {"language_sensor": "RUNNING",
                                                                        "index_automation": "RUNNING"}


LAUNCH = """mutation($p: ExecutionParams!) { launchRun(executionParams: $p) { __typename
  ... on LaunchRunSuccess { run { runId } }
  ... on PythonError { message }
  ... on RunConfigValidationInvalid { errors { message } }
  ... on InvalidSubsetError { message } } }"""


@pytest.mark.slow
def test_a_partition_run_launched_through_graphql_succeeds(server):
    params = {"selector": {**REPOSITORY, "jobName": "ingest_job"}, "runConfigData": {},
              # only the plain partition tag, as API clients send it (the UI also adds one tag per dimension)
              "executionMetadata": {"tags": [{"key": "dagster/partition", "value": "en|yaml_instance"}]}}
    launched = server.gql(LAUNCH, {"p": params})["launchRun"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    run_id = launched["run"]["runId"]
    deadline = time.monotonic() + 900
    status = None
    while time.monotonic() < deadline:
        status = server.gql("""query($id: ID!) { runOrError(runId: $id) { ... on Run { status } } }""",
                            {"id": run_id})["runOrError"]["status"]
        if status in ("SUCCESS", "FAILURE", "CANCELED"):
            break
        time.sleep(2)
    assert status == "SUCCESS", server.logs()
    stale = server.gql("""{ assetNodes(assetKeys: [{path: ["embedded_chunks"]}]) {
                           staleStatus(partition: "en|yaml_instance") } }""")["assetNodes"][0]["staleStatus"]
    assert stale == "FRESH"
    assert (server.project.out / "storage" / "embedded_chunks" / "en" / "yaml_instance.parquet").exists()
