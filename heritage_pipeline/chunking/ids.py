"""Chunk ids, heading slugs and breadcrumbs (``meta.anchors`` joined with `` › ``).
"""

from __future__ import annotations

import re
from functools import lru_cache

from .params import WORD_RE

BREADCRUMB_SEP = " › "


# On ASCII text the one word pattern (regex's Unicode ``\w``) is exactly [A-Za-z0-9_]: re finds those words faster.
_ASCII_WORD = re.compile(r"[A-Za-z0-9_]+")


def slug(s: str, max_len: int = 48) -> str:
    """Id-safe slug of a heading: lowercase word characters joined by ``-`` (Unicode letters kept)."""
    low = s.lower()
    words = _ASCII_WORD.findall(low) if low.isascii() else WORD_RE.findall(low)
    out = "-".join(words)[:max_len].strip("-")
    return out or "untitled"


slug_cached = lru_cache(maxsize=16384)(slug)  # (parent titles repeat in every anchor path below them)


@lru_cache(maxsize=8192)
def anchor_key(anchors: tuple[str, ...]) -> str:
    """The heading-path part of a chunk id: slugged anchors joined by ``/`` (``root`` without anchors)."""
    return "/".join(map(slug_cached, anchors)) or "root"


def breadcrumb(anchors: list[str]) -> str:
    """The anchor path as shown to users and embedded as context: ``H1 › H2 › H3``."""
    return BREADCRUMB_SEP.join(anchors)


def common_prefix(a: list[str], b: list[str]) -> list[str]:
    out = []
    for x, y in zip(a, b):
        if x != y:
            break
        out.append(x)
    return out
