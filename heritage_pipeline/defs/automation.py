"""Jobs, the nightly registry schedule, the sensor that registers languages, and the index automation.

* ``ingest_job``: the six partitioned assets, one partition per run, with the executor of ``configs/pipeline.yaml``
  (in-process by default). ``index_job``: ``lancedb_index`` then ``ablation_report``. ``parse_job`` (raw sources
  and parsed sections of one partition) and ``gazetteer_job`` (the unpartitioned ``gazetteer``): ``heritage-pipeline
  run`` parses the registry / LinkML partitions and builds the gazetteer before the partition runs enrich.
* ``nightly_csv_registry``: at 02:00 Europe/Amsterdam, one run request per registered language for the
  ``csv_registry`` source type; run keys ``<YYYYMMDD>-<language>|csv_registry`` are stable per night, so a
  re-evaluated tick never launches a partition twice. Runs over unchanged registries reuse their stored outputs.
  Their enrichment reads the stored gazetteer: before the first ``heritage-pipeline run`` (or a materialisation of
  the ``gazetteer`` asset) they fail with a message that says so.
* ``language_sensor``: discovers raw files and adds any new language to the ``language`` partitions.
* ``index_automation``: evaluates the automation conditions of ``gazetteer`` and ``lancedb_index``, so the
  gazetteer follows the registry partitions and the index the partitions the nightly runs (or anyone) updated, once
  none of them is still running. A nightly registry edit that changes the gazetteer then shows every partition's
  ``enriched_chunks`` unsynced (the next run or backfill refreshes their mentions).

The schedule and both sensors are on by default, so ``dagster dev`` (which runs the daemon) runs them.
"""

from __future__ import annotations

import dagster as dg

from heritage_pipeline.enrich.langid import policy_from

from heritage_pipeline.incremental.discovery import discover_once
from .partitions import language_partitions
from .resources import SettingsResource

PARTITIONED_KEYS = ("raw_sources", "parsed_sections", "chunks", "enriched_chunks", "deduped_chunks", "embedded_chunks")
PARSE_KEYS = PARTITIONED_KEYS[:2]
# Run tag of every run that writes the LanceDB index: configs/dagster.yaml limits such runs to one at a time.
INDEX_WRITES_TAG = {"index_writes": "lancedb"}
NIGHTLY_CRON = "0 2 * * *"
NIGHTLY_TZ = "Europe/Amsterdam"


def build_jobs(executor_def: dg.ExecutorDefinition = dg.in_process_executor) -> list[dg.UnresolvedAssetJobDefinition]:
    """``parse_job``, ``gazetteer_job``, ``ingest_job`` and ``index_job`` running on ``executor_def``."""
    return [
        dg.define_asset_job("parse_job", selection=dg.AssetSelection.assets(*PARSE_KEYS), executor_def=executor_def,
                            description="Raw sources and parsed sections of one partition (the registry and LinkML "
                                        "partitions are parsed first: the gazetteer is built from them)."),
        dg.define_asset_job("gazetteer_job", selection=dg.AssetSelection.assets("gazetteer"), executor_def=executor_def,
                            description="The entity gazetteer from the parsed registry and LinkML partitions."),
        dg.define_asset_job("ingest_job", selection=dg.AssetSelection.assets(*PARTITIONED_KEYS), executor_def=executor_def,
                            description="Raw sources to embedded chunks for one source_type x language partition."),
        dg.define_asset_job("index_job", selection=dg.AssetSelection.assets("lancedb_index", "ablation_report"),
                            executor_def=executor_def, tags=INDEX_WRITES_TAG,
                            description="Sync the LanceDB index with every materialised partition, then the ablation report."),
    ]


@dg.schedule(job_name="ingest_job", cron_schedule=NIGHTLY_CRON, execution_timezone=NIGHTLY_TZ,
             default_status=dg.DefaultScheduleStatus.RUNNING,
             description="Nightly re-chunking of the CSV registries: one run per registered language.")
def nightly_csv_registry(context: dg.ScheduleEvaluationContext):
    langs = sorted(context.instance.get_dynamic_partitions(language_partitions.name))
    if not langs:
        yield dg.SkipReason("no languages registered yet (the language sensor registers them from the raw files)")
        return
    night = context.scheduled_execution_time.strftime("%Y%m%d")
    for lang in langs:
        key = dg.MultiPartitionKey({"source_type": "csv_registry", "language": lang})
        yield dg.RunRequest(run_key=f"{night}-{key}", partition_key=key,
                            tags={"dagster/partition/source_type": "csv_registry", "dagster/partition/language": lang})


@dg.sensor(minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.RUNNING,
           description="Registers the languages of newly discovered raw files as dynamic partitions.")
def language_sensor(context: dg.SensorEvaluationContext, settings: SettingsResource):
    found = sorted({s.lang for s in discover_once(settings.data_dir, settings.storage, policy_from(settings.chunking()))})
    known = set(context.instance.get_dynamic_partitions(language_partitions.name))
    new = [lang for lang in found if lang not in known]
    if not new:
        return dg.SkipReason(f"no new language (known: {', '.join(sorted(known)) or 'none'})")
    return dg.SensorResult(dynamic_partitions_requests=[language_partitions.build_add_request(new)])


index_automation = dg.AutomationConditionSensorDefinition(
    "index_automation", target=dg.AssetSelection.assets("gazetteer", "lancedb_index"), minimum_interval_seconds=60,
    run_tags=INDEX_WRITES_TAG,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Materialises the gazetteer and lancedb_index after partitions were updated (e.g. by the nightly "
                "registry runs).")
