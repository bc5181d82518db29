"""Incremental runs: content-chained data versions and the reuse of unchanged outputs and rows."""
