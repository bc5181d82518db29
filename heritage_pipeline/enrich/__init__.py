"""Enrichment: keywords, light NER, heritage mentions, language, tables and code blocks, quality flags."""
