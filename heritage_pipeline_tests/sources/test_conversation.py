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
ALL = ConversationSourceConfig(min_message_chars=0, question_max_chars=0)  # every message a section of its own


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
    # by index, not file order; the question opens its answer's section (sources.conversation.question_max_chars)
    assert [(s.meta["extra"].get("message_indexes"), s.meta["extra"].get("senders")) for s in out.doc.sections] == \
        [("0, 1", "human, assistant")]
    chunks = chunk_documents([out.doc], cfg)
    assert {c.meta.message_index for c in chunks} == {0}
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


def test_short_messages_join_their_neighbour_and_none_is_lost(shared_data):
    """Default min_message_chars (100): a short question opens the next answer's chunk, a short answer stays with
    its question; every message of the file is in exactly one section (it used to keep 1 of 6)."""
    _, doc, _ = _parse(shared_data / "conversations/osteele_claude_chat_viewer/conversations.json",
                       ConversationSourceConfig())
    assert doc.meta["messages"] == doc.meta["messages_chunked"] == 6
    covered = [(s.meta["conversation_id"], i) for s in doc.sections
               for i in map(int, s.meta["extra"].get("message_indexes", str(s.meta["message_index"])).split(", "))]
    assert len(covered) == len(set(covered)) == 6
    joined = [s for s in doc.sections if "message_indexes" in s.meta["extra"]]
    assert joined and all(s.meta["extra"]["senders"].startswith("human") for s in joined)


def _turn(role, text):
    return {"role": role, "content": text}


@pytest.mark.parametrize("min_chars", [0, 20, 100, 10_000])
def test_grouping_keeps_every_message_once(min_chars):
    """Property over a scripted conversation: whatever the threshold, every kept message is in exactly one
    section, sections follow the conversation order, and a section with several messages ends with its longest
    (the answer) unless it is a trailing run of questions."""
    msgs = [_turn("user", "hi"), _turn("assistant", "Hello! " * 30), _turn("user", "why?"), _turn("user", "and how?"),
            _turn("assistant", "ok"), _turn("system", "hidden instructions"), _turn("user", "A long question " * 10),
            _turn("assistant", "short"), _turn("user", "bye")]
    raw = json.dumps({"messages": msgs})
    doc, problems = parse_conversations(raw, doc_id="g", source_path="g.json", lang="en",
                                        cfg=ConversationSourceConfig(min_message_chars=min_chars,
                                                                     question_max_chars=0))
    order = [int(i) for s in doc.sections
             for i in s.meta["extra"].get("message_indexes", str(s.meta["message_index"])).split(", ")]
    assert order == [0, 1, 2, 3, 4, 6, 7, 8]  # the system message is left out (keep_roles), nothing else
    assert doc.meta["messages_left_out"] == 1 and problems == []
    if min_chars == 0:
        assert len(doc.sections) == 8


def test_keep_roles_keeps_system_messages():
    raw = json.dumps([{"role": "system", "content": "You are a helpful archivist."}, {"role": "user", "content": "Hi"}])
    doc, _ = parse_conversations(raw, doc_id="k", source_path="k.json", lang="en",
                                 cfg=ConversationSourceConfig(min_message_chars=0, keep_roles=["system"]))
    assert [s.meta["sender"] for s in doc.sections] == ["system", "user"]


def test_unknown_shape_names_the_supported_formats():
    with pytest.raises(ParseError, match=r"ChatGPT export \(mapping tree\)"):
        parse_conversations('{"foo": [1, 2]}', doc_id="u", source_path="u.json", lang="en", cfg=ALL)


# ---------------------------------------------------------------------------------------- real files (data/eval)
REAL = Path(__file__).parents[2] / "data" / "eval" / "sources" / "conversation"
# file -> (format, messages read, messages chunked, sections at the default 100 characters, quarantined parts);
# staging SPLIT.md: tune = chatlore + openai-cookbook, held-out = chatlectify + geniusrise; the realworld files
# (shared/data/realworld) were not tuned on
REAL_EXPECTED = {
    "cl0ver012__chatlore/tests/fixtures/chatgpt/conversations.json": ("chatgpt (3)", 10, 7, 3, 1),
    "cl0ver012__chatlore/tests/fixtures/claude/conversations.json": ("claude (2)", 7, 6, 4, 1),
    "openai__openai-cookbook/examples/data/toy_chat_fine_tuning.jsonl": ("messages (5)", 19, 15, 8, 0),
    "0x1Adi__chatlectify/tests/fixtures/chatgpt_export.json": ("chatgpt (1)", 3, 3, 2, 0),
    "0x1Adi__chatlectify/tests/fixtures/claude_export.json": ("claude (1)", 10, 10, 3, 0),
    "geniusrise__you/tests/fixtures/chatgpt/conversations.json": ("chatgpt (1)", 2, 2, 1, 0),
    "geniusrise__you/tests/fixtures/claude-ai/conversations.json": ("claude (1)", 3, 3, 2, 0),
    "chatgpt-export-parser/tests/example-conversation.json": ("chatgpt (1)", 5, 4, 2, 0),
    "chatgpt2graph/examples/conversations.json": ("chatgpt (1)", 44, 31, 21, 0),  # 3 questions of 100-1000 chars joined
    "claude-to-sqlite/tests/artifacts.json": ("claude (1)", 20, 20, 10, 0),  # 6 questions of 100-1000 chars joined
    "claude-to-sqlite/tests/example.json": ("claude (1)", 2, 2, 1, 0),
    "ctxray/tests/fixtures/cline_task/api_conversation_history.json": ("messages (1)", 9, 9, 4, 0),
    "ctxray/tests/fixtures/gemini_session.json": ("messages (1)", 8, 6, 3, 0),
    "looselips/examples/conversations.json": ("chatgpt (5)", 10, 10, 5, 0),
}


