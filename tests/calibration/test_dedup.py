import random

import pytest

from pipeline.calibration.dedup import (
    Deduplicator, DedupResult, content_hash, conversation_text, dedup_keys_of, minhash,
    near_duplicate_pairs, near_duplicates_between, normalize_text, shingles,
)
from pipeline.contracts.business_record import Record

WORDS = ("order refund delivery invoice warranty account password parcel courier address plan "
         "upgrade battery screen charger firmware store manager receipt colour size exchange "
         "voucher discount shipping tracking payment card bank holiday weekend morning evening").split()


def paragraph(seed: int, n: int = 80) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(n))


def edit(text: str, changes: int, seed: int = 0) -> str:
    """Replace ``changes`` words: a near duplicate for small counts."""
    rng = random.Random(seed)
    words = text.split()
    for i in rng.sample(range(len(words)), changes):
        words[i] = "zzz"
    return " ".join(words)


def test_normalisation():
    assert normalize_text("  Ｈｅｌｌｏ\u00a0\tWORLD\n\n ﬁne ") == "hello world fine"
    assert content_hash("Hello  World") == content_hash("hello world") != content_hash("hello worlds")


def test_shingles_are_word_trigrams():
    assert shingles("A b c d") == {b"a b c", b"b c d"}
    assert shingles("Just two") == {b"just two"}
    assert shingles("  ... ") == set()


def test_exact_duplicates_ignore_case_width_and_whitespace():
    dedup = Deduplicator()
    text = paragraph(1)
    assert dedup.add("a", text) == DedupResult("a")
    result = dedup.add("b", "  " + text.upper().replace(" ", "\n  ", 3))
    assert result == DedupResult("b", exact_duplicate_of="a")
    assert not result.kept
    assert len(dedup) == 1


def test_near_duplicates_and_distinct_texts():
    dedup = Deduplicator(threshold=0.7, num_perm=128)
    base = paragraph(1)
    assert dedup.add("base", base).kept
    assert dedup.add("near", edit(base, 2)).near_duplicate_of == "base"
    assert dedup.add("other", paragraph(2)).kept
    assert dedup.add("far", edit(base, 40)).kept  # half the words changed: not a duplicate
    assert dedup.counts == {"kept": 3, "exact": 0, "near": 1}


def test_earliest_kept_text_is_reported():
    dedup = Deduplicator(threshold=0.7)
    base = paragraph(3)
    dedup.add("first", base)
    dedup.add("second-distinct", paragraph(4))
    dedup.add("dup-of-first", edit(base, 1, seed=1))
    assert dedup.add("also-near", edit(base, 1, seed=2)).near_duplicate_of == "first"


def test_among_several_candidates_the_earliest_wins():
    x, y, z = ([f"{tag}{i}" for i in range(40)] for tag in "xyz")
    a, b, c = " ".join(x + y), " ".join(y + z), " ".join(x + y + z)  # c is near both a and b

    def decide(order):
        dedup = Deduplicator(threshold=0.5, num_perm=128)
        results = [dedup.add(key, text) for key, text in order]
        assert results[0].kept and results[1].kept
        return results[2].near_duplicate_of

    assert decide([("a", a), ("b", b), ("c", c)]) == "a"
    assert decide([("b", b), ("a", a), ("c", c)]) == "b"


def test_same_input_order_gives_same_result():
    texts = [paragraph(i % 7) if i % 3 else edit(paragraph(i % 7), 1, seed=i) for i in range(60)]

    def run():
        dedup = Deduplicator(threshold=0.7, num_perm=128)
        return [dedup.add(str(i), t) for i, t in enumerate(texts)]

    first, second = run(), run()
    assert first == second
    assert sum(r.kept for r in first) == 7


def test_minhash_is_seeded_and_deterministic():
    a, b = minhash(paragraph(5), 64), minhash(paragraph(5), 64)
    assert (a.hashvalues == b.hashvalues).all()
    assert not (minhash(paragraph(5), 64, seed=2).hashvalues == a.hashvalues).all()
    assert minhash("", 64) is None


def test_empty_texts_are_exact_duplicates_without_lsh():
    dedup = Deduplicator()
    assert dedup.add("a", "").kept
    assert dedup.add("b", "   ").exact_duplicate_of == "a"


def test_pools_disjointness_check():
    pool_a = [paragraph(i) for i in range(10)]
    pool_b = [paragraph(100 + i) for i in range(10)]
    assert near_duplicates_between(pool_a, pool_b) == []
    pool_b[3] = edit(pool_a[7], 1)
    pool_b[5] = pool_a[2].upper()
    assert near_duplicates_between(pool_a, pool_b, threshold=0.7) == [(2, 5), (7, 3)]


