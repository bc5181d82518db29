"""Conversation exports: every real variant parses or is quarantined with a reason, the rest proceeds; messages in
order, thinking handled by config, long messages split at block boundaries, spans inside the JSON string literals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from heritage_pipeline.core.config import ConversationSourceConfig, load_chunking_config
from heritage_pipeline.sources.conversation import parse_conversations
from heritage_pipeline.sources.discovery import load_source
from heritage_pipeline.sources.dispatch import parse_source
from heritage_pipeline.stages import chunk_documents
from heritage_pipeline.core.structure import ParseError
from heritage_pipeline.core.text import normalize

FIX = Path(__file__).parents[1] / "fixtures" / "conversation"
ALL = ConversationSourceConfig(min_message_chars=0)


def _parse(path: Path, cfg: ConversationSourceConfig = ALL):
    raw = path.read_text(encoding="utf-8")
    return raw, *parse_conversations(raw, doc_id=path.name, source_path=str(path), lang="en", cfg=cfg)


def _message_texts(doc):
    return [(s.meta["conversation_id"], s.meta["message_index"], s.meta["sender"],
             "\n\n".join(doc.text[b.start : b.content_end] for b in doc.blocks[s.first : s.last])) for s in doc.sections]


# file -> (sections with min_message_chars=0, problem locations); every shared variant is listed
SHARED_EXPECTED = {
    "osteele_claude_chat_viewer/claude-bakery-chat.json": (4, []),
    "osteele_claude_chat_viewer/conversation-rendering-tests.json": (10, []),
    "osteele_claude_chat_viewer/conversation-with-errors.json": (10, ["message msg-8 content[0]"]),
    "osteele_claude_chat_viewer/conversations-multiple-errors.json": (4, ["conversation conv-2"]),
    "osteele_claude_chat_viewer/conversations.json": (6, []),
    "osteele_claude_chat_viewer/history.json": (6, []),
    "polylogue/golden-claude_tool-conversations.json": (2, []),
    "polylogue/native-attachment-order.json": (2, []),
    "polylogue/native-rich-blocks-v1.json": (3, []),
    "polylogue/real-claude-with-attachments.json": (4, []),
    "polylogue/schema-representative-sample-00.json": (3, []),
}


def test_every_shared_variant_is_listed(shared_data):
    found = sorted(p.relative_to(shared_data / "conversations").as_posix()
                   for p in (shared_data / "conversations").rglob("*.json") if p.name != "MANIFEST.json")
    assert found == sorted(SHARED_EXPECTED)


@pytest.mark.parametrize("name", sorted(SHARED_EXPECTED))
def test_shared_variants_parse(shared_data, name):
    raw, doc, problems = _parse(shared_data / "conversations" / name)
    n_sections, problem_prefixes = SHARED_EXPECTED[name]
    assert len(doc.sections) == n_sections
    assert len(problems) == len(problem_prefixes)
    for (loc, reason), prefix in zip(problems, problem_prefixes):
        assert prefix in loc and reason
    for b in doc.blocks:  # spans inside the file and never empty
        assert 0 <= b.raw_start < b.raw_end <= len(raw)


def test_spans_are_the_json_literals_the_text_came_from(shared_data):
    """A block decoded from one JSON string literal has exactly that literal's characters as its span: decoding the
    raw slice as a JSON string gives back the block text. Holds for the large majority of real blocks; the others
    carry added labels (attachments, tool calls, artifacts) or were rebuilt from pieces out of file order."""
    exact = total = 0
    for name in SHARED_EXPECTED:
        raw, doc, _ = _parse(shared_data / "conversations" / name)
        for b in doc.blocks:
            total += 1
            try:
                decoded = json.loads('"' + raw[b.raw_start : b.raw_end] + '"')
            except ValueError:
                continue
            if normalize(decoded).strip() == doc.text[b.start : b.content_end]:
                exact += 1
    assert total > 300 and exact / total > 0.85, (exact, total)


def test_order_by_created_at_and_missing_uuids(shared_data):
    _, doc, _ = _parse(shared_data / "conversations/polylogue/native-attachment-order.json")
    msgs = _message_texts(doc)
    assert [m[1] for m in msgs] == [0, 1]
    assert msgs[0][3].startswith("Earlier synthetic message") and "[attachment earlier.txt]\nearlier" in msgs[0][3]
    assert msgs[1][3].count("[attachment duplicate.txt]") == 2  # both attachments of the same name are kept
    assert [s.key.rsplit("/", 1)[1] for s in doc.sections] == ["msg-1", "msg-0"]  # file positions, no uuid


@pytest.mark.parametrize("thinking", ["drop", "keep"])
def test_thinking_markup_follows_config(shared_data, thinking):
    cfg = ConversationSourceConfig(min_message_chars=0, thinking=thinking)
    _, doc, _ = _parse(shared_data / "conversations/osteele_claude_chat_viewer/conversation-with-errors.json", cfg)
    assert "antThinking" not in doc.text
    assert ("[thinking] This is a thinking block" in doc.text) == (thinking == "keep")
    _, doc, _ = _parse(shared_data / "conversations/polylogue/native-rich-blocks-v1.json", cfg)
    assert ("[thinking] considering options" in doc.text) == (thinking == "keep")  # a thinking content block
    assert "[tool_use web_search]\nquery: synthetic" in doc.text
    assert "first line" in doc.text and "second line" in doc.text  # tool_result text parts
    raw = json.dumps({"uuid": "c", "chat_messages": [{"uuid": "m", "sender": "assistant", "text":
                      "<anythingllm:thinking>\nweighing the sources\n</anythingllm:thinking>\n\nThe answer."}]})
    doc, _ = parse_conversations(raw, doc_id="t", source_path="t", lang="en", cfg=cfg)
    assert "anythingllm" not in doc.text and ("weighing the sources" in doc.text) == (thinking == "keep")
    assert doc.text.rstrip().endswith("The answer.")


def test_artifacts_become_fenced_code(shared_data):
    _, doc, _ = _parse(shared_data / "conversations/osteele_claude_chat_viewer/claude-bakery-chat.json")
    code = [b for b in doc.blocks if b.kind == "code"]
    assert code and all(doc.text[b.start : b.content_end].startswith("```jsx") for b in code)
    assert "[artifact: " in doc.text and "</antArtifact>" not in doc.text


def test_content_first_then_text(shared_data):
    _, doc, _ = _parse(shared_data / "conversations/osteele_claude_chat_viewer/conversation-with-errors.json")
    texts = {s.key.rsplit("/", 1)[1]: m[3] for s, m in zip(doc.sections, _message_texts(doc))}
    assert texts["msg-2"].startswith("This message has code blocks:")  # content[] is complete, text a summary
    assert texts["msg-3"] == "This message has null content array - should trigger error handling"  # content null
    assert texts["msg-8"] == "Text field is a number instead of string"  # the broken block is left out


def test_broken_fixture_messages_are_quarantined_and_the_rest_proceeds():
    cfg = load_chunking_config()
    out = parse_source(load_source(FIX / "mixed_errors.json"), cfg)
    reasons = {q.path.split("#", 1)[1]: q.reason for q in out.quarantined}
    assert all(q.path.startswith(str(FIX / "mixed_errors.json") + "#") for q in out.quarantined)
    assert reasons["conversation conv-mixed message[1]"] == "is a string, not an object"
    assert "'text' is a number, not a string" in reasons["conversation conv-mixed message m-2 content[1]"]
    assert "'content' is an object, expected an array of blocks" in reasons["conversation conv-mixed message m-3"]
    msgs = _message_texts(out.doc)
    assert [(m[1], m[2]) for m in msgs] == [(0, "human"), (1, "assistant")]  # by index, not file order
    chunks = chunk_documents([out.doc], cfg)
    assert {c.meta.message_index for c in chunks} == {0, 1}
    assert all(c.meta.conversation_id == "conv-mixed" and c.meta.created_at for c in chunks)


@pytest.mark.parametrize("name, reason", [
    ("truncated.json", "invalid JSON at line 1"),
    ("not_an_export.json", "not a conversation export"),
    ("all_broken.json", "conversation[0] is a string, not an object"),
])
def test_broken_files_are_quarantined_whole(name, reason):
    out = parse_source(load_source(FIX / name), load_chunking_config())
    assert out.doc is None and len(out.quarantined) == 1
    assert out.quarantined[0].path.endswith(name) and reason in out.quarantined[0].reason


def test_short_messages_are_skipped_with_reason(shared_data):
    _, doc, _ = _parse(shared_data / "conversations/osteele_claude_chat_viewer/conversations.json",
                       ConversationSourceConfig())
    assert len(doc.sections) == 1  # only the one message of 100+ characters
    assert any("99 characters < 100" in s for s in doc.skipped)


def test_long_message_is_split_at_block_boundaries(tokenizer):
    paragraphs = [f"Paragraph {i}: " + " ".join(f"word{i}_{k}" for k in range(120)) for i in range(12)]
    code = "```python\n" + "\n\n".join(f"def f{i}():\n    return {i}" for i in range(20)) + "\n```"
    body = "\n\n".join(paragraphs[:6] + [code] + paragraphs[6:])
    raw = json.dumps([{"uuid": "c", "name": "Long", "chat_messages": [
        {"uuid": "m", "sender": "assistant", "index": 0, "created_at": "2024-01-01T00:00:00Z", "text": body}]}])
    cfg = load_chunking_config()
    doc, problems = parse_conversations(raw, doc_id="long", source_path="long.json", lang="en", cfg=cfg.sources.conversation)
    chunks = chunk_documents([doc], cfg)
    assert problems == [] and len(chunks) > 3
    assert all(c.meta.len_tokens <= cfg.sources.conversation.max_tokens for c in chunks)
    assert all(tokenizer.count(c.embedding_text()) == c.meta.len_tokens for c in chunks)
    code_chunks = [c for c in chunks if "def f0():" in c.text]
    assert len(code_chunks) >= 1 and all("def f19():" in c.text for c in code_chunks)  # the fence is never cut
    lit_start = raw.index('"text": "') + len('"text": ')
    for c in chunks:
        assert lit_start <= c.spans.char_start < c.spans.char_end <= raw.index('"}]}]')
        first_line = c.text.split("\n", 1)[0]
        assert json.dumps(first_line)[1:-1] in raw[c.spans.char_start : c.spans.char_end]


def test_lone_surrogate_escapes_become_replacement_characters():
    """A "\\ud800" escape without its pair (seen in real exports) is not a character: it decodes as U+FFFD (one
    character for one escape, spans unchanged), so hashing, Parquet and the index never meet it (it crashed dedup)."""
    body = "Broken emoji \\ud83d here and a real pair \\ud83d\\ude00 there. " * 20
    raw = ('[{"uuid": "c", "name": "S", "chat_messages": [{"uuid": "m", "sender": "human", "index": 0, '
           '"created_at": "2024-01-01T00:00:00Z", "text": "' + body + '"}]}]')
    cfg = load_chunking_config()
    doc, problems = parse_conversations(raw, doc_id="s", source_path="s.json", lang="en", cfg=ALL)
    assert problems == []
    assert "\ufffd" in doc.text and "\U0001F600" in doc.text and "\ud83d" not in doc.text
    chunks = chunk_documents([doc], cfg)
    assert chunks and all(c.text.encode("utf-8") for c in chunks)


def test_not_json_raises_parse_error():
    with pytest.raises(ParseError, match="invalid JSON"):
        parse_conversations("{", doc_id="x", source_path="x", lang="en", cfg=ALL)