def test_every_real_export_is_listed():
    found = sorted(p.relative_to(REAL).as_posix() for p in REAL.rglob("*") if p.is_file())
    assert found == sorted(REAL_EXPECTED)


@pytest.mark.parametrize("rel", sorted(REAL_EXPECTED))
def test_real_exports(rel):
    fmt, n_read, n_chunked, n_sections, n_quarantined = REAL_EXPECTED[rel]
    cfg = load_chunking_config()
    out = parse_source(load_source(REAL / rel, source_type="conversation"), cfg)
    assert out.doc is not None, out.quarantined
    m = out.doc.meta
    assert (m["formats"], m["messages"], m["messages_chunked"], len(out.doc.sections), len(out.quarantined)) == \
        (fmt, n_read, n_chunked, n_sections, n_quarantined)
    assert m["messages_chunked"] + m["messages_left_out"] == m["messages"]  # every message read is accounted for
    raw = (REAL / rel).read_text(encoding="utf-8")
    chunks = chunk_documents([out.doc], cfg)
    for c in chunks:
        assert 0 <= c.spans.char_start < c.spans.char_end <= len(raw)
        first_words = c.text.split("\n", 1)[0][:20]
        if first_words and not first_words.startswith(("[", "```")):
            assert json.dumps(first_words)[1:-1][:10] in raw[c.spans.char_start:c.spans.char_end]


def test_chatgpt_follows_the_current_branch():
    """chatlore: u1 has two answers (a1 regenerated, a2 current); only a2 is on the branch of current_node, and the
    system node and the tool output are left out."""
    _, doc, _ = _parse(REAL / "cl0ver012__chatlore/tests/fixtures/chatgpt/conversations.json", ALL)
    texts = [m[3] for m in _message_texts(doc)]
    assert "You are missing an index on customer_id. Add a composite index." in texts
    assert "First answer that was regenerated." not in texts and "CREATE INDEX" not in texts
    assert any(t.startswith("```sql\nCREATE INDEX idx_orders_customer") for t in texts)


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


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant", "system", "tool", "gpt", "human"]),
                          st.integers(min_value=0, max_value=180)), max_size=25),
       st.sampled_from([0, 1, 50, 100, 1000]))
def test_property_every_message_once_in_order_with_spans_in_its_literals(turns, min_chars):
    """Random conversations: every human/assistant message with text is in exactly one section, in order; system
    and tool messages are left out and counted; read = chunked + left out + quarantined; every chunk span lies in
    the raw file and starts inside the JSON literal of its first message."""
    msgs = [{"role": role, "content": (f"m{i} " + "word " * n).strip() if n else "   "} for i, (role, n) in enumerate(turns)]
    raw = json.dumps({"messages": msgs}, indent=1)
    cfg = ConversationSourceConfig(min_message_chars=min_chars)
    doc, problems = parse_conversations(raw, doc_id="p", source_path="p.json", lang="en", cfg=cfg)
    expected = [i for i, (role, n) in enumerate(turns) if role not in ("system", "tool") and n]
    got = [int(i) for s in doc.sections
           for i in s.meta["extra"].get("message_indexes", str(s.meta["message_index"])).split(", ")]
    assert got == expected and problems == []
    m = doc.meta
    assert m["messages"] == len(turns) == m["messages_chunked"] + m["messages_left_out"] + m["messages_quarantined"]
    for c in chunk_documents([doc], load_chunking_config()):
        assert 0 <= c.spans.char_start < c.spans.char_end <= len(raw)
        assert c.text.split()[0] in raw[c.spans.char_start:c.spans.char_end]