@pytest.mark.parametrize("threshold", [0.5, 0.7, 0.9])
def test_pairs_from_dedup_keys_are_the_lsh_index_pairs(threshold):
    # datasketch's own index (near_duplicates_between) is the reference: same pairs, from keys
    pool_a = [paragraph(i) for i in range(12)] + ["", "Short one."]
    pool_b = [paragraph(100 + i) for i in range(12)] + ["  ", "short ONE."]
    for j, changes in enumerate((1, 4, 8, 12, 16, 24, 32)):  # near, borderline and far edits
        pool_b[j] = edit(pool_a[j], changes, seed=j)
    pool_b[9] = pool_a[2].upper()
    expected = near_duplicates_between(pool_a, pool_b, threshold)
    keys_a = [dedup_keys_of(t, threshold, 128) for t in pool_a]
    keys_b = [dedup_keys_of(t, threshold, 128) for t in pool_b]
    assert near_duplicate_pairs(keys_a, keys_b) == expected
    assert {(2, 9), (12, 12), (13, 13)} <= set(expected)  # exact copies, empty texts included
    assert (6, 6) not in expected  # 32 of 80 words replaced: not a near duplicate


def test_parameters_are_checked():
    with pytest.raises(ValueError, match="threshold"):
        Deduplicator(threshold=1.5)
    with pytest.raises(ValueError, match="num_perm"):
        near_duplicates_between([], [], num_perm=4)


def test_conversation_text_joins_roles_and_contents():
    record = Record.model_validate({
        "id": "r-1", "conversation_id": "c-1", "timestamp": "2026-08-01T10:22:03Z", "scenario": "faq",
        "messages": [{"role": "user", "content": "Where is my parcel?"},
                     {"role": "assistant", "content": "It ships today."}]})
    assert conversation_text(record) == "user: Where is my parcel?\nassistant: It ships today."


def _datasketch_reference(items, threshold, num_perm):
    """What Deduplicator did with datasketch's own in-memory MinHashLSH (every key of every
    bucket kept): the compact index must decide exactly the same."""
    import hashlib

    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm,
                     hashfunc=lambda band: hashlib.blake2b(band, digest_size=8).digest())
    exact, keys, out = {}, [], []
    for key, text in items:
        digest = hashlib.sha256(normalize_text(text).encode()).digest()[:16]
        if digest in exact:
            out.append((key, keys[exact[digest]], None))
            continue
        signature = minhash(text, num_perm)
        candidates = lsh.query(signature) if signature is not None else []
        if candidates:
            out.append((key, None, keys[min(candidates)]))
            continue
        exact[digest] = len(keys)
        if signature is not None:
            lsh.insert(len(keys), signature, check_duplication=False)
        keys.append(key)
        out.append((key, None, None))
    return out


@pytest.mark.parametrize("threshold,num_perm", [(0.8, 128), (0.5, 64), (0.9, 32)])
def test_compact_index_decides_like_datasketch_lsh(threshold, num_perm):
    rng = random.Random(7)
    items = []
    for i in range(300):
        roll = rng.random()
        if items and roll < 0.3:  # a near copy of an earlier text
            base = rng.choice(items)[1]
            text = edit(base, min(len(base.split()), rng.randint(1, 12)), seed=i)
        elif items and roll < 0.4:
            text = rng.choice(items)[1].upper()  # an exact copy after normalisation
        elif roll < 0.45:
            text = rng.choice(["", "  ", "!!", "ok"])  # no or few words
        else:
            text = paragraph(1000 + i, rng.randint(3, 60))
        items.append((f"k{i}", text))
    dedup = Deduplicator(threshold, num_perm)
    got = [(r.key, r.exact_duplicate_of, r.near_duplicate_of) for r in (dedup.add(k, t) for k, t in items)]
    expected = _datasketch_reference(items, threshold, num_perm)
    assert got == expected
    assert any(near for _, _, near in got) and any(ex for _, ex, _ in got)


def test_precomputed_keys_give_the_same_decisions():
    texts = [(f"k{i}", paragraph(i % 7, 40) if i % 3 else edit(paragraph(i % 7, 40), 2, i)) for i in range(40)]
    a, b = Deduplicator(0.8, 128), Deduplicator(0.8, 128)
    assert [a.add(k, t) for k, t in texts] == [b.add_keys(k, b.keys_of(t)) for k, t in texts]
