"""Dagster code location of heritage_pipeline (loaded by ``workspace.yaml``).

Resources, code versions and the executor come from ``configs/chunking.yaml`` and ``configs/pipeline.yaml``
(override the files with the ``HERITAGE_CHUNKING_CONFIG`` / ``HERITAGE_PIPELINE_CONFIG`` environment variables).
After editing a config file, reload the code location (UI "Reload") for the change to show.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from heritage_pipeline.core.config import load_pipeline_config
from heritage_pipeline.defs.assets import CHUNKING_CONFIG_PATH, PIPELINE_CONFIG_PATH, build_assets
from heritage_pipeline.defs.automation import build_jobs, index_automation, language_sensor, nightly_csv_registry
from heritage_pipeline.defs.executors import executor_for
from heritage_pipeline.defs.resources import build_resources


def build_definitions(chunking_path: str | Path = CHUNKING_CONFIG_PATH, pipeline_path: str | Path = PIPELINE_CONFIG_PATH,
                      *, data_dir: str | Path | None = None, output_dir: str | Path | None = None,
                      executor_kind: str | None = None) -> dg.Definitions:
    """Definitions with resources, code versions and executor built from the given config files.

    Args:
        chunking_path, pipeline_path: the two config files.
        data_dir, output_dir: replace the folders of ``pipeline.yaml``.
        executor_kind: replaces ``executor.kind`` (``in_process``, ``multiprocess``, ``celery``).

    Returns:
        The :class:`dagster.Definitions` of the code location.
    """
    ecfg = load_pipeline_config(pipeline_path).executor
    if executor_kind is not None:
        ecfg = ecfg.model_copy(update={"kind": executor_kind})
    executor = executor_for(ecfg)
    return dg.Definitions(
        assets=build_assets(chunking_path, pipeline_path),
        jobs=build_jobs(executor),
        schedules=[nightly_csv_registry],
        sensors=[language_sensor, index_automation],
        resources=build_resources(chunking_path, pipeline_path, data_dir=data_dir, output_dir=output_dir),
        executor=executor,
    )


def job_for(job_name: str, chunking_path: str, pipeline_path: str, data_dir: str | None = None,
            output_dir: str | None = None, executor_kind: str | None = None) -> dg.JobDefinition:
    """A job of :func:`build_definitions` (arguments are strings so that the call can be rebuilt in another
    process: ``dagster.build_reconstructable_job("heritage_pipeline.definitions", "job_for", ...)``, which the
    multiprocess and Celery executors need)."""
    return build_definitions(chunking_path, pipeline_path, data_dir=data_dir or None, output_dir=output_dir or None,
                             executor_kind=executor_kind or None).resolve_job_def(job_name)


defs = build_definitions()