def test_sharegpt_and_jsonl():
    share = json.dumps([{"id": "s1", "conversations": [{"from": "human", "value": "Where is the Rijksmuseum?"},
                                                        {"from": "gpt", "value": "In Amsterdam, at the Museumplein."}]}])
    doc, problems = parse_conversations(share, doc_id="s", source_path="s.json", lang="en", cfg=ALL)
    assert doc.meta["formats"] == "sharegpt (1)" and [s.meta["sender"] for s in doc.sections] == ["human", "gpt"]
    lines = "\n".join(json.dumps({"messages": [{"role": "user", "content": f"Question {i}?"},
                                               {"role": "assistant", "content": f"Answer {i}."}]}) for i in range(3))
    doc, problems = parse_conversations(lines + "\n", doc_id="j", source_path="j.jsonl", lang="en", cfg=ALL)
    assert doc.meta["formats"] == "messages (3)" and len(doc.sections) == 6 and problems == []
    for s in doc.sections:  # spans point into the JSONL text itself (the array wrapping shifts nothing)
        b = doc.blocks[s.first]
        assert lines[b.raw_start:b.raw_end] == doc.text[b.start:b.content_end]


# ------------------------------------------------------------------------------ a question beside its answer
def _sections_of(msgs, **cfg):
    raw = json.dumps({"messages": msgs})
    doc, problems = parse_conversations(raw, doc_id="q", source_path="q.json", lang="en",
                                        cfg=ConversationSourceConfig(**cfg))
    assert problems == []
    return doc, [[int(i) for i in s.meta["extra"].get("message_indexes", str(s.meta["message_index"])).split(", ")]
                 for s in doc.sections]


def test_a_question_over_min_message_chars_opens_its_answers_chunk():
    """A 118-character question was a chunk of its own (only turns under min_message_chars=100 joined): a question up
    to question_max_chars opens the answer's chunk, so a search for the answer finds the question beside it; a
    question followed by another question, or longer than the limit, stays alone; 0 restores the old grouping."""
    question = ("Those fields should all start blank, while the prices should start at zero. Use the change event, "
                "not the input one.")
    assert 100 <= len(question) <= 1000
    answer = "I have changed the form: every field now starts empty and the prices start at zero. " * 12
    long_q = "Please also explain in detail why the calculator rounds the prices as it does. " * 15
    msgs = [_turn("user", question), _turn("assistant", answer), _turn("user", question + " Also a second point."),
            _turn("user", "ok?"), _turn("assistant", answer), _turn("user", long_q), _turn("assistant", answer),
            _turn("user", question)]
    assert len(long_q) > 1000
    doc, groups = _sections_of(msgs)
    assert groups == [[0, 1], [2], [3, 4], [5], [6], [7]]
    assert doc.meta["messages"] == doc.meta["messages_chunked"] == 8
    first = doc.sections[0]
    assert first.meta["extra"]["senders"] == "user, assistant" and first.meta["message_index"] == 0
    chunks = chunk_documents([doc], load_chunking_config())
    assert chunks[0].text.startswith("Those fields should all start blank") and "I have changed the form" in chunks[0].text
    _, old = _sections_of(msgs, question_max_chars=0)
    assert old == [[0], [1], [2], [3, 4], [5], [6], [7]]  # the SPEC rule alone: only "ok?" (< 100) joins


def test_real_claude_export_questions_share_the_chunk_of_their_answer():
    """claude-to-sqlite's artifacts.json (realworld, 20 messages, 9 questions of 68-427 characters): no question of at
    most question_max_chars is a section of its own when an answer follows it; each such section's first chunk starts
    with its question (a long answer whose first block is a large code block starts in the next window of the
    same section: the chunker packs blocks up to the target size)."""
    path = Path("/work/shared/data/realworld/raw/conversation/claude-to-sqlite/tests/artifacts.json")
    if not path.exists():
        pytest.skip("realworld data not mounted")
    cfg = ConversationSourceConfig()
    raw, doc, problems = _parse(path, cfg)
    senders = [s.meta["extra"].get("senders", s.meta["sender"]).split(", ") for s in doc.sections]
    for k in range(len(senders) - 1):
        lone_question = senders[k] == ["human"]
        assert not (lone_question and senders[k + 1][0] == "assistant"), k
    joined = [s for s in doc.sections if s.meta["extra"].get("senders", "").startswith("human")]
    assert len(joined) >= 8  # 9 questions, one of them (the first, followed by another question) alone
    chunks = chunk_documents([doc], load_chunking_config())
    for sec in joined:
        first = next(c for c in chunks if c.meta.source_id == sec.meta["source_id"]
                     and c.meta.message_index == sec.meta["message_index"])
        q_id = sec.meta["extra"]["message_ids"].split(", ")[0]
        q_text = next(m["text"] for m in json.loads(raw)[0]["chat_messages"] if m["uuid"] == q_id)
        assert first.text.startswith(normalize(q_text.strip()).split("\n")[0][:40])
        same = [c for c in chunks if c.meta.source_id == sec.meta["source_id"]
                and c.meta.message_index == sec.meta["message_index"]]
        assert sum(len(c.text) for c in same) > len(q_text.strip())  # the answer's text follows in the same section


