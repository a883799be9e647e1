"""Task scorers for the business evaluation set: one small function per rubric type.

Each returns a `Score` (1.0 pass / 0.0 fail, plus why), so that per-sample records say not only
*whether* a variant failed a sample but *how* (wrong fact, unparsable JSON, wrong field…).

    >>> score({"type": "numeric", "expected": 32}, "32 seats", "You will have 32 seats.").value
    1.0
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable

_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)?")


@dataclass(frozen=True)
class Score:
    value: float
    reason: str = ""


def normalize(text: str) -> str:
    """Case-fold, NFKC, collapse whitespace, drop trailing punctuation."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"\s+", " ", text).strip().rstrip(".!?;: ")


def exact(rubric: dict, reference: str, output: str) -> Score:
    ok = normalize(output) == normalize(reference)
    return Score(float(ok), "" if ok else "output differs from the reference")


def key_facts(rubric: dict, reference: str, output: str) -> Score:
    facts = rubric.get("key_facts") or [reference]
    out = normalize(output)
    # Whole-token match: "3 business days" must not pass inside "13 business days".
    missing = [f for f in facts
               if not re.search(r"(?<!\w)" + re.escape(normalize(f)) + r"(?!\w)", out)]
    return Score(float(not missing), f"missing key facts: {missing}" if missing else "")


def numeric(rubric: dict, reference: str, output: str) -> Score:
    expected = rubric.get("expected")
    if expected is None:
        found = _NUMBER.findall(reference)
        if not found:
            return Score(0.0, "the rubric has no expected number and the reference none either")
        expected = found[-1]
    numbers = _NUMBER.findall(output.replace(",", ""))
    if not numbers:
        return Score(0.0, "no number in the output")
    ok = abs(float(numbers[-1]) - float(str(expected).replace(",", ""))) < 1e-6
    return Score(float(ok), "" if ok else f"answer {numbers[-1]} != expected {expected}")


def _first_json_object(text: str) -> Any:
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON object in the output")
    obj, _ = json.JSONDecoder().raw_decode(text[start:])
    return obj


def json_call(rubric: dict, reference: str, output: str) -> Score:
    expected = rubric.get("expected")
    if expected is None:
        expected = _first_json_object(reference)
    try:
        got = _first_json_object(output)
    except ValueError as err:
        return Score(0.0, f"invalid JSON: {err}")
    if not isinstance(got, dict):
        return Score(0.0, "JSON is not an object")
    if got == expected:
        return Score(1.0)
    wrong = sorted(k for k in set(expected) | set(got) if got.get(k) != expected.get(k))
    return Score(0.0, f"fields differ: {wrong}")


SCORERS: dict[str, Callable[[dict, str, str], Score]] = {
    "exact": exact, "key_facts": key_facts, "numeric": numeric, "json": json_call,
}


def score(rubric: dict | None, reference: str, output: str) -> Score:
    kind = (rubric or {}).get("type", "exact")
    try:
        scorer = SCORERS[kind]
    except KeyError:
        raise ValueError(f"unknown rubric type {kind!r}; known: {', '.join(SCORERS)}") from None
    return scorer(rubric or {}, reference, output)


def is_valid_json(text: str) -> bool:
    """Structure validity for the silent-regression detectors."""
    try:
        return isinstance(_first_json_object(text), dict)
    except ValueError:
        return False
