"""Jobs, the nightly registry schedule and the sensor that registers languages (dynamic partitions).

* ``ingest_job``: the partitioned assets, one partition per run (in-process executor: the multiprocess executor
  costs ~10 s per step on 2 cores).
* ``nightly_csv_registry``: at 02:00 Europe/Amsterdam, one run request per registered language for the
  ``csv_registry`` source type; run keys are stable per night (``<YYYYMMDD>-<partition>``).
* ``language_sensor``: discovers raw files and adds any new language to the ``language`` partitions.
"""

from __future__ import annotations

import dagster as dg

from .assets import PARTITIONED_ASSETS, discover_once
from .partitions import language_partitions
from .resources import SettingsResource

ingest_job = dg.define_asset_job(
    "ingest_job",
    selection=dg.AssetSelection.assets(*PARTITIONED_ASSETS),
    executor_def=dg.in_process_executor,
    description="Raw sources to embedded chunks for one source_type x language partition.",
)
index_job = dg.define_asset_job(
    "index_job",
    selection=dg.AssetSelection.keys("lancedb_index", "ablation_report"),
    executor_def=dg.in_process_executor,
    description="Rebuild the LanceDB index from every materialised partition, then the ablation report.",
)


@dg.schedule(job=ingest_job, cron_schedule="0 2 * * *", execution_timezone="Europe/Amsterdam",
             default_status=dg.DefaultScheduleStatus.RUNNING,
             description="Nightly re-chunking of the CSV registries, one run per registered language.")
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
    found = sorted({s.lang for s in discover_once(settings.data_dir)})
    known = set(context.instance.get_dynamic_partitions(language_partitions.name))
    new = [lang for lang in found if lang not in known]
    if not new:
        return dg.SkipReason(f"no new language (known: {', '.join(sorted(known)) or 'none'})")
    return dg.SensorResult(dynamic_partitions_requests=[language_partitions.build_add_request(new)])
