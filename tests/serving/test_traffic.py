"""Traffic drawn from the evaluation set: the long share a mix names, the logs' own mix otherwise,
output lengths from the logged answers, the same requests for the same seed, and a file the load
generator reads."""

import json
from types import SimpleNamespace

import numpy as np
import pytest

from pipeline.loadgen.traffic import draw, request_pool, write_mix


def pool(n=500, seed=0):
    rng = np.random.default_rng(seed)
    return [{"id": f"i{k}", "prompt": f"p{k}", "prompt_tokens": int(t), "output_tokens": 5,
             "scenario": "faq" if k % 3 else "rag"}
            for k, t in enumerate(rng.lognormal(4.5, 0.6, size=n).astype(int) + 1)]


def test_a_mix_takes_its_long_share_from_the_logs_long_tail():
    got, threshold = draw(pool(), 200, 0.2, 0.8, seed=1)
    assert len(got) == 200 and sum(r["long"] for r in got) == 40
    assert all((r["prompt_tokens"] > threshold) == r["long"] for r in got)
    lengths = sorted(r["prompt_tokens"] for r in pool())
    assert threshold == pytest.approx(np.quantile(lengths, 0.8))


def test_the_logs_mix_follows_the_logs():
    got, _ = draw(pool(), 2000, None, 0.8, seed=2)
    assert abs(np.mean([r["long"] for r in got]) - 0.2) < 0.04  # a fifth of the logs is above the 80th pct


def test_the_same_seed_draws_the_same_requests_and_another_seed_others():
    a, _ = draw(pool(), 100, 0.2, 0.8, seed=3)
    b, _ = draw(pool(), 100, 0.2, 0.8, seed=3)
    c, _ = draw(pool(), 100, 0.2, 0.8, seed=4)
    assert [r["id"] for r in a] == [r["id"] for r in b] != [r["id"] for r in c]


def test_a_long_share_without_long_prompts_is_refused():
    flat = [{**r, "prompt_tokens": 10} for r in pool(20)]
    with pytest.raises(ValueError, match="no prompt is longer"):
        draw(flat, 10, 0.2, 0.8, seed=0)


class Tok:
    """Whitespace tokens: enough to check lengths and clipping."""

    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": text.split()}

    def decode(self, ids, skip_special_tokens=False):
        return " ".join(f"t{i}" for i in ids)


def test_output_lengths_are_the_logged_answers_clipped(tmp_path):
    items = [SimpleNamespace(id="a", reference="one two three", slices={"scenario": "faq"}),
             SimpleNamespace(id="b", reference=" ".join(["w"] * 50), slices={}),
             SimpleNamespace(id="c", reference=None, slices={"scenario": "rag"})]
    got = request_pool(items, [[1, 2], [3], [4, 5, 6]], Tok(), max_output_tokens=20)
    assert [r["output_tokens"] for r in got] == [3, 20, 1]
    assert [r["prompt_tokens"] for r in got] == [2, 1, 3] and got[1]["scenario"] == "all"
    drawn, threshold = draw(got, 4, None, 0.5, seed=0)
    card = write_mix(drawn, tmp_path, "m", threshold)
    lines = [json.loads(x) for x in (tmp_path / "m.jsonl").read_text().splitlines()]
    assert [set(x) for x in lines] == [{"prompt", "output_tokens_count"}] * 4
    assert card["requests"] == 4 and card["items"] == [r["id"] for r in drawn]
    assert json.loads((tmp_path / "m.card.json").read_text())["output_tokens"]["max"] <= 20
