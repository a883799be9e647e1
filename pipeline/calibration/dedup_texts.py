"""The text of a conversation that duplicates are judged on."""

from __future__ import annotations


def dedup_text(messages: list[dict]) -> str:
    """Text compared for duplicates: the non-system turns (system prompts are deployment
    boilerplate shared by whole scenarios and would make every short chat look alike)."""
    return "\n".join(m["content"] for m in messages if m["role"] != "system")


def prompt_text(messages: list[dict]) -> str:
    """The turns an evaluation prompt holds: everything before the final answer. Duplicates
    are judged on it, so "calibration holds a copy of an evaluation prompt" is what is ruled out."""
    if messages and messages[-1]["role"] == "assistant":
        messages = messages[:-1]
    return dedup_text(messages)
