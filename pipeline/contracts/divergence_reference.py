"""`results/divergence-reference/reference.json`: what `divergence_reference` kept of the
reference model's teacher-forced passes (beside it, `passes.safetensors`), with the identities a
divergence@<variant> checks before using them: the reference's artifact, the evaluation items and
their teacher-forced output tokens."""

from __future__ import annotations

from typing import ClassVar

from pipeline.contracts.contract import Contract, Num
from pipeline.contracts.files import DIVERGENCE_REFERENCE, DIVERGENCE_REFERENCE_SCHEMA


class ReferencePasses(Contract):
    SCHEMA: ClassVar[str] = DIVERGENCE_REFERENCE_SCHEMA
    FILE: ClassVar[str] = DIVERGENCE_REFERENCE  # its name in its stage's folder
    WRITER: ClassVar[str] = "divergence_reference"

    reference: str                 # the variant (divergence.reference)
    artifact_sha256: str           # its manifest's content hash: the weights the passes ran
    evalset_sha256: str
    ids: list[str]                 # the items, in the order of the tensors' rows
    output_tokens_sha256: str      # the teacher-forced output token ids, all items in order
    context_length: int            # the reference's own (the long-generation probe's default)
    # True: the LM head applied to the stored last hidden states gives the model's logits (checked
    # on the first batch); False: the architecture changes them after the LM head (a soft-cap, a
    # scale) and every divergence@ runs the reference itself.
    hidden_states: bool
    lm_head_check_max_abs: Num | None = None
    why: str | None = None
    method: str
