"""The language sensor: dynamic partitions from the raw files (the index automation is tested in test_schedule.py)."""

from __future__ import annotations

import dagster as dg

from heritage_pipeline.defs.automation import language_sensor

from heritage_pipeline_tests.ops_fixtures import make_project


def _evaluate(instance, project):
    defs = project.definitions()
    with dg.build_sensor_context(instance=instance, resources={"settings": defs.resources["settings"]}) as ctx:
        return language_sensor(ctx)


def test_new_languages_in_the_raw_files_are_registered_without_a_code_change(tmp_path):
    project = make_project(tmp_path, files={"raw/csv_registry/nl.csv": "raw/csv_registry/nl_erfgoedorganisaties_sample.csv"},
                           extra={})
    with dg.instance_for_test(temp_dir=str(project.home)) as instance:
        result = _evaluate(instance, project)
        assert isinstance(result, dg.SensorResult)
        (req,) = result.dynamic_partitions_requests
        assert req.partitions_def_name == "language" and list(req.partition_keys) == ["nl"]
        instance.add_dynamic_partitions(req.partitions_def_name, list(req.partition_keys))
        again = _evaluate(instance, project)
        assert isinstance(again, dg.SkipReason) and "no new language" in again.skip_message
        # a French page appears: the next tick registers "fr" (and only it)
        (project.data / "raw" / "document").mkdir(parents=True)
        (project.data / "raw" / "document" / "musee.md").write_text(
            "# Le musée municipal\n\nLe musée municipal conserve des collections d'archéologie, de beaux-arts et "
            "d'histoire locale. Les archives de la ville sont consultables sur rendez-vous dans la salle de lecture, "
            "du mardi au vendredi.\n", encoding="utf-8")
        third = _evaluate(instance, project)
        (req,) = third.dynamic_partitions_requests
        assert list(req.partition_keys) == ["fr"]
