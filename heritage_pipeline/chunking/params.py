"""Resolved chunk sizes per document (:class:`ChunkParams`) and the adaptive-overlap formula.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import cached_property


from heritage_pipeline.core.config import ChunkingConfig
from heritage_pipeline.core.structure import ATOMIC_KINDS

from heritage_pipeline.core.text import WORD_RE  # noqa: E402  (the one word tokenizer; re-exported for chunking.ids)


@dataclass(frozen=True)
class ChunkParams:
    """Resolved sizes for one document (all sizes in tokens of the configured encoding). Built by
    :func:`params_for`; ``overlap_tokens`` is ``round(size_tokens x overlap_ratio)``."""

    mode: str = "hybrid"
    size_tokens: int = 700
    max_tokens: int = 1200
    overlap_tokens: int = 140
    min_tokens: int = 300
    min_paragraph_tokens: int = 80
    split_factor: float = 1.5
    adaptive_overlap: bool = False
    keep_atomic: frozenset[str] = ATOMIC_KINDS
    parent_titles: bool = True
    merge_small_sections: bool = True
    domain: str | None = None
    prefix_budget: int = 175  # most tokens of the breadcrumb in a context prefix (ratio x size_tokens)

    @cached_property
    def whole_limit(self) -> int:
        """Largest embedded size (tokens) of a group emitted as one chunk without windowing: hybrid
        ``min(max_tokens, split_factor x size_tokens)``, hierarchical ``max_tokens``, sliding 0 (always windows)."""
        if self.mode == "hybrid":
            return min(self.max_tokens, int(self.split_factor * self.size_tokens))
        if self.mode == "sliding":
            return 0
        return self.max_tokens


def params_for(config: ChunkingConfig, *, source_type: str = "document", domain: str | None = None) -> ChunkParams:
    """Chunk sizes for a source type and domain from the config (``sources`` sizes per source type and ``domains`` presets).

    ``domain`` (``tech``, ``legal``, ``faq``) takes the preset's size and overlap ratio; None keeps
    ``sliding_window``. Websites and conversations use their ``sources`` sizes. Raises nothing (the config is
    validated at load time).
    """
    sw = config.sliding_window
    size, ratio = sw.size_tokens, sw.overlap_ratio
    if domain is not None and domain in config.domains.presets:
        preset = config.domains.presets[domain]  # type: ignore[index]
        size, ratio = preset.size_tokens, preset.overlap_ratio
    cap = config.quality.length.max_tokens
    overlap = round(size * ratio)
    merge = True
    if source_type == "website":
        src = config.sources.website
        size, cap, overlap = src.size_tokens, src.max_tokens, src.overlap_tokens
    elif source_type == "conversation":
        src = config.sources.conversation
        size, cap, overlap, merge = src.size_tokens, src.max_tokens, src.overlap_tokens, False
    elif source_type in ("csv_registry", "yaml_instance"):
        merge = False
    keep = set(ATOMIC_KINDS)
    h = config.hierarchy
    if not h.keep_code_blocks:
        keep.discard("code")
    if not h.keep_tables:
        keep -= {"table", "html_table"}
    if not h.keep_blockquotes:
        keep -= {"blockquote", "admonition"}
    size = min(size, cap)
    return ChunkParams(
        mode=config.mode,
        size_tokens=size,
        max_tokens=cap,
        overlap_tokens=min(overlap, size // 2),
        min_tokens=min(config.quality.length.min_tokens, size),
        min_paragraph_tokens=sw.min_paragraph_tokens,
        split_factor=sw.split_factor,
        adaptive_overlap=sw.adaptive_overlap,
        keep_atomic=frozenset(keep),
        parent_titles=config.context.parent_titles,
        merge_small_sections=merge,
        domain=domain,
        prefix_budget=max(1, int(config.context.prefix_budget_ratio * size)),
    )


def lexical_entropy(text: str) -> float:
    """Normalised lexical entropy in [0, 1]: Shannon entropy of the word distribution over log2(number of words).

    0 means one word repeated (or fewer than two words); 1 means every word distinct.
    """
    words = WORD_RE.findall(text.lower())
    n = len(words)
    if n < 2:
        return 0.0
    h = -sum((c / n) * math.log2(c / n) for c in Counter(words).values())
    return min(1.0, h / math.log2(n))


def adaptive_overlap_ratio(text: str) -> float:
    """Seed rule ``overlap = min(0.25, 0.10 + entropy)`` with entropy scaled onto the seed's 0.10-0.25 band.

    Taken literally the rule saturates at 0.25 for any natural text (normalised word entropy is 0.8-0.95), so the
    normalised entropy ``H`` of :func:`lexical_entropy` is scaled: ``min(0.25, 0.10 + 0.15 * H)``. Denser, more
    varied vocabulary gives more overlap, as the seed intends; a text repeating one sentence gets close to 0.10.
    """
    return min(0.25, 0.10 + 0.15 * lexical_entropy(text))
