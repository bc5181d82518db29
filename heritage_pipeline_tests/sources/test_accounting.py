"""Every input file is chunked, skipped (reason) or quarantined (reason), the counts add up, only VCS/OS/editor
files and our own outputs are ignored, and repeated reasons are grouped (one line, a count, three examples)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_pipeline.core.config import load_chunking_config
from heritage_pipeline.core.models import QuarantineRecord
from heritage_pipeline.sources.accounting import group_reasons, parsed_file, reason_key, summarize_inputs
from heritage_pipeline.sources.discovery import discover, is_ignored
from heritage_pipeline.stages import parse_sources

REPO = Path(__file__).parents[2]


def _summary(data_dir: Path):
    sources = discover(data_dir)
    parsed = parse_sources(sources, load_chunking_config())
    statuses = {s.path: (s.status, parsed.accounted[s.path].partition(": ")[2] or s.reason) for s in sources}
    return sources, summarize_inputs(statuses, [parsed_file(d) for d in parsed.docs], parsed.quarantined)


def _tree(root: Path) -> dict[str, bytes]:
    files = {
        "raw/document/notes/Sources.md": b"# Sources\n\nWhere the photographs come from: the city archive.\n",
        "raw/document/notes/COPYING": b"Copying is permitted under CC0.\n",
        "raw/document/notes/LICENSE.CC0.txt": b"CC0 1.0 Universal\n",
        "raw/document/notes/picture.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00",
        "raw/document/notes/empty.md": b"",
        "raw/document/notes/data.xyz": b"something",
        "raw/conversation/manifest.json": json.dumps({"files": ["a.json"]}).encode(),
        "raw/conversation/chat.json": json.dumps({"messages": [{"role": "user", "content": "Where is the reading room?"},
                                                               {"role": "assistant", "content": "On the first floor."}]}).encode(),
        "raw/conversation/broken1.json": b"{oops",
        "raw/conversation/broken2.json": b"{oops again",
        "raw/yaml_instance/schema.yaml": (REPO / "data/eval/sources/yaml_instance/linkml__linkml/examples/tutorial/"
                                          "tutorial01/personinfo.yaml").read_bytes(),
        "raw/yaml_instance/museums.yml": b"- name: Museum Boijmans\n  city: Rotterdam\n- just text\n",
        "raw/misc/readme.md": b"# not a source type folder\n",
        "raw/stray.md": b"# directly under raw\n",
        # ignored: version control, OS, editor, our own outputs
        "raw/document/.git/config": b"[core]\n",
        "raw/document/notes/.DS_Store": b"\x00\x00\x00\x01Bud1",
        "raw/document/notes/draft.md~": b"backup",
        "raw/document/notes/.draft.md.swp": b"swap",
        "raw/document/out.quarantine.jsonl": b"{}\n",
    }
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return files


def test_every_input_file_appears_in_the_summary(tmp_path):
    files = _tree(tmp_path)
    sources, s = _summary(tmp_path)
    expected = {rel for rel in files if not any(is_ignored(part) for part in Path(rel).parts)}
    assert set(s.statuses) == expected == {src.path for src in sources}
    assert len(expected) == 14  # the 5 VCS/OS/editor/output files are the only ones left out
    s.check()
    assert s.files == s.chunked + s.n_skipped + s.n_quarantined == 14
    st_ = s.statuses
    # regressions: these vanished without a message before (they were on an ignore list)
    assert st_["raw/document/notes/Sources.md"] == "chunked"
    assert st_["raw/document/notes/COPYING"] == "skipped" and st_["raw/conversation/manifest.json"] == "quarantined"
    assert st_["raw/yaml_instance/schema.yaml"] == "skipped" and st_["raw/document/notes/picture.png"] == "quarantined"
    assert st_["raw/conversation/chat.json"] == "chunked" and st_["raw/yaml_instance/museums.yml"] == "chunked"
    reasons = {g.reason: g.count for g in s.skipped}
    assert reasons["licence or provenance file beside the data, not input"] == 2
    assert reasons["LinkML schema, not instance data"] == 1
    broken = [g for g in s.quarantined if g.reason.startswith("invalid JSON")]
    assert len(broken) == 1 and broken[0].count == 2  # one line for the repeated reason
    assert s.parts["entities"].read == 2 and s.parts["entities"].chunked == 1 and s.parts["entities"].quarantined == 1
    assert s.parts["messages"].read == 2 == s.parts["messages"].chunked
    lines = s.lines()
    assert lines[0] == f"inputs: 14 files = {s.chunked} chunked + {s.n_skipped} skipped + {s.n_quarantined} quarantined"
    assert sum(1 for line in lines if "invalid JSON" in line) == 1


def test_bundled_data_every_file_accounted(bundled_data):
    sources, s = _summary(bundled_data)
    on_disk = {f.relative_to(bundled_data).as_posix() for f in (bundled_data / "raw").rglob("*") if f.is_file()
               and not any(is_ignored(p) for p in f.relative_to(bundled_data / "raw").parts)}
    assert set(s.statuses) == on_disk
    s.check()
    assert all(g.reason == "licence or provenance file beside the data, not input" for g in s.skipped)


def test_reasons_group_by_shape_with_three_examples():
    items = [(f"f{i}.json", f"invalid JSON at line {i} column {i + 1}: Expecting value") for i in range(5)]
    items += [("g.yaml", "custodian_type: 'Z' not in InstitutionTypeCodeEnum"),
              ("h.yaml", "custodian_type: 'Q' not in InstitutionTypeCodeEnum")]
    groups = group_reasons(items)
    assert [(g.count, g.examples) for g in groups] == [(5, ["f0.json", "f1.json", "f2.json"]), (2, ["g.yaml", "h.yaml"])]
    assert groups[0].reason == "invalid JSON at line N column N: Expecting value"
    assert groups[0].line() == ("5 × invalid JSON at line N column N: Expecting value "
                                "(e.g. f0.json, f1.json, f2.json, … (2 more))")
    assert reason_key("row 12 (line 13)") == "row N (line N)"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["ok", "skipped", "quarantined"]), st.sampled_from(["a", "b 1", "b 2", "c 'x'"])),
                min_size=0, max_size=30))
def test_counts_always_add_up(entries):
    statuses = {f"f{i}": (status, why) for i, (status, why) in enumerate(entries)}
    quarantined = [QuarantineRecord(path=p, reason=why, source_type="document") for p, (status, why) in statuses.items()
                   if status == "quarantined"]
    s = summarize_inputs(statuses, [], quarantined)
    s.check()
    assert sum(g.count for g in s.skipped) + sum(g.count for g in s.quarantined) + s.chunked == len(entries)


def test_text_quality_from_a_runs_storage_matches_the_chunks(tmp_path):
    """``run`` reads the stored chunks: the same unclosed-fence counts as from the chunk objects, and running
    header/footer lines from the stored parsed documents' metadata."""
    import pyarrow.parquet as pq

    from heritage_pipeline.core.models import chunks_to_table
    from heritage_pipeline.sources.accounting import ParsedFile, text_quality, text_quality_from_storage
    from heritage_pipeline.stages import chunk_documents

    md = tmp_path / "raw" / "document" / "guide.md"
    md.parent.mkdir(parents=True)
    md.write_text("# Install\n\n" + "Some words about the install. " * 40 + "\n\n```bash\n"
                  + "".join(f"step {i} of the long install script\n" for i in range(400)))
    parsed = parse_sources(discover(tmp_path), load_chunking_config())
    chunks = chunk_documents(parsed.docs, load_chunking_config())
    assert sum(c.quality.unclosed_fence for c in chunks) >= 2  # a long unclosed block: several pieces flagged
    (tmp_path / "storage" / "chunks" / "en").mkdir(parents=True)
    pq.write_table(chunks_to_table(chunks), tmp_path / "storage" / "chunks" / "en" / "document.parquet")
    files = [ParsedFile("bulletin.txt", "document", 3, {"excluded_counts": {"markup": 0, "running_lines": 6}}, [], [])]
    stored = text_quality_from_storage(tmp_path / "storage", files)
    direct = text_quality(chunks, files)
    assert stored.unclosed_fence_chunks == direct.unclosed_fence_chunks != {}
    assert stored.running_lines == {"bulletin.txt": 6}
    assert any("running headers/footers" in line and "6 lines" in line for line in stored.lines())


