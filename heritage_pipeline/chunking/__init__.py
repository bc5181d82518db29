"""The chunking engine: exact, structure-preserving chunks in hierarchical, sliding and hybrid modes.

Modules: :mod:`.params` (sizes per document), :mod:`.sections` (heading sections -> groups), :mod:`.units` (blocks
and their pieces), :mod:`.boundaries` (where a block may be cut), :mod:`.windows` (packing with overlap),
:mod:`.counting` (exact token counts), :mod:`.ids` (ids and breadcrumbs), :mod:`.chunker` (the :class:`Chunker` and
:func:`chunk_text`). How it works: ``docs/chunking.md``.
"""

from .chunker import Chunker, chunk_text, resolve_config
from .ids import BREADCRUMB_SEP, breadcrumb, slug
from .params import ChunkParams, adaptive_overlap_ratio, lexical_entropy, params_for

__all__ = ["BREADCRUMB_SEP", "ChunkParams", "Chunker", "adaptive_overlap_ratio", "breadcrumb", "chunk_text",
           "lexical_entropy", "params_for", "resolve_config", "slug"]