@pytest.mark.parametrize("answering", ["agent", "Agent", "support", "chatbot", "human-agent", "operator"])
def test_answering_roles_of_service_chats_are_chunked(answering):
    """Trial defect 2: a sales chat's ``agent`` turns (romeuow/conversation-grader) were left out as an unknown role;
    the answering side of a customer-service log is chunked like ``assistant``, and a short customer question
    opens the answer's chunk."""
    raw = "\n".join(json.dumps({"id": f"c{i}", "messages": [
        {"role": "customer", "text": "Do you open on Sundays?"},
        {"role": answering, "text": "Yes, the reading room opens on Sundays from 12:00 to 17:00 for members."},
        {"role": "system", "text": "internal routing note"}]}) for i in range(2))
    doc, problems = parse_conversations(raw, doc_id="s", source_path="s.jsonl", lang="en",
                                        cfg=ConversationSourceConfig())
    assert problems == [] and doc.meta["messages_chunked"] == 4 and doc.meta["messages_left_out"] == 2
    assert [s.meta["extra"]["senders"] for s in doc.sections] == [f"customer, {answering}"] * 2
    assert doc.meta["left_out_reasons"] == [{
        "reason": "role 'system' left out (not an asking or answering role; sources.conversation.keep_roles keeps it)",
        "key": "role '…' left out (not an asking or answering role; sources.conversation.keep_roles keeps it)",
        "count": 2, "examples": ["conversation c0 message msg-2", "conversation c1 message msg-2"]}]


def test_a_bad_jsonl_line_is_quarantined_alone_and_the_rest_is_chunked(tmp_path):
    """Trial defect 3: a ``# comment`` first line of a JSON Lines export quarantined the whole file ("invalid JSON at
    line 1 column 1"), losing all 10 conversations. Only that line is quarantined (``file#line N``); a truncated
    line too; the other conversations are chunked and their spans still point into the raw file."""
    conv = lambda i: json.dumps({"id": f"c{i}", "messages": [{"role": "user", "text": f"Question {i} about the archive?"},
                                                              {"role": "bot", "text": f"Answer {i}: ask at the desk."}]})
    text = "# Made-up conversations, one per line.\n" + conv(0) + "\n" + conv(1)[:30] + "\n" + conv(2) + "\n"
    path = tmp_path / "log.jsonl"
    path.write_text(text, encoding="utf-8")
    out = parse_source(load_source(path), load_chunking_config())
    assert out.doc is not None and out.doc.meta["conversations"] == 2
    assert sorted((q.path, q.reason) for q in out.quarantined) == [
        (f"{path}#line 1", "JSON Lines line is not JSON (a comment line)"),
        (f"{path}#line 3", "JSON Lines line is not JSON (invalid JSON at column 28: Unterminated string starting at)")]
    chunks = chunk_documents([out.doc], load_chunking_config())
    assert {c.meta.conversation_id for c in chunks} == {"c0", "c2"}
    for c in chunks:
        assert "Question" in text[c.spans.char_start:c.spans.char_end]
    # a file that is mostly not JSON Lines stays one parse error (a broken pretty-printed JSON file)
    with pytest.raises(ParseError):
        parse_conversations('{\n  "id": "x",\n  "messages": [\n' + conv(0) + "\n", doc_id="p", source_path="p.json",
                            lang="en", cfg=ALL)


def test_real_trial_exports_keep_agent_turns_and_survive_a_comment_line():
    """The trial's saved exports (when present on this machine): the agent turns of the sales chat are chunked and
    the comment line of the support-bot log costs that line only."""
    trial = Path("/tmp/trial/files/chat")
    if not trial.exists():
        pytest.skip("trial files not on this machine")
    cfg = load_chunking_config()
    sales = parse_source(load_source(trial / "romeuow_conversation-grader_conversations.jsonl"), cfg).doc
    assert sales.meta["messages_left_out"] == 0 and sales.meta["messages_chunked"] == sales.meta["messages"]
    out = parse_source(load_source(trial / "innerluxes_chat-log-review_conversations.jsonl"), cfg)
    assert out.doc.meta["conversations"] == 10 and [q.path.rsplit("#", 1)[1] for q in out.quarantined] == ["line 1"]
