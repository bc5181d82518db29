"""Plain, testable data-quality checks on the chunks that leave ``deduped_chunks`` (the asset checks of ``deduped_chunks``).

The Dagster asset (:mod:`heritage_pipeline.defs.assets`) turns each :class:`CheckOutcome` into an
``AssetCheckResult``; nothing here imports Dagster. Each check returns the offending ids/paths (empty = passed).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .minhash import DedupRecord, check_dedup_accounting
from heritage_pipeline.core.models import Chunk
from heritage_pipeline.core.text import normalize


@dataclass
class CheckOutcome:
    """Result of one check: ``name`` (the asset-check name), ``passed``, ``severity`` (``ERROR``/``WARN``),
    JSON-able ``metadata`` (counts and up to 10-20 examples)."""

    name: str
    passed: bool
    metadata: dict[str, Any] = field(default_factory=dict)
    severity: str = "ERROR"


def bad_spans(chunks: list[Chunk], raw_texts: dict[str, str], text_is_raw: dict[str, bool]) -> list[str]:
    """Ids of chunks whose span is not inside its raw file (``0 <= char_start < char_end <= len(raw)``, code
    points), or, for documents whose parsed text *is* the raw file (Markdown, plain text), whose
    ``normalize(raw[char_start:char_end])`` differs from the chunk text. ``raw_texts``: source path -> decoded raw
    text; ``text_is_raw``: source path -> whether spans index the raw text directly."""
    out = []
    for c in chunks:
        raw = raw_texts.get(c.meta.source_path, "")
        s, e = c.spans.char_start, c.spans.char_end
        if not (0 <= s < e <= len(raw)):
            out.append(c.id)
        elif text_is_raw.get(c.meta.source_path) and normalize(raw[s:e]) != c.text:
            out.append(c.id)
    return out


def source_caps(config) -> dict[str, int]:
    """The hard maximum per source type, in tokens, as the chunker applies it.

    Args:
        config: the :class:`~heritage_pipeline.core.config.ChunkingConfig`.

    Returns:
        ``{source_type: max tokens}`` for every source type (websites and conversations have their own caps under
        ``sources``, the others ``quality.length.max_tokens``), plus ``"*"`` for any other source type.
    """
    from heritage_pipeline.chunking.params import params_for
    from heritage_pipeline.core.config import SOURCE_TYPES

    caps = {st: params_for(config, source_type=st).max_tokens for st in SOURCE_TYPES}
    caps["*"] = config.quality.length.max_tokens
    return caps


def over_max(chunks: list[Chunk], caps: Mapping[str, int], count: Callable[[str], int]) -> list[tuple[str, int, int]]:
    """Chunks whose embedded text is over their source type's cap, recounted (the stored ``len_tokens`` is not
    trusted); a text of no more UTF-8 bytes than the cap is under it without counting (a token is at least a byte).

    Args:
        chunks: the chunks to check.
        caps: tokens allowed per source type, with ``"*"`` for the others (:func:`source_caps`).
        count: the token counter (tokens of the configured encoding) applied to :meth:`Chunk.embedding_text`
            (context prefix + text).

    Returns:
        ``(id, tokens, cap)`` of every chunk over its cap that is not flagged ``quality.atomic_oversize`` (a single
        unsplittable unit, reported by the chunker).
    """
    out = []
    for c in chunks:
        cap = caps.get(c.meta.source_type, caps["*"])
        text = c.embedding_text()
        # cl100k is a byte-level BPE: every token covers at least one UTF-8 byte, so a text of at most ``cap`` bytes
        # (at most cap // 4 characters, 4 bytes each at most) cannot be over the cap: no recount needed (a registry
        # row of 100 bytes against a cap of hundreds of tokens). Longer texts are recounted.
        if len(text) <= cap // 4 or len(text.encode("utf-8")) <= cap:
            continue
        n = count(text)
        if n > cap and not c.quality.atomic_oversize:
            out.append((c.id, n, cap))
    return out


def empty_chunks(chunks: list[Chunk]) -> list[str]:
    """Ids of chunks whose text is empty or whitespace only."""
    return [c.id for c in chunks if not c.text.strip()]


def duplicated_ids(chunks: list[Chunk]) -> list[str]:
    """Chunk ids that occur more than once."""
    return [i for i, n in Counter(c.id for c in chunks).items() if n > 1]


def unaccounted_inputs(statuses: dict[str, str], parsed_paths: set[str], kept: list[Chunk],
                       log: list[DedupRecord], skipped: dict[str, list] | None = None) -> list[str]:
    """Input files that are neither chunked (a kept chunk or a logged drop comes from them), nor skipped or
    quarantined at discovery (``statuses[path] != "ok"``), nor quarantined at parse time (not in
    ``parsed_paths``), nor parsed with every part skipped for a stated reason (``skipped[path]`` non-empty, e.g.
    all messages under the minimum length). ``statuses``: source path -> discovery status."""
    chunked = {c.meta.source_path for c in kept} | {r.dropped_source for r in log}
    skipped = skipped or {}
    return [p for p, status in statuses.items()
            if status == "ok" and p in parsed_paths and p not in chunked and not skipped.get(p)]


def deduped_checks(chunks_in: list[Chunk], kept: list[Chunk], log: list[DedupRecord], caps: Mapping[str, int],
                   raw_texts: dict[str, str], text_is_raw: dict[str, bool], statuses: dict[str, str],
                   skipped: dict[str, list] | None = None, *, count: Callable[[str], int]) -> list[CheckOutcome]:
    """All checks of the ``deduped_chunks`` asset, in the order of its check specs.

    Args:
        chunks_in: the chunks before dedup; kept: after; log: the dedup log (``dedup_log_complete``: every input
            chunk is kept or has exactly one log row).
        caps: tokens allowed per source type (:func:`source_caps`); count: the token counter (tokens).
        raw_texts, text_is_raw, statuses, skipped: see :func:`bad_spans` and :func:`unaccounted_inputs`.

    Returns:
        One :class:`CheckOutcome` per check.
    """
    spans = bad_spans(kept, raw_texts, text_is_raw)
    over = over_max(kept, caps, count)
    empty = empty_chunks(kept)
    dups = duplicated_ids(kept)
    unacc = unaccounted_inputs(statuses, set(text_is_raw), kept, log, skipped)
    problems = check_dedup_accounting(chunks_in, kept, log)
    chunked = {c.meta.source_path for c in kept} | {r.dropped_source for r in log}
    return [
        CheckOutcome("spans_round_trip", not spans, {"bad": len(spans), "examples": spans[:10]}),
        CheckOutcome("no_chunk_over_max", not over, {"over": len(over), "caps": {k: v for k, v in caps.items() if k != "*"},
                                                     "examples": [f"{i}: {n} > {cap} tokens" for i, n, cap in over[:10]],
                                                     "flagged_atomic_oversize": sum(c.quality.atomic_oversize for c in kept)}),
        CheckOutcome("no_empty_chunk", not empty, {"empty": len(empty), "examples": empty[:10]}),
        CheckOutcome("ids_unique", not dups, {"duplicated_ids": len(dups), "examples": dups[:10]}),
        # a parsed document may legitimately give no chunk (e.g. every message below the minimum length): warn
        CheckOutcome("inputs_accounted_for", not unacc, {"files": len(statuses), "chunked": len(chunked & set(statuses)),
                                                         "not_accounted": unacc[:20]}, severity="WARN"),
        CheckOutcome("dedup_log_complete", not problems, {"chunks_in": len(chunks_in), "kept": len(kept),
                                                          "log_rows": len(log), "problems": problems}),
    ]



def write_outcomes(path: str | Path, data_version: str, outcomes: list[CheckOutcome]) -> None:
    """Store the check outcomes of the ``deduped_chunks`` output of ``data_version`` as JSON (atomically), so that
    a run reusing that output reports them again without decoding its chunks (:func:`stored_outcomes`).

    Args:
        path: the JSON file (beside the partition's dedup log).
        data_version: the data version of the output the checks ran on.
        outcomes: the outcomes (:func:`deduped_checks`).
    """
    from heritage_pipeline.core.storage import write_text_atomic

    write_text_atomic(Path(path), json.dumps({"data_version": data_version, "checks": [asdict(o) for o in outcomes]},
                                             ensure_ascii=False))


def stored_outcomes(path: str | Path, data_version: str | None) -> list[CheckOutcome] | None:
    """The outcomes :func:`write_outcomes` stored for ``data_version`` (the checks are a function of the output and
    its inputs, which the data version fixes), or None when there are none for it (missing, unreadable, another
    version)."""
    if data_version is None:
        return None
    try:
        stored = json.loads(Path(path).read_text(encoding="utf-8"))
        if stored.get("data_version") != data_version:
            return None
        return [CheckOutcome(**o) for o in stored["checks"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
