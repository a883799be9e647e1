"""Which pool a conversation goes to — evaluation or calibration — decided by the conversation
itself: a salted hash of its id, or its first timestamp against a window of recent days."""

from __future__ import annotations

import datetime as dt
import hashlib


def hash_unit(salt: str, key: str) -> float:
    """A uniform number in [0, 1) decided by `key` alone."""
    return int.from_bytes(hashlib.sha256(f"{salt}\x00{key}".encode()).digest()[:8], "big") / 2**64


class PoolAssigner:
    """Pool of a conversation: by salted id hash, or by its first timestamp (recent → eval)."""

    def __init__(self, split, first_seen: dict[str, dt.datetime]):
        self.split = split
        self.first_seen = first_seen
        if split.by == "date":
            newest = max(first_seen.values())
            self.cutoff = newest - dt.timedelta(days=split.eval_recent_days)

    def __call__(self, conversation_id: str) -> str:
        if self.split.by == "date":
            return "eval" if self.first_seen[conversation_id] > self.cutoff else "calibration"
        return "eval" if hash_unit(self.split.salt, conversation_id) < self.split.eval_share else "calibration"

