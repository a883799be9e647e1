"""Silent-regression detectors on outputs whose defects are planted by hand."""

from pipeline.evaluate.detectors import consistency, repeats, variant_detectors


def rec(i, output, score=1.0, tokens=None, json_valid=None):
    return {"id": str(i), "output": output, "score": score,
            "output_tokens": tokens if tokens is not None else len(output.split()),
            "repetition": repeats(output), "json_valid": json_valid}


def test_repetition_is_a_looping_ngram_not_a_repeated_word():
    assert repeats("the order ships today the order ships today the order ships today")
    assert not repeats("yes yes yes")  # shorter than one 4-gram three times
    assert not repeats("Your order 123 ships on Monday and arrives on Friday.")


def test_variant_detectors_count_each_defect():
    records = [rec(0, "fine answer"), rec(1, "", tokens=0),
               rec(2, "a b c d a b c d a b c d", tokens=128),
               rec(3, '{"name": "x"}', json_valid=True), rec(4, '{"name": ', json_valid=False)]
    d = variant_detectors(records, max_tokens=128)
    assert d["empty_output_share"] == 0.2
    assert d["hit_max_tokens_share"] == 0.2
    assert d["repetition_rate"] == 0.2
    assert (d["json_validity"], d["json_samples"]) == (0.5, 2)
    assert d["output_tokens"]["max"] == 128


def test_consistency_has_three_levels():
    base = [rec(0, "Category: billing."), rec(1, "The answer is 42"), rec(2, "Refund in 5 days", 0.0)]
    other = [rec(0, "Category: billing."), rec(1, "The answer is 42!"), rec(2, "Refund in 6 days", 1.0)]
    c = consistency(base, other)
    assert c["exact_match_rate"] == round(1 / 3, 4)
    assert 0.9 < c["char_similarity"] < 1.0
    assert c["task_agreement"] == round(2 / 3, 4)
