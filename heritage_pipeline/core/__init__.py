"""Shared by every stage: the record types, document structure, text normalisation, tokenizer, configuration."""
