import math
import random
from collections import Counter

import pytest

from pipeline.calibration.sample import Item, QuotaError, apportion, cell_of, quotas, stratify

SCENARIOS = ("faq", "ticket", "rag", "tool_call")
BUCKETS = ("<=128", "129-256", ">256")
DIFFICULTIES = ("easy", "medium", "hard")


def random_pool(n: int, seed: int = 0, prefix: str = "r") -> list[Item]:
    rng = random.Random(seed)
    return [Item(f"{prefix}{i}", rng.choice(SCENARIOS), rng.choice(BUCKETS), rng.choice(DIFFICULTIES))
            for i in range(n)]


def cells(scenario: str, bucket: str, difficulty: str | None, n: int, prefix: str) -> list[Item]:
    return [Item(f"{prefix}{i}", scenario, bucket, difficulty) for i in range(n)]


def ids(plan) -> list[str]:
    return [it.id for it in plan.selected]


def hard_share(items) -> float:
    items = list(items)
    return sum(it.difficulty == "hard" for it in items) / len(items)


# ------------------------------------------------------------------------------ apportion

@pytest.mark.parametrize("total,weights", [
    (10, {"a": 1, "b": 1, "c": 1}),
    (7, {"a": 0.5, "b": 0.25, "c": 0.25}),
    (1, {"a": 3, "b": 3}),
    (100, {"x": 13, "y": 29, "z": 58, "w": 1e-9}),
    (257, {f"k{i}": i + 1 for i in range(17)}),
])
def test_apportion_sums_to_total_and_stays_within_one_of_exact(total, weights):
    out = apportion(total, weights)
    assert set(out) == set(weights)
    assert sum(out.values()) == total
    s = sum(weights.values())
    for k, w in weights.items():
        exact = total * w / s
        assert math.floor(exact) <= out[k] <= math.ceil(exact), (k, exact, out[k])


def test_apportion_gives_the_remainder_to_the_largest_fractions():
    # exact shares 2.6, 3.4, 4.0: floors sum to 9, the one left goes to the largest remainder
    assert apportion(10, {"a": 0.26, "b": 0.34, "c": 0.40}) == {"a": 3, "b": 3, "c": 4}


def test_apportion_breaks_ties_by_key_whatever_the_insertion_order():
    expected = {"a": 1, "b": 1, "c": 1, "d": 0}
    assert apportion(3, {"a": 1, "b": 1, "c": 1, "d": 1}) == expected
    assert apportion(3, {"d": 1, "c": 1, "b": 1, "a": 1}) == expected
    assert apportion(3, {"c": 1, "a": 1, "d": 1, "b": 1}) == expected


def test_apportion_of_nothing_or_over_zero_weights_is_all_zero():
    assert apportion(0, {"a": 1, "b": 2}) == {"a": 0, "b": 0}
    assert apportion(5, {"a": 0, "b": 0}) == {"a": 0, "b": 0}


# --------------------------------------------------------------------------------- quotas

def test_quotas_spread_scenarios_uniformly_whatever_their_pool_size():
    pool = (cells("faq", "<=128", "easy", 500, "f") + cells("rag", "<=128", "easy", 40, "r")
            + cells("tool_call", "<=128", "easy", 25, "t"))
    q = quotas(pool, 60, hard_share_min=0.0, scenario_weights=None)
    by_scenario = Counter()
    for cell, n in q.items():
        by_scenario[cell.split("|")[0]] += n
    assert by_scenario == {"faq": 20, "rag": 20, "tool_call": 20}


def test_quotas_follow_scenario_weights_and_leave_unlisted_scenarios_out():
    pool = random_pool(600, seed=1)
    q = quotas(pool, 90, hard_share_min=0.0, scenario_weights={"faq": 2, "rag": 1})
    by_scenario = Counter()
    for cell, n in q.items():
        by_scenario[cell.split("|")[0]] += n
    assert +by_scenario == {"faq": 60, "rag": 30}


def test_quotas_raise_the_hard_share_to_the_floor():
    # 10% hard in the pool, floor 30%: the hard quota is lifted to ceil(0.3 * 20) = 6
    pool = cells("faq", "<=128", "easy", 90, "e") + cells("faq", "<=128", "hard", 10, "h")
    q = quotas(pool, 20, hard_share_min=0.3, scenario_weights=None)
    assert q == {"faq|<=128|easy": 14, "faq|<=128|hard": 6}


