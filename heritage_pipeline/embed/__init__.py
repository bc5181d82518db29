"""Embedding: embedders behind one small interface, no silent truncation, and a persistent embedding cache."""

import os

# Nothing may download a model at run time; set before any Hugging Face library is imported.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
