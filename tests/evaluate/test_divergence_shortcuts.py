"""The divergence stage's two shortcuts give exactly what the passes they skip would give:
byte-identical weights (a re-served baseline) score exact zeros, and a greedy output equal to the
gold answer lends its passes to the reference's log-likelihood."""

import copy

import pytest
import torch

from pipeline.evaluate.divergence import item_signals, load_reference

from .conftest import REPO


@pytest.fixture(scope="module")
def models():
    base = load_reference(REPO / "models" / "demo")
    noised = copy.deepcopy(base)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in noised.parameters():
            if p.dim() == 2:
                p.add_(torch.randn(p.shape, generator=gen) * p.std() * 0.1)
    return base, noised


PROMPT = [1, 17, 240, 33, 91, 5, 402, 77]
ANSWER = [12, 310, 44, 9, 2]


def test_identical_weights_score_what_the_passes_would(models):
    base, _ = models
    computed = item_signals(base, base, PROMPT, ANSWER, ANSWER[:3])
    assert computed["kl"] and max(computed["kl"]) == 0.0 and computed["ref_loglik_delta"] == 0.0
    assert item_signals(base, None, PROMPT, ANSWER, ANSWER[:3]) == computed
    assert item_signals(base, None, PROMPT, [], []) == item_signals(base, base, PROMPT, [], [])


def test_an_output_equal_to_the_answer_reuses_its_passes(models):
    base, noised = models
    shared = item_signals(base, noised, PROMPT, ANSWER, ANSWER)
    alone = item_signals(base, noised, PROMPT, [], ANSWER)  # the reference's own passes
    assert shared["ref_loglik_delta"] == alone["ref_loglik_delta"] != 0.0
    assert shared["ref_tokens"] == alone["ref_tokens"] == len(ANSWER)
    assert item_signals(base, noised, PROMPT, ANSWER, ANSWER[:4])["ref_loglik_delta"] != shared["ref_loglik_delta"]


def test_batched_passes_give_the_one_at_a_time_signals(models):
    """Right-padded batches of sequences of different lengths: every item's signals are the
    ones its own passes give, up to float rounding; chunk_passes skips what the shortcuts skip."""
    from pipeline.evaluate.passes import chunk_passes

    base, noised = models
    items = [(PROMPT[:n], ANSWER[: 1 + n % 5], ANSWER[: 1 + n % 5] if n % 2 else ANSWER[:2])
             for n in range(2, 9)] + [(PROMPT, [], ANSWER), (PROMPT * 3, ANSWER, [])]
    passes = chunk_passes(base, noised, items)
    # one pass pair per distinct sequence: equal output and reference share theirs
    assert len(passes) == len({tuple(p + c) for p, o, r in items for c in (o, r) if c})
    assert chunk_passes(base, None, items) == {}
    for prompt, output, reference in items:
        alone = item_signals(base, noised, prompt, output, reference)
        batched = item_signals(base, noised, prompt, output, reference, passes)
        assert alone.keys() == batched.keys()
        assert batched.get("kl", []) == pytest.approx(alone.get("kl", []), abs=1e-4)
        assert batched.get("top1_agree") == alone.get("top1_agree")
        if reference:
            assert batched["ref_loglik_delta"] == pytest.approx(alone["ref_loglik_delta"], abs=1e-4)
            assert alone["ref_loglik_delta"] != 0.0


def test_only_the_positions_asked_for_go_through_the_head_with_the_full_passes_values(models):
    """`starts`: the LM head and softmax run on the positions that predict the continuation only;
    their values are the full forward's at those positions (a batch of unequal starts and
    lengths, right-padded), and the hidden-state variant returns the states at the same rows."""
    from pipeline.evaluate.passes import batched_logprobs

    base, _ = models
    seqs = [PROMPT + ANSWER, PROMPT[:3] + ANSWER[:2], PROMPT * 2 + ANSWER[:1]]
    starts = [len(PROMPT) - 1, 2, 2 * len(PROMPT) - 1]
    with torch.no_grad():
        full = [torch.log_softmax(base(torch.tensor([q])).logits[0].float(), -1) for q in seqs]
    tails = batched_logprobs(base, seqs, starts=starts)
    hidden = batched_logprobs(base, seqs, starts=starts, hidden=True)
    for q, st, f, t, (lp, h) in zip(seqs, starts, full, tails, hidden):
        assert t.shape[0] == len(q) - st == h.shape[0]
        assert torch.allclose(t, f[st:], atol=1e-5)
        assert torch.allclose(lp, f[st:], atol=1e-5)
    assert not torch.allclose(tails[0], full[0][: tails[0].shape[0]], atol=1e-3)  # rows are shifted
