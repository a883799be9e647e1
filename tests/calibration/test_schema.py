from datetime import timedelta, timezone

import pytest
from pydantic import ValidationError

from pipeline.contracts.business_record import Message, Record, Rubric


def _record(**overrides):
    data = {
        "id": "r-000123",
        "conversation_id": "c-000045",
        "timestamp": "2026-08-01T10:22:03Z",
        "scenario": "faq",
        "difficulty": "hard",
        "segment": "enterprise",
        "messages": [
            {"role": "system", "content": "You are a support agent."},
            {"role": "user", "content": "How long is the return window?"},
            {"role": "assistant", "content": "You have 30 days."},
        ],
        "reference": "Returns are accepted within 30 days.",
        "rubric": {"type": "key_facts", "key_facts": ["30 days"]},
        "tools": [{"name": "get_order_status",
                   "parameters": {"type": "object",
                                  "properties": {"order_id": {"type": "string"}}}}],
    }
    data.update(overrides)
    return data


def _error_types(data):
    with pytest.raises(ValidationError) as info:
        Record.model_validate(data)
    return {(e["type"], e["loc"]) for e in info.value.errors()}


def test_full_record_parses_and_round_trips():
    record = Record.model_validate(_record())
    assert record.timestamp.tzinfo is not None
    assert record.timestamp.utcoffset() == timedelta(0)
    assert record.rubric == Rubric(type="key_facts", key_facts=["30 days"])
    again = Record.model_validate(record.model_dump(mode="json"))
    assert again == record


def test_minimal_record_leaves_optionals_empty():
    data = {k: v for k, v in _record().items()
            if k in {"id", "conversation_id", "timestamp", "scenario", "messages"}}
    record = Record.model_validate(data)
    assert (record.difficulty, record.segment, record.reference, record.rubric, record.tools) == (
        None, None, None, None, None)


def test_offset_timestamp_keeps_its_offset():
    record = Record.model_validate(_record(timestamp="2026-08-01T12:22:03+02:00"))
    assert record.timestamp.utcoffset() == timedelta(hours=2)
    assert record.timestamp.astimezone(timezone.utc).hour == 10


@pytest.mark.parametrize("value,expected", [
    ("2026-08-01T10:22:03", "invalid_value"),   # no zone
    ("01/08/2026 10:22", "invalid_value"),      # not ISO-8601
    (1785579723, "wrong_type"),                 # unix seconds are not accepted
])
def test_bad_timestamps(value, expected):
    assert (expected, ("timestamp",)) in _error_types(_record(timestamp=value))


def test_custom_scenario_is_accepted_but_blank_is_not():
    assert Record.model_validate(_record(scenario="warranty_claims")).scenario == "warranty_claims"
    assert ("invalid_value", ("scenario",)) in _error_types(_record(scenario="  "))


def test_unknown_fields_are_refused_at_every_level():
    assert ("extra_forbidden", ("channel",)) in _error_types(_record(channel="web"))
    msgs = [{"role": "user", "content": "hi", "name": "x"}]
    assert ("extra_forbidden", ("messages", 0, "name")) in _error_types(_record(messages=msgs))
    rubric = {"type": "exact", "weight": 2}
    assert ("extra_forbidden", ("rubric", "weight")) in _error_types(_record(rubric=rubric))


def test_conversation_needs_messages_and_a_user_turn():
    assert ("empty_conversation", ("messages",)) in _error_types(_record(messages=[]))
    only_system = [{"role": "system", "content": "rules"}, {"role": "assistant", "content": "hi"}]
    assert ("empty_conversation", ("messages",)) in _error_types(_record(messages=only_system))


def test_blank_content_is_an_empty_message():
    msgs = [{"role": "user", "content": "question"}, {"role": "assistant", "content": " \n\t"}]
    assert ("empty_message", ("messages", 1, "content")) in _error_types(_record(messages=msgs))


def test_roles_and_difficulty_are_closed_sets():
    msgs = [{"role": "customer", "content": "hi"}]
    assert ("literal_error", ("messages", 0, "role")) in _error_types(_record(messages=msgs))
    assert ("literal_error", ("difficulty",)) in _error_types(_record(difficulty="extreme"))
    assert Message(role="tool", content='{"status": "shipped"}').role == "tool"


def test_no_silent_coercion_to_string():
    assert ("string_type", ("id",)) in _error_types(_record(id=123))
    assert ("list_type", ("messages",)) in _error_types(_record(messages="hello"))


def test_rubric_rules():
    assert ("invalid_value", ("rubric",)) in _error_types(_record(rubric={"type": "key_facts"}))
    assert ("literal_error", ("rubric", "type")) in _error_types(_record(rubric={"type": "fuzzy"}))
    rubric = Rubric.model_validate({"type": "json", "expected": {"status": "shipped", "n": [1, 2]}})
    assert rubric.expected == {"status": "shipped", "n": [1, 2]}


def test_error_messages_do_not_quote_the_input():
    secret = "jane.doe.secret@example.com"
    with pytest.raises(ValidationError) as info:
        Record.model_validate(_record(timestamp=secret, difficulty=secret,
                                      messages=[{"role": secret, "content": " "}]))
    assert all(secret not in e["msg"] for e in info.value.errors())