def test_quotas_keep_the_pool_hard_share_when_above_the_floor():
    pool = cells("faq", "<=128", "easy", 40, "e") + cells("faq", "<=128", "hard", 60, "h")
    q = quotas(pool, 20, hard_share_min=0.3, scenario_weights=None)
    assert q == {"faq|<=128|easy": 8, "faq|<=128|hard": 12}


def test_quotas_floor_holds_in_every_scenario_of_a_random_pool():
    pool = random_pool(2000, seed=2)
    q = quotas(pool, 200, hard_share_min=0.5, scenario_weights=None)
    assert sum(q.values()) == 200
    for scenario in SCENARIOS:
        total = sum(n for c, n in q.items() if c.startswith(scenario + "|"))
        hard = sum(n for c, n in q.items() if c.startswith(scenario + "|") and c.endswith("|hard"))
        assert total == 50
        assert hard >= math.ceil(0.5 * total), (scenario, hard, total)


def test_quotas_split_buckets_in_proportion_to_the_pool():
    pool = (cells("faq", "<=128", "easy", 60, "a") + cells("faq", "129-256", "easy", 30, "b")
            + cells("faq", ">256", "medium", 10, "c"))
    q = quotas(pool, 20, hard_share_min=0.0, scenario_weights=None)
    assert q == {"faq|<=128|easy": 12, "faq|129-256|easy": 6, "faq|>256|medium": 2}


def test_quotas_of_unlabelled_items_have_no_hard_cells():
    pool = cells("general", "<=128", None, 70, "a") + cells("general", "129-256", None, 30, "b")
    q = quotas(pool, 10, hard_share_min=0.5, scenario_weights=None)
    assert q == {"general|129-256|unlabelled": 3, "general|<=128|unlabelled": 7}


# ------------------------------------------------------------------------------- stratify

def test_stratify_returns_exactly_num_samples_meeting_the_quotas():
    pool = random_pool(3000, seed=3)
    plan = stratify(pool, num_samples=240, hard_share_min=0.4, seed=11)
    assert len(plan.selected) == 240
    assert len(set(ids(plan))) == 240
    assert plan.shortfalls == [] and plan.filled == {}
    assert Counter(cell_of(it) for it in plan.selected) == +Counter(plan.quotas)
    assert hard_share(plan.selected) >= 0.4


def test_stratify_is_deterministic_and_independent_of_input_order():
    pool = random_pool(800, seed=4)
    shuffled = pool[:]
    random.Random(0).shuffle(shuffled)
    a = stratify(pool, num_samples=64, hard_share_min=0.3, seed=5)
    b = stratify(shuffled, num_samples=64, hard_share_min=0.3, seed=5)
    assert ids(a) == ids(b)
    c = stratify(pool, num_samples=64, hard_share_min=0.3, seed=6)
    assert set(ids(c)) != set(ids(a))  # the seed matters


def test_stratify_selection_is_sorted_by_cell():
    plan = stratify(random_pool(500, seed=5), num_samples=50, hard_share_min=0.3, seed=0)
    keys = [cell_of(it) for it in plan.selected]
    assert keys == sorted(keys)


def test_adding_one_item_to_the_pool_changes_at_most_a_couple_of_selections():
    pool = random_pool(600, seed=6)
    base = set(ids(stratify(pool, num_samples=60, hard_share_min=0.3, seed=1)))
    changes = Counter()
    for k in range(200):
        rng = random.Random(1000 + k)
        extra = Item(f"new{k}", rng.choice(SCENARIOS), rng.choice(BUCKETS), rng.choice(DIFFICULTIES))
        after = set(ids(stratify(pool + [extra], num_samples=60, hard_share_min=0.3, seed=1)))
        assert len(after) == 60
        removed = base - after
        assert len(removed) <= 2, (extra, sorted(removed), sorted(after - base))
        changes[len(removed)] += 1
    assert changes[0] > 0  # most additions leave the selection alone or swap one sample


def test_shortfall_with_policy_fail_names_the_cell_and_the_shortage():
    pool = cells("faq", "<=128", "easy", 50, "e") + cells("faq", "<=128", "hard", 2, "h")
    # 10 samples, floor 50% -> 5 hard wanted, 2 exist
    with pytest.raises(QuotaError) as err:
        stratify(pool, num_samples=10, hard_share_min=0.5, seed=0, policy="fail")
    message = str(err.value)
    assert "faq|<=128|hard" in message
    assert "wanted 5" in message and "only 2" in message and "short 3" in message
    assert "quota_policy: fill" in message  # says how to fix it


