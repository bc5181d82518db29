"""Heading sections -> groups: headings without a body, small sibling sections merged, whole vs windowed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from heritage_pipeline.core.structure import Block, Section

from .ids import common_prefix
from .params import adaptive_overlap_ratio
from .units import Group, Window

if TYPE_CHECKING:
    from .counting import DocState
    from .params import ChunkParams


class SectionGrouper:
    """Groups a document's heading sections into chunkable groups and decides, per group, between one
    whole chunk and windows (mixin of :class:`~heritage_pipeline.chunking.chunker.Chunker`)."""

    def _groups(self, st: "DocState", params: ChunkParams) -> list[Group]:
        doc = st.doc
        secs = [(k, s) for k, s in enumerate(doc.sections) if s.last > s.first]
        if params.mode == "sliding":
            # one group per run of non-standalone sections: windows flow across headings
            out: list[Group] = []
            for k, s in secs:
                if out and not s.standalone and out[-1].section is not None and not out[-1].section.standalone:
                    g = out[-1]
                    g.last = s.last
                    g.secs += (k,)
                    g.anchors = common_prefix(g.anchors, s.anchors)
                    continue
                out.append(Group(list(s.anchors), s.first, s.last, s, len(s.anchors), secs=(k,)))
            return out
        groups: list[Group] = []
        pending: Group | None = None
        kinds = st.kinds
        # (anchor lists are shared, never mutated in place: merges build new lists)
        for k, s in secs:
            g = Group(s.anchors, s.first, s.last, s, len(s.anchors), secs=(k,))
            if pending is not None:
                ancestor = g.anchors[: len(pending.anchors)] == pending.anchors
                g = _merge_groups(pending, g, section=s)
                if ancestor:  # "# A" with no body, then "## B": the chunk is A › B's, not just A's
                    g.anchors = s.anchors
                pending = None
            heading_only = kinds[s.last - 1] == "heading" and kinds[s.first : s.last].count("heading") == s.last - s.first
            if heading_only and not s.standalone:
                pending = g  # a heading with no body joins the section after it
                continue
            groups.append(g)
        if pending is not None:
            if groups and not _standalone(groups[-1]):
                groups[-1] = _merge_groups(groups[-1], pending, section=groups[-1].section)
            else:
                groups.append(pending)
        if not params.merge_small_sections or len(groups) < 2:
            return groups
        out = []
        for g in groups:
            if out and not _standalone(g) and not _standalone(out[-1]):
                prev = out[-1]
                pf, pc = self._group_counts(st, prev, params)
                gf, gc = self._group_counts(st, g, params)
                # tiny sibling sections merge up to the target: a group that is already a merge of tiny ones takes
                # the next tiny sibling whatever its own size so far (else the 12th of 12 tiny options stayed alone)
                if (pc < params.min_tokens or prev.merged_headings) and gc < params.min_tokens:
                    anchors = common_prefix(prev.anchors, g.anchors)
                    depth = max(prev.depth, g.depth)
                    total = pf + gc + self._prefix_tokens(self._prefix(anchors, params))
                    if len(anchors) >= depth - 1 and total <= params.size_tokens:
                        merged = _merge_groups(prev, g, section=prev.section)
                        merged.c_full, merged.c_core = pf + gf, pf + gc
                        merged.merged_headings = (prev.merged_headings or _headings(doc, prev)) + _headings(doc, g)
                        out[-1] = merged
                        continue
            out.append(g)
        return out

    def _group_counts(self, st: "DocState", g: Group, params: ChunkParams) -> tuple[int, int]:
        """(tokens with trailing whitespace, without) of the group's blocks, exact; cached on the group."""
        if g.c_full < 0:
            g.c_full, g.c_core = st.run_counts(g.first, g.last, params.whole_limit)
        return g.c_full, g.c_core

    def _chunk_group(self, st: "DocState", params: ChunkParams, g: Group) -> list[Window]:
        doc = st.doc
        prefix = self._prefix(g.anchors, params)
        p_tok = self._prefix_tokens(prefix)
        whole_limit = params.whole_limit
        if params.mode != "sliding":
            _, core = self._group_counts(st, g, params)
            if p_tok + core <= whole_limit:
                b0, b1 = doc.blocks[g.first], doc.blocks[g.last - 1]
                kinds = tuple(dict.fromkeys(st.kinds[g.first : g.last]))
                return [Window(b0.start, b1.content_end, p_tok + core, prefix, g.first, g.last - 1, None, kinds, None,
                                g.anchors)]
        overlap = params.overlap_tokens
        if params.adaptive_overlap:
            sec_text = doc.text[doc.blocks[g.first].start : doc.blocks[g.last - 1].content_end]
            overlap = min(params.size_tokens // 2, round(params.size_tokens * adaptive_overlap_ratio(sec_text)))
        units = self._units(st, params, g)
        return self._pack(st, params, g, units, overlap)


def _headings(doc, g: Group) -> tuple[str, ...]:
    """Headings of a group's member sections (the last anchor of each), in order (meta.sections of a merge); a
    body-less parent heading that joined its first child is the parent, not a merged section."""
    out = []
    for k in g.secs:
        a = doc.sections[k].anchors
        if a and not (len(a) < len(g.anchors) and g.anchors[: len(a)] == a):
            out.append(a[-1])
    return tuple(out)


def _standalone(g: Group) -> bool:
    return g.section is not None and g.section.standalone


def _merge_groups(a: Group, b: Group, section: Section | None) -> Group:
    return Group(common_prefix(a.anchors, b.anchors), a.first, b.last, section, max(a.depth, b.depth),
                  secs=a.secs + b.secs)


def block_index(blocks: list[Block], pos: int) -> int:
    lo, hi = 0, len(blocks) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if blocks[mid].start <= pos:
            lo = mid
        else:
            hi = mid - 1
    return lo
