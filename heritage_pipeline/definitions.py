"""Dagster code location of heritage_pipeline (loaded by ``workspace.yaml``).

Resources come from ``configs/chunking.yaml`` and ``configs/pipeline.yaml`` (override the files with the
``HERITAGE_CHUNKING_CONFIG`` / ``HERITAGE_PIPELINE_CONFIG`` environment variables).
"""

from __future__ import annotations

import dagster as dg

from .defs.assets import ASSETS, CHUNKING_CONFIG_PATH, PIPELINE_CONFIG_PATH
from .defs.automation import index_job, ingest_job, language_sensor, nightly_csv_registry
from .defs.resources import build_resources


def build_definitions(chunking_path=CHUNKING_CONFIG_PATH, pipeline_path=PIPELINE_CONFIG_PATH, *, data_dir=None,
                      output_dir=None) -> dg.Definitions:
    """Definitions with resources built from the given config files (and optional data/output folders)."""
    return dg.Definitions(
        assets=ASSETS,
        jobs=[ingest_job, index_job],
        schedules=[nightly_csv_registry],
        sensors=[language_sensor],
        resources=build_resources(chunking_path, pipeline_path, data_dir=data_dir, output_dir=output_dir),
        executor=dg.in_process_executor,
    )


defs = build_definitions()