def test_shortfall_with_policy_fill_takes_from_the_same_scenario_first():
    pool = (cells("faq", "<=128", "easy", 50, "fe") + cells("faq", "<=128", "hard", 2, "fh")
            + cells("ticket", "<=128", "easy", 50, "te") + cells("ticket", "<=128", "hard", 50, "th"))
    plan = stratify(pool, num_samples=20, hard_share_min=0.5, seed=0, policy="fill")
    assert len(plan.selected) == 20 and len(set(ids(plan))) == 20
    assert [(s.cell, s.wanted, s.available, s.missing) for s in plan.shortfalls] == [
        ("faq|<=128|hard", 5, 2, 3)]
    assert plan.filled == {"faq|<=128|easy": 3}  # faq's other cell, not ticket's
    assert Counter(it.scenario for it in plan.selected) == {"faq": 10, "ticket": 10}


def test_fill_goes_to_other_scenarios_once_the_short_one_is_exhausted():
    pool = (cells("faq", "<=128", "easy", 3, "fe") + cells("ticket", "<=128", "easy", 40, "te")
            + cells("rag", "<=128", "easy", 40, "re"))
    plan = stratify(pool, num_samples=30, seed=0, policy="fill")
    assert [(s.cell, s.missing) for s in plan.shortfalls] == [("faq|<=128|easy", 7)]
    assert sum(plan.filled.values()) == 7
    assert set(plan.filled) <= {"ticket|<=128|easy", "rag|<=128|easy"}
    assert len(plan.selected) == 30 and {f"fe{i}" for i in range(3)} <= set(ids(plan))


def test_rotation_retains_the_kept_ids_and_counts_them():
    pool = random_pool(1000, seed=7)
    first = stratify(pool, num_samples=80, hard_share_min=0.3, seed=0)
    keep = sorted(ids(first))[:60]  # 75% of the previous set
    second = stratify(pool, num_samples=80, hard_share_min=0.3, seed=99, keep=keep)
    assert set(keep) <= set(ids(second))
    assert second.kept_from_previous == 60
    assert len(second.selected) == 80 and len(set(ids(second))) == 80
    # the refreshed 20 come from the new seed; quotas still hold
    assert Counter(cell_of(it) for it in second.selected) == +Counter(second.quotas)
    fresh = stratify(pool, num_samples=80, hard_share_min=0.3, seed=99)
    assert len(set(ids(fresh)) & set(ids(first))) < 60  # without keep, far fewer retained


def test_rotation_ignores_ids_no_longer_in_the_pool():
    pool = random_pool(300, seed=8)
    plan = stratify(pool, num_samples=30, seed=0, keep=["gone-1", "gone-2"])
    assert plan.kept_from_previous == 0
    assert len(plan.selected) == 30


# Regression tests: rotation and hard-floor edge cases.

def _overfull_rotation(seed: int):
    # Quotas 2 easy + 2 hard; the previous set (new data since) left 4 easy ids to retain.
    pool = cells("faq", "<=128", "easy", 10, "e") + cells("faq", "<=128", "hard", 10, "h")
    keep = [f"e{i}" for i in range(4)]
    return keep, stratify(pool, num_samples=4, hard_share_min=0.5, seed=seed, policy="fail", keep=keep)


def test_kept_from_previous_counts_only_retained_ids_that_survive():
    for seed in range(10):
        keep, plan = _overfull_rotation(seed)
        assert plan.kept_from_previous == len(set(keep) & set(ids(plan))), seed


def test_retained_ids_over_a_cell_quota_never_break_the_hard_floor():
    for seed in range(10):
        _, plan = _overfull_rotation(seed)
        assert len(plan.selected) == 4
        assert hard_share(plan.selected) >= 0.5, (seed, ids(plan))


def test_hard_floor_unmeetable_in_a_labelled_scenario_fails_with_policy_fail():
    pool = cells("faq", "<=128", "easy", 50, "e") + cells("faq", "<=128", "medium", 50, "m")
    try:
        plan = stratify(pool, num_samples=20, hard_share_min=0.3, seed=0, policy="fail")
    except QuotaError as err:
        assert "hard" in str(err)
    else:
        assert hard_share(plan.selected) >= 0.3 or plan.shortfalls
