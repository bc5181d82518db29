"""Evaluation of heritage_pipeline: retrieval metrics on golden sets, the chunking ablation, source evaluations and
benchmarks. The pipeline stages never import this package; the `ablation_report` asset and `heritage-pipeline
ablate` do."""