def test_left_out_messages_are_grouped_by_reason_with_counts_and_examples(tmp_path):
    """Trial defect 2: the summary said only "18 left out". Every left-out reason is a line with its count and
    examples (``file#conversation ... message ...``), and a quarantined JSON Lines line is listed as a line, not
    counted as a message."""
    conv = lambda i: json.dumps({"id": f"c{i}", "messages": [
        {"role": "system", "content": "route to desk"}, {"role": "user", "content": f"Where is room {i}?"},
        {"role": "assistant", "content": ""}, {"role": "agent", "content": f"Room {i} is on the first floor."}]})
    (tmp_path / "raw" / "conversation").mkdir(parents=True)
    (tmp_path / "raw" / "conversation" / "log.jsonl").write_text("# a comment\n" + "\n".join(conv(i) for i in range(4)))
    _, s = _summary(tmp_path)
    lines = s.lines()
    assert "messages: 16 read = 8 chunked + 8 left out + 0 quarantined" in lines
    i = lines.index("left out messages (8):")
    assert lines[i + 1].startswith("  4 × empty message (e.g. ") and "log.jsonl#conversation c0 message msg-2" in lines[i + 1]
    assert lines[i + 2].startswith("  4 × role 'system' left out") and "(1 more)" in lines[i + 2]
    assert "quarantined lines (1 record):" in lines
