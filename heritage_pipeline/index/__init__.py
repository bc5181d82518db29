"""The LanceDB index: table schema, partition writes, full-text indexes and search."""
