"""Sources: discovery of raw files and one parser per source type (documents, websites, conversations, registries,
LinkML instances), each giving a :class:`~heritage_pipeline.core.structure.ParsedDocument` with exact spans."""
