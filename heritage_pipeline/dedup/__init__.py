"""Deduplication (exact and MinHash LSH near-duplicates, every drop logged) and the data-quality checks."""
