"""Benchmarks: each prints figures and ratios against peers (run them as ``python -m heritage_pipeline_eval.bench.<name>``)."""
