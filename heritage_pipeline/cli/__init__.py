"""Command line: ``heritage-pipeline run | chunk | search | ablate | validate-config`` (see :mod:`.main`).

Environment and warning filters are set here, before any command imports a library.
"""

import os
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# LanceDB's Rust log: warnings such as "No existing dataset ... will be created" or the hybrid-query note that
# _score is not selected are not about the user's data; errors still show (LANCE_LOG=warn brings them back)
# LanceDB's Python package reads LANCEDB_LOG (LANCE_LOG is the lance crate's own name; both set). `-v` sets "warn".
os.environ.setdefault("LANCE_LOG", "error")
os.environ.setdefault("LANCEDB_LOG", "error")


# Library chatter that says nothing about the user's data: Dagster beta/preview notices for features we rely on
# deliberately (data versions), and scikit-learn's note that multi-word stop-word entries tokenize differently.
warnings.filterwarnings("ignore", message=r".*is currently in beta.*")
warnings.filterwarnings("ignore", message=r".*stop_words may be inconsistent.*")


from .chunk import chunk_overrides  # noqa: E402
from .main import build_parser, main  # noqa: E402

__all__ = ["build_parser", "chunk_overrides", "main"]
