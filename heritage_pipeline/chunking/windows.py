"""Windows over a group's units: balanced sizes, exact counts, breadcrumbs that fit, overlap heads.
"""

from __future__ import annotations

import bisect
import itertools
import math
from typing import TYPE_CHECKING

from heritage_pipeline.core.models import join_prefix

from .excluded import embedded_text

from .boundaries import SENTENCE_CUT, fence_of
from .ids import common_prefix
from .units import Head, Window

if TYPE_CHECKING:
    from .counting import DocState
    from .params import ChunkParams
    from .units import Group, Unit


class WindowPacker:
    """Packs units into windows of balanced size with exact token counts and overlap heads (mixin of
    :class:`~heritage_pipeline.chunking.chunker.Chunker`)."""

    def _pack(self, st: "DocState", params: ChunkParams, g: Group, units: list[Unit], overlap: int) -> list[Window]:
        """Greedy windows over units with a balanced target, never past the cap, each overlapping the previous one
        by at most ``overlap`` tokens (see the module docstring)."""
        n = len(units)
        if n == 0:
            return []
        sliding = params.mode == "sliding"
        base_anchors = g.anchors
        p_tok0 = self._prefix_tokens(self._prefix(base_anchors, params))
        total = sum(u.c_full for u in units)
        stride = max(1, params.size_tokens - p_tok0 - overlap)
        n_windows = max(1, math.ceil(max(0, total - overlap) / stride))
        balanced = math.ceil(max(0, total - overlap) / n_windows) + overlap + p_tok0
        eff_size = min(params.size_tokens, int(balanced * 1.05) + 8)
        cum = list(itertools.accumulate((u.c_full for u in units), initial=0))
        windows: list[Window] = []
        i, head = 0, None
        while i < n:
            anchors = st.doc.sections[units[i].sec].anchors if sliding else base_anchors
            prefix = self._prefix(anchors, params, units[i].cont_prefix if head is None else "")
            p_tok = self._prefix_tokens(prefix)
            cap = params.max_tokens - p_tok
            target = min(eff_size - p_tok, cap)
            must = windows[-1].last + 1 if windows else i  # the first unit the previous window did not hold
            j, run = self._grow(units, i, head, must, target, cap)
            rest = cum[n] - cum[j]
            if j > must and 0 < rest < params.min_tokens:
                # a short tail would remain: take it here when the window stays near the target, else share the
                # rest evenly with the last window
                if run + rest <= min(cap, int(target * 1.2)):
                    j = self._grow(units, i, head, must, cap, cap)[0]
                else:
                    j = max(must + 1, self._grow(units, i, head, must, (run + rest + overlap) // 2, cap)[0])
            if j <= must:  # the overlap left no room for the next new unit: start it without overlap
                i, head = must, None
                continue
            w = self._exact_window(st, params, units, i, j, head, prefix, base_anchors, sliding)
            if w.last < must:  # re-encoding showed no room for a new unit next to the overlap: drop the overlap
                i, head = must, None
                continue
            windows.append(w)
            if w.last + 1 >= n:
                break
            i, head = self._overlap_start(st, params, units, w, overlap)
        # a tail window under min_tokens merges into the previous window when the union stays under the cap and
        # near the target (a tail of at least half the minimum left by the balancing above is kept)
        if len(windows) >= 2 and windows[-1].n_tokens < params.min_tokens:
            a, b = windows[-2], windows[-1]
            merged = self._exact_window(st, params, units, a.first, b.last + 1, a.head, a.prefix, base_anchors, sliding,
                                        shrink=False)
            if merged.n_tokens <= params.max_tokens and (
                    b.n_tokens < params.min_tokens // 2 or merged.n_tokens <= params.size_tokens * 1.25):
                windows[-2:] = [merged]
        return windows

    @staticmethod
    def _grow(units: list[Unit], i: int, head: Head | None, must: int, target: int, cap: int) -> tuple[int, int]:
        """(end, tokens) of the window from ``[head] + units[i:]``: units up to ``must`` are taken while they fit
        the cap, later ones while they fit ``target`` (counts are additive estimates; the exact count follows)."""
        n = len(units)
        run = head.c_full if head is not None else 0
        j = i
        while j < n:
            u = units[j]
            if j > must or (j == must and j > i) or head is not None:
                if run + u.c_core > cap or (j > must and run + u.c_core > target):
                    break
            run += u.c_full
            j += 1
        return j, run

    def _exact_window(self, st: "DocState", params: ChunkParams, units: list[Unit], i: int, j: int, head: Head | None,
                      prefix: str, anchors: list[str], sliding: bool, shrink: bool = True) -> Window:
        """Window of [head] + units[i:j] with its exact token count; drops trailing units while over the cap."""
        cap = params.max_tokens
        while True:
            if sliding:
                anchors = self._window_anchors(st, units, i, j, head)
                prefix = self._prefix(anchors, params, units[i].cont_prefix if head is None else "")
            p_tok = self._prefix_tokens(prefix)
            u0 = units[i]
            if head is not None:
                start, f0, c0, rest = head.start, head.c_full, head.c_core, i
            elif u0.lead:  # the window text starts after the unit's leading space
                start = u0.start + u0.lead
                f0, c0 = st.without_lead(u0.start, start, u0.c_full, u0.c_core, u0.content_end, u0.end, u0.exact)
                rest = i + 1
            else:
                start, f0, c0, rest = u0.start, u0.c_full, u0.c_core, i + 1
            clean = all(units[k].clean for k in range(rest, j)) and all(units[k].exact for k in range(i, j))
            if clean:
                if rest >= j:
                    n_tok = p_tok + c0
                else:
                    n_tok = p_tok + f0 + sum(u.c_full for u in units[rest : j - 1]) + units[j - 1].c_core
            else:
                n_tok = self.tokenizer.count(join_prefix(prefix, st.normalized(start, units[j - 1].content_end).rstrip()))
            suffix = self._fence_suffix(st, units[j - 1])
            if suffix:  # (the closing fence merges with the text's last tokens: counted exactly, with the cap)
                n_tok = self.tokenizer.count(embedded_text(prefix, st.normalized(start, units[j - 1].content_end).rstrip(),
                                                           (), suffix))
            if n_tok > cap and j - 1 <= i and head is None and prefix:
                n_text = c0 if clean else self.tokenizer.count(st.normalized(start, units[j - 1].content_end).rstrip())
                shorter = self._fitting_prefix(anchors, params, u0.cont_prefix, n_text, cap)
                if shorter is not None:  # one unit that fits the cap alone: shorten the breadcrumb, never cut it
                    prefix = shorter
                    n_tok = self._prefix_tokens(prefix) + n_text if clean and not suffix else \
                        self.tokenizer.count(embedded_text(prefix, st.normalized(start, units[j - 1].content_end).rstrip(),
                                                           (), suffix))
            if n_tok <= cap or not shrink or (j - 1 <= i and head is None):
                break
            if j - 1 > i:
                j -= 1
            else:
                head = None
        kinds: dict[str, None] = {}
        if head is not None:
            kinds[units[head.unit].parts[-1][1]] = None
        for u in units[i:j]:
            for _, k in u.parts:
                kinds[k] = None
        oversize = next((u.oversize for u in units[i:j] if u.oversize), None)
        if n_tok > cap and oversize is None:
            oversize = "a single unit that cannot be split further exceeds the cap"
        return Window(start, units[j - 1].content_end, n_tok, prefix, i, j - 1, head, tuple(kinds), oversize,
                       list(anchors), suffix)

    def _fence_suffix(self, st: "DocState", u: Unit) -> str:
        """The closing fence to append when a window ends with ``u``, a piece of a fenced code block that stops
        before the block's closing fence line (or of an unclosed block); "" otherwise. The fence is the opening
        fence's run of backticks / tildes, so the embedded text is a balanced fenced block (SPEC §3)."""
        if u.fence:  # a piece of a fenced region inside a list item / admonition (units.UnitBuilder._split_block)
            return u.fence
        if u.whole or u.parts[-1][1] != "code":
            return ""
        fence = fence_of(st.doc.text, st.doc.blocks[st.block_at(u.parts[-1][0])])
        if fence is None:
            return ""
        opening, close_start = fence
        return opening if close_start < 0 or u.content_end <= close_start else ""

    def _fitting_prefix(self, anchors: list[str], params: ChunkParams, cont: str, n: int, cap: int) -> str | None:
        """The longest context prefix (outer breadcrumb levels dropped first, then the repeated table header or
        fence line ``cont``) with which a text of ``n`` tokens stays under ``cap``; None when even none fits."""
        for k in range(1, len(anchors) + 1):
            p = self._prefix(anchors[k:], params, cont)
            if self._prefix_tokens(p) + n <= cap:
                return p
        return "" if n <= cap else None

    def _window_anchors(self, st: "DocState", units: list[Unit], i: int, j: int, head: Head | None) -> list[str]:
        """Sliding mode: the common path of the sections a window touches."""
        secs = st.doc.sections
        first = units[head.unit].sec if head is not None else units[i].sec
        anchors = list(secs[first].anchors)
        seen = {first}
        for u in units[i:j]:
            for pos, _ in u.parts:
                k = st.section_index[st.block_at(pos)]
                if k not in seen:
                    seen.add(k)
                    anchors = common_prefix(anchors, secs[k].anchors)
        return anchors

    def _overlap_start(self, st: "DocState", params: ChunkParams, units: list[Unit], w: Window,
                       overlap: int) -> tuple[int, Head | None]:
        """Where the window after ``w`` starts: (first whole unit, partial head or None) such that the text it repeats
        from ``w`` has at most ``overlap`` tokens."""
        nxt = w.last + 1
        if overlap <= 0:
            return nxt, None
        acc = 0
        k = w.last
        lowest = w.first + 1 if w.head is None else w.first  # never repeat the whole previous window
        while k >= lowest:
            u = units[k]
            cost = u.c_core if k == w.last else u.c_full
            if acc + cost > overlap:
                break
            acc += cost
            k -= 1
        # units[k+1 .. w.last] are repeated whole; try a suffix of units[k] for the rest of the budget
        if k >= w.first:
            head = self._overlap_head(st, params, units, k, overlap - acc, is_last=k == w.last)
            if head is not None and head.start > w.start:
                return k + 1, head
        if k + 1 <= w.last and units[k + 1].lead:  # the repeat starts after that unit's leading space: recount
            u, last = units[k + 1], k + 1 == w.last
            f0, c0 = st.without_lead(u.start, u.start + u.lead, u.c_full, u.c_core, u.content_end, u.end, u.exact)
            if acc - (u.c_core if last else u.c_full) + (c0 if last else f0) > overlap:
                return k + 2, None
        return k + 1, None

    def _overlap_head(self, st: "DocState", params: ChunkParams, units: list[Unit], k: int, budget: int,
                      is_last: bool) -> Head | None:
        """The longest suffix of units[k] that starts at a line / sentence start inside a paragraph-like part (or at a
        later constituent start) and has at most ``budget`` tokens; None when there is none."""
        if budget < 8:
            return None
        text = st.doc.text
        u = units[k]
        cands: list[int] = []
        parts = u.parts
        for idx, (ps, kind) in enumerate(parts):
            pe = parts[idx + 1][0] if idx + 1 < len(parts) else u.content_end
            if idx > 0 and parts[idx - 1][1] != "heading":
                cands.append(ps)
            if kind not in params.keep_atomic and kind not in ("heading", "hr", "front_matter"):
                cands.extend(m.end() for m in SENTENCE_CUT.finditer(text, ps, pe) if m.end() < pe)
        if not cands:
            return None
        cands = sorted(set(c for c in cands if u.start < c < u.content_end))
        if not cands:
            return None
        chars_per_token = max(1.0, (u.content_end - u.start) / max(1, u.c_core))
        # The earliest candidate whose suffix fits (a choice that depends on token counts only, not on the estimate,
        # so CRLF and LF copies of a text get the same chunks): start at the estimate, walk right until the exact
        # count fits, then left while it still fits. Counts come from token offsets where they are known.
        j = min(bisect.bisect_left(cands, u.content_end - int(budget * chars_per_token * 0.95)), len(cands) - 1)
        found: Head | None = None
        while j < len(cands):
            full, core = st.suffix_counts(cands[j], u)
            if (core if is_last else full) <= budget:
                found = Head(cands[j], k, full, core)
                break
            j += 1
        if found is None:
            return None
        while j > 0:
            full, core = st.suffix_counts(cands[j - 1], u)
            if (core if is_last else full) > budget:
                break
            j -= 1
            found = Head(cands[j], k, full, core)
        return found
