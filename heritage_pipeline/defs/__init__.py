"""The Dagster layer: partitions, resources, IO manager, assets, checks, schedules and sensors.

Assets are thin: each calls the plain functions of :mod:`heritage_pipeline.stages` and returns data plus metadata.
"""
