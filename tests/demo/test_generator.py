import json
from collections import Counter

import pytest
import yaml

from demo import generator as g
from demo.generator import conversation, draft, log_records, planted_pii, write_logs
from demo.world import PRODUCTS

PII_KINDS = {"EMAIL", "PHONE", "NATIONAL_ID", "CARD", "ADDRESS", "PERSON"}


@pytest.fixture(scope="module")
def demo_params(repo):
    return yaml.safe_load((repo / "params.yaml").read_text())["demo"]


def _write(tmp_path, name, **kw):
    args = dict(seed=3, conversations=400, days=90, end_date="2026-11-15",
                malformed_share=0.02, duplicate_share=0.03) | kw
    return write_logs(tmp_path / name, **args)


def test_generation_is_deterministic(tmp_path):
    _write(tmp_path, "a")
    _write(tmp_path, "b")
    files = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert files and files == sorted(p.name for p in (tmp_path / "b").iterdir())
    for name in files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    _write(tmp_path, "c", seed=4)
    assert (tmp_path / "c" / files[0]).read_bytes() != (tmp_path / "a" / files[0]).read_bytes()


def test_committed_demo_logs_match_the_generator(repo, demo_params, tmp_path):
    logs = demo_params["logs"]
    write_logs(tmp_path / "logs", seed=demo_params["seed"], conversations=logs["conversations"],
               days=logs["days"], end_date=str(logs["end_date"]),
               malformed_share=logs["malformed_share"], duplicate_share=logs["duplicate_share"])
    committed = repo / logs["out_dir"]
    names = sorted(p.name for p in (tmp_path / "logs").iterdir())
    assert names == sorted(p.name for p in committed.glob("logs-*.jsonl"))
    for name in names:
        assert (tmp_path / "logs" / name).read_bytes() == (committed / name).read_bytes(), name


def _lines(folder):
    for path in sorted(folder.glob("logs-*.jsonl")):
        yield from path.read_bytes().splitlines()


def test_scenario_mix_difficulty_and_time_span():
    recs = log_records(5, 1200, 90, "2026-11-15")
    scen = Counter(r["scenario"] for r in recs)
    assert set(scen) == {"faq", "ticket", "consultation", "multi_turn", "rag", "tool_call"}
    assert min(scen.values()) / len(recs) > 0.05
    assert Counter(r["difficulty"] for r in recs)["hard"] / len(recs) >= 0.30
    assert {r["segment"] for r in recs} == {"consumer", "smb", "enterprise"}
    days = {r["timestamp"][:10] for r in recs}
    assert len(days) > 80 and min(days) >= "2026-08-17" and max(days) <= "2026-11-15"
    assert [r["timestamp"] for r in recs] == sorted(r["timestamp"] for r in recs)
    for r in recs:
        assert r["reference"] and r["messages"][-1]["role"] == "assistant"
        assert r["rubric"]["type"] in {"exact", "key_facts", "numeric", "json"}


def test_planted_pii_present_in_raw_logs(tmp_path):
    _write(tmp_path, "logs", conversations=600)
    raw = b"\n".join(_lines(tmp_path / "logs")).decode("utf-8", errors="replace")
    kinds = Counter()
    for i in range(600):
        d, _ = draft("logs", 3, i)
        for kind, value in planted_pii(d):
            kinds[kind] += 1
            assert value in raw, (kind, value)
    assert PII_KINDS <= set(kinds), kinds
    assert all(kinds[k] >= 5 for k in PII_KINDS), kinds


def test_placeholder_rendering_has_no_raw_pii_and_is_consistent():
    for i in range(300):
        d, _ = draft("logs", 9, i)
        rendered = json.dumps(g.render(d, "placeholder"), ensure_ascii=False)
        for kind, value in planted_pii(d):
            assert value not in rendered
            assert f"<{kind}_1>" in rendered
        assert g.MARK not in rendered
    # the same value keeps its placeholder across turns (multi-turn: address and name echoed)
    mt = next(c for c in (conversation("logs", 9, i, mode="placeholder") for i in range(200))
              if c["scenario"] == "multi_turn")
    assert mt["reference"].count("<ADDRESS_1>") == 1 and "<ADDRESS_2>" not in json.dumps(mt)


def test_malformed_share_and_kinds(tmp_path):
    summary = _write(tmp_path, "logs", conversations=1000)
    planted = summary["malformed"]
    assert set(planted) == set(g.MALFORMED_KINDS)
    broken = Counter()
    for line in _lines(tmp_path / "logs"):
        try:
            rec = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError:
            broken["bad_encoding"] += 1
            continue
        except json.JSONDecodeError:
            broken["bad_json"] += 1
            continue
        if len(line) > 65536:
            broken["line_too_long"] += 1
        elif not {"id", "messages", "timestamp", "conversation_id"} <= set(rec):
            broken["missing_field"] += 1
        elif not isinstance(rec["messages"], list) or not isinstance(rec["timestamp"], str):
            broken["wrong_type"] += 1
        elif not rec["messages"]:
            broken["empty_conversation"] += 1
        elif any(not m["content"].strip() for m in rec["messages"]):
            broken["empty_message"] += 1
    assert broken == Counter(planted)
    assert 0.015 <= sum(planted.values()) / 1000 <= 0.03


def test_wording_varies():
    users = [next(m["content"] for m in conversation("logs", 11, i, mode="placeholder")["messages"]
                  if m["role"] == "user") for i in range(1000)]
    assert len(set(users)) / len(users) > 0.9


def test_world_facts_are_stable():
    # The demo model memorised these; changing them silently would make it look broken.
    assert PRODUCTS["Aurora router"] == (30, 24, 3) and len(PRODUCTS) == 8


def test_general_corpus_is_off_topic_and_deterministic():
    a = list(g.general_corpus(1, 50))
    assert a == list(g.general_corpus(1, 50))
    text = " ".join(d["text"] for d in a)
    assert not any(p in text for p in PRODUCTS) and "Northwind" not in text
    assert len({d["text"] for d in a}) == 50
