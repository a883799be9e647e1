"""Deterministic generator of the demo's business logs, general corpus and training corpus.

Conversation ``i`` of a stream is a pure function of ``(stream, seed, i)``: the business logs, the
same conversations rendered with placeholders (the demo model's held-out set), and the training
corpus (another stream) never depend on how many malformed lines or duplicates were planted.

    >>> from demo.generator import conversation
    >>> conversation("logs", 1, 0, mode="placeholder")["scenario"] in SCENARIOS
    True
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import random
import re
from collections import Counter
from pathlib import Path
from typing import Iterator

from demo.scenarios import BUILDERS, MARK, SCENARIO_WEIGHTS, TRAINING_WEIGHTS, Draft

log = logging.getLogger(__name__)

SCENARIOS = tuple(BUILDERS)
SEGMENTS = ("consumer", "smb", "enterprise")
_MARKED = re.compile(f"{MARK}([A-Z_]+)\\|(.*?){MARK}", re.S)
MALFORMED_KINDS = ("bad_json", "missing_field", "wrong_type", "empty_conversation",
                   "empty_message", "bad_encoding", "line_too_long")


def _rng(stream: str, seed: int, i: int) -> random.Random:
    return random.Random(f"{stream}:{seed}:{i}")


def draft(stream: str, seed: int, i: int) -> tuple[Draft, random.Random]:
    rng = _rng(stream, seed, i)
    weights = TRAINING_WEIGHTS if stream == "train" else SCENARIO_WEIGHTS
    scenario = rng.choices(SCENARIOS, weights=[weights[s] for s in SCENARIOS])[0]
    return BUILDERS[scenario](rng), rng


class _Renderer:
    """Replaces marked PII by raw values or by typed placeholders numbered per conversation."""

    def __init__(self, mode: str):
        if mode not in ("raw", "placeholder"):
            raise ValueError(f"render mode must be 'raw' or 'placeholder', got {mode!r}")
        self.mode = mode
        self.seen: dict[tuple[str, str], str] = {}
        self.per_kind: Counter[str] = Counter()

    def _sub(self, match: re.Match) -> str:
        kind, value = match.group(1), match.group(2)
        if self.mode == "raw":
            return value
        key = (kind, value)
        if key not in self.seen:
            self.per_kind[kind] += 1
            self.seen[key] = f"<{kind}_{self.per_kind[kind]}>"
        return self.seen[key]

    def __call__(self, obj):
        if isinstance(obj, str):
            return _MARKED.sub(self._sub, obj)
        if isinstance(obj, list):
            return [self(v) for v in obj]
        if isinstance(obj, dict):
            return {k: self(v) for k, v in obj.items()}
        return obj


def render(d: Draft, mode: str) -> dict:
    r = _Renderer(mode)
    out = {"scenario": d.scenario, "difficulty": d.difficulty, "messages": r(d.messages),
           "reference": r(d.reference), "rubric": r(d.rubric)}
    if d.tools:
        out["tools"] = d.tools
    out["pii"] = dict(r.per_kind) if mode == "placeholder" else None
    return out


def planted_pii(d: Draft) -> list[tuple[str, str]]:
    """Every (kind, raw value) planted in a draft, for tests that check the scrubber."""
    found: list[tuple[str, str]] = []

    def walk(obj):
        if isinstance(obj, str):
            found.extend((m.group(1), m.group(2)) for m in _MARKED.finditer(obj))
        elif isinstance(obj, (list, tuple)):
            for v in obj:
                walk(v)
        elif isinstance(obj, dict):
            for v in obj.values():
                walk(v)

    walk([d.messages, d.reference, d.rubric])
    return found


def conversation(stream: str, seed: int, i: int, *, mode: str) -> dict:
    d, _ = draft(stream, seed, i)
    return render(d, mode)


def conversation_text(messages: list[dict]) -> str:
    """The text used for near-duplicate checks: every non-system turn (system prompts are
    deployment boilerplate shared by whole scenarios)."""
    return "\n".join(m["content"] for m in messages if m.get("role") != "system")


# --- business logs ---------------------------------------------------------------------------
def log_records(seed: int, n: int, days: int, end_date: str) -> list[dict]:
    """The n well-formed log records, in timestamp order (before malformed lines/duplicates)."""
    end = dt.datetime.fromisoformat(end_date).replace(tzinfo=dt.timezone.utc)
    records = []
    for i in range(n):
        d, rng = draft("logs", seed, i)
        rec = render(d, "raw")
        rec.pop("pii")
        when = end - dt.timedelta(seconds=rng.randrange(days * 86400))
        seg_w = {"faq": (6, 3, 1), "ticket": (4, 4, 2), "consultation": (1, 3, 6),
                 "multi_turn": (6, 3, 1), "rag": (2, 3, 5), "tool_call": (4, 3, 3)}[d.scenario]
        records.append({
            "id": f"r-{i:07d}", "conversation_id": f"c-{i:07d}",
            "timestamp": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "scenario": rec["scenario"], "difficulty": rec["difficulty"],
            "segment": rng.choices(SEGMENTS, weights=seg_w)[0],
            "messages": rec["messages"], "reference": rec["reference"], "rubric": rec["rubric"],
            **({"tools": rec["tools"]} if "tools" in rec else {})})
    records.sort(key=lambda r: (r["timestamp"], r["id"]))
    return records


def _duplicate(rec: dict, rng: random.Random, k: int) -> dict:
    dup = json.loads(json.dumps(rec))
    dup["id"], dup["conversation_id"] = f"r-dup{k:05d}", f"c-dup{k:05d}"
    if rng.random() < 0.5:  # near duplicate: the user re-sent it with a one-word note
        first_user = next(m for m in dup["messages"] if m["role"] == "user")
        first_user["content"] = first_user["content"] + " (resent)"
    return dup


def _malformed(rec: dict, kind: str, rng: random.Random, k: int) -> bytes:
    bad = json.loads(json.dumps(rec))
    bad["id"] = f"r-bad{k:05d}"
    if kind == "bad_json":
        line = json.dumps(bad, ensure_ascii=False)
        return line[: rng.randint(10, len(line) - 5)].encode()
    if kind == "missing_field":
        bad.pop(rng.choice(("messages", "id", "timestamp", "conversation_id")))
    elif kind == "wrong_type":
        if rng.random() < 0.5:
            bad["messages"] = "user: " + bad["messages"][1]["content"][:40]
        else:
            bad["timestamp"] = 1700000000
    elif kind == "empty_conversation":
        bad["messages"] = []
    elif kind == "empty_message":
        bad["messages"][1]["content"] = "   "
    elif kind == "bad_encoding":
        bad["messages"][1]["content"] += " (sent from my café)"
        return json.dumps(bad, ensure_ascii=False).encode("latin-1", errors="replace")
    elif kind == "line_too_long":
        bad["messages"][1]["content"] += " " + "attachment-data " * 5000
    return json.dumps(bad, ensure_ascii=False).encode()


def write_logs(out_dir: Path, *, seed: int, conversations: int, days: int, end_date: str,
               malformed_share: float, duplicate_share: float) -> dict:
    """Write monthly JSONL files; return the counts of what was planted."""
    records = log_records(seed, conversations, days, end_date)
    rng = random.Random(f"plant:{seed}")
    lines: list[tuple[str, bytes]] = [(r["timestamp"], json.dumps(r, ensure_ascii=False).encode())
                                      for r in records]
    n_dup = round(duplicate_share * conversations)
    for k in range(n_dup):
        src = rng.choice(records)
        dup = _duplicate(src, rng, k)
        dup["timestamp"] = src["timestamp"]
        lines.append((src["timestamp"], json.dumps(dup, ensure_ascii=False).encode()))
    n_bad = max(len(MALFORMED_KINDS), round(malformed_share * conversations))
    planted = Counter()
    for k in range(n_bad):
        kind = MALFORMED_KINDS[k] if k < len(MALFORMED_KINDS) else rng.choice(MALFORMED_KINDS[:-1])
        src = rng.choice(records)
        planted[kind] += 1
        lines.append((src["timestamp"], _malformed(src, kind, rng, k)))
    lines.sort(key=lambda t: t[0])
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("logs-*.jsonl"):
        old.unlink()
    by_month: dict[str, list[bytes]] = {}
    for ts, line in lines:
        by_month.setdefault(ts[:7], []).append(line)
    for month, month_lines in sorted(by_month.items()):
        tmp = out_dir / f".logs-{month}.jsonl.tmp"
        tmp.write_bytes(b"".join(line + b"\n" for line in month_lines))
        tmp.replace(out_dir / f"logs-{month}.jsonl")
    summary = {"records": conversations, "duplicates": n_dup, "malformed": dict(planted),
               "files": sorted(f"logs-{m}.jsonl" for m in by_month),
               "scenarios": dict(Counter(r["scenario"] for r in records)),
               "difficulty": dict(Counter(r["difficulty"] for r in records))}
    log.info("wrote %d lines to %s", len(lines), out_dir)
    return summary


# --- general corpus (the stand-in for C4 / wiki text) ---------------------------------------
_G_NAMES = ("Arden", "Belmora", "Caswell", "Dunmere", "Elvaston", "Farrow", "Glenrith", "Holloway",
            "Istra", "Jorvale", "Kestrel", "Lunford", "Marrow", "Norcastle", "Ostwick", "Pellmar")
_G_TEMPLATES = (
    ("The {n} River rises in the {a} hills and flows {k} kilometres to the sea.",
     "Its basin supports farming, and several mills were built along its banks in the {c} century.",
     "Floods in {y} reshaped the lower valley.", "Today the river is known for its {f} population."),
    ("{n} is a town in the {a} region with about {k} thousand inhabitants.",
     "It grew around a market founded in the {c} century.", "A railway reached the town in {y}.",
     "The local economy relies on {f} and tourism."),
    ("Mount {n} is a peak of {k} hundred metres in the {a} range.",
     "It was first climbed in {y} by a survey team.", "Glaciers covered its slopes until the {c} century.",
     "Its forests are home to {f}."),
    ("The {n} engine was an early design for {f}, patented in {y}.",
     "Engineers in the {a} workshops improved it during the {c} century.",
     "About {k} units were built before newer designs replaced it.",
     "Several examples survive in museums."),
)
_G_FILL = {"a": ("northern", "eastern", "coastal", "central", "upland", "western"),
           "c": ("twelfth", "fifteenth", "seventeenth", "eighteenth", "nineteenth"),
           "f": ("trout", "wool weaving", "pumping water", "red deer", "salt trade", "orchards",
                 "lynx", "printing", "otters", "river freight")}


def general_corpus(seed: int, documents: int) -> Iterator[dict]:
    for i in range(documents):
        rng = _rng("general", seed, i)
        template = rng.choice(_G_TEMPLATES)
        values = {"n": rng.choice(_G_NAMES) + rng.choice(("", "ton", "by", "ford", "wick")),
                  "k": rng.randint(3, 480), "y": rng.randint(1620, 1990),
                  **{k: rng.choice(v) for k, v in _G_FILL.items()}}
        sentences = [s.format(**values) for s in template]
        if rng.random() < 0.5:  # keep the topic sentence first, vary the rest
            rest = sentences[1:]
            rng.shuffle(rest)
            sentences[1:] = rest
        yield {"id": f"g-{i:06d}", "text": " ".join(sentences[: rng.randint(3, 4)])}


def write_general_corpus(path: Path, *, seed: int, documents: int) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for doc in general_corpus(seed, documents):
            fh.write(json.dumps(doc, ensure_ascii=False) + "\n")
    tmp.replace(path)
    return documents
