"""Ids as they leave the split: keyed-hash pseudonyms, and the key they are made with."""

from __future__ import annotations

import hashlib
import hmac
import os
from pipeline.stage_params import StageView


def pseudonym(key: bytes, value: str) -> str:
    """An id as it leaves the split: a keyed hash (HMAC-SHA256, 80 bits), the same for the same
    id and key on every run, not reversible without the key."""
    return "p-" + hmac.new(key, value.encode("utf-8"), hashlib.sha256).hexdigest()[:20]


def id_key(params: StageView) -> tuple[bytes | None, str]:
    """The pseudonymisation key and what it is (for the report): None when ids are kept."""
    pii = params.split.pii
    if not (pii.enabled and pii.pseudonymize_ids):
        return None, "ids kept as they are (split.pii)"
    secret = os.environ.get(pii.id_key_env)
    if secret:
        return secret.encode("utf-8"), f"keyed hash, key from ${pii.id_key_env}"
    return params.split.salt.encode("utf-8"), (f"keyed hash with the public split salt (set "
                                               f"${pii.id_key_env} for a secret key)")
