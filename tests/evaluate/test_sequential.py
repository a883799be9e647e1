"""A sequential evaluation end to end on llama-server and the demo model's GGUF artifacts: the
engine's reference (gguf_f16, compare.engine_baselines) serves its opening look, a quantized variant
is served in looks, serves the reference's items it needs beyond that, and stops at the first look
where its gate is settled; with the record cache the reference serves each item once, as far as its
longest-running variant went; a rerun stops at the same look with the same records, and compare
reads the verdict at the repeated level of the looks taken, paired with the reference records the
variant's stopping rule read."""

import json
import shutil

import pytest

from pipeline.compare import matrix as compare
from pipeline.compare.stopping import stop_rule
from pipeline.evaluate import stage
from pipeline.stats.sequential import Spending, look_sizes, repeated_alpha

from .conftest import make_params
from conftest import stage_args

pytestmark = pytest.mark.slow
F16, Q8, Q2 = "gguf_f16", "gguf_q8_0_business", "gguf_q2_k_business"
LOOK = 100
# research's margins without its JSON criterion: ~100 JSON items of ~600 settle 5 points only at the
# whole set, the rest of a near-identical variant's gate early (the any-slice criterion still runs)
GATES = {"profile": "custom", "critical_slices": [],
         "custom": {"max_drop_overall": 0.05, "max_drop_slice": 0.10, "max_drop_any_slice": 0.10}}
# Q2_K loses ~3 points here: a clear fail against a 0.5-point overall margin, not against 5
STRICT = {**GATES, "custom": {**GATES["custom"], "max_drop_overall": 0.005}}
EXPECTED = {Q8: ("pass", GATES), Q2: ("fail", STRICT)}


def sequential_params(served, gates):
    return make_params(served.data, evaluate={"sequential": {"enabled": True, "look": LOOK, "seed": 7}}, gates=gates)


def records(root, name):
    d = root / "results" / name
    return (json.loads((d / "metrics.json").read_text()),
            [json.loads(x) for x in (d / "samples.jsonl").read_text().splitlines()])


@pytest.fixture(scope="module")
def seq(served):
    for name in (F16, Q8, Q2):
        served.artifact(name)
    for name, gates in ((F16, GATES), (Q8, GATES), (Q2, STRICT)):
        params = sequential_params(served, gates)
        stage.run(*stage_args(params, served.root, stage.PARAMS, name), name, rules=stop_rule)
    return sequential_params(served, GATES), served


def reference_served(root, name):
    d = root / "results" / name
    return ([json.loads(x) for x in (d / "reference-samples.jsonl").read_text().splitlines()],
            json.loads((d / "run.json").read_text())["reference_served"])


def test_the_reference_serves_its_opening_look_and_a_variant_the_rest_it_uses(seq):
    params, served = seq
    ref_m, ref_r = records(served.root, F16)
    rs = ref_m["sequential"]
    assert rs["role"] == "reference" and rs["stopped_for"] == "opening look" and rs["reference"] == "baseline"
    assert rs["looks"] == [LOOK] == [len(ref_r)] and {r["look"] for r in ref_r} == {1}
    own = {r["id"]: r for r in ref_r}
    for name in EXPECTED:
        m, recs = records(served.root, name)
        paired, how = reference_served(served.root, name)
        assert [r["id"] for r in paired] == [r["id"] for r in recs]  # the reference on exactly its items
        assert set(own) < {r["id"] for r in recs}  # the opening look is every variant's first
        assert all(r == own[r["id"]] for r in paired if r["id"] in own)  # read from its results
        assert how["reference"] == F16 and how["artifact_sha256"] == ref_m["artifact_sha256"]
        # the record cache is off in tests: each variant served the reference's other items itself
        assert (how["items"], how["from_its_results"], how["served"]) == (len(recs), LOOK, len(recs) - LOOK)
        assert (served.root / "results" / name / "reference-engine.log").is_file()


def test_a_variant_stops_at_a_settled_look(seq):
    params, served = seq
    ref_m, _ = records(served.root, F16)
    total = ref_m["sequential"]["total"]
    for name, (verdict, _) in EXPECTED.items():
        m, recs = records(served.root, name)
        s = m["sequential"]
        looks = look_sizes(total, LOOK)
        assert s["reference"] == F16 and s["total"] == total and s["looks"] == looks[:len(s["looks"])]
        assert len(recs) == m["n"] == s["items"] == s["looks"][-1] < total  # stopped early
        assert s["stopped"] and s["verdict_at_stop"] == verdict and s["stopped_for"] == "settled"
        assert s["spending"] == "obrien_fleming" and s["futility"] == 0 and "O'Brien–Fleming" in s["design"]
        assert s["saving"] == pytest.approx(1 - len(recs) / total, abs=1e-4)
        assert {r["look"] for r in recs} == set(range(1, len(s["looks"]) + 1))
        assert s["repeated_alpha"] == pytest.approx(repeated_alpha(s["looks"], total, params.compare.alpha))
        # the items served are a seeded sample of the whole set, in evaluation-set order
        order = {i: k for k, i in enumerate(x["id"] for x in map(json.loads, (
            served.root / "data" / "evalset" / "evalset.jsonl").read_text().splitlines()))}
        assert [order[r["id"]] for r in recs] == sorted(order[r["id"]] for r in recs)


def test_a_rerun_stops_at_the_same_look_with_the_same_records(seq, tmp_path):
    params, served = seq
    first = served.root / "results" / Q8
    keep = tmp_path / "first"
    shutil.copytree(first, keep)
    stage.run(*stage_args(params, served.root, stage.PARAMS, Q8), Q8, rules=stop_rule)

    def served_items(d):  # what was served and answered (timings aside)
        return [(r["id"], r["output"], r["score"], r["look"])
                for r in map(json.loads, (d / "samples.jsonl").read_text().splitlines())]

    assert served_items(first) == served_items(keep) != []
    again, before = json.loads((first / "metrics.json").read_text()), json.loads((keep / "metrics.json").read_text())
    assert again["sequential"] == before["sequential"]


def test_compare_reads_a_stopped_variant_at_the_repeated_level_of_its_looks(seq):
    params, served = seq
    from pipeline.compare.stage import PARAMS as COMPARE, enrich

    for name, (verdict, gates) in EXPECTED.items():
        view, layout = stage_args(sequential_params(served, gates), served.root, COMPARE)
        v = enrich(view, layout, compare.run(view, layout, baseline=F16, variants=[Q8, Q2]))["variants"][name]
        m, _ = records(served.root, name)
        assert v["sequential"]["repeated_alpha"] == pytest.approx(m["sequential"]["repeated_alpha"])
        assert v["gate"]["alpha"] == pytest.approx(v["sequential"]["repeated_alpha"])
        assert v["gate"]["alpha"] < params.compare.alpha
        assert v["accuracy"]["n"] == m["n"]  # paired on the items it was served
        quality = [c for c in v["gate"]["criteria"] if c["criterion"] != "gain"]
        assert ("fail" if any(c["verdict"] == "fail" for c in quality) else "pass") == verdict


def test_a_variant_cannot_stop_against_a_reference_made_another_way(seq, tmp_path):
    params, served = seq
    other = make_params(served.data, evaluate={"sequential": {"enabled": True, "look": LOOK},
                                               "max_tokens": 17}, gates=GATES)
    view, layout = stage_args(other, served.root, stage.PARAMS, Q8)
    rule = stop_rule(view, layout, Q8)
    with pytest.raises(compare.CompareError, match="max_tokens differs.*dvc repro evaluate@gguf_f16"):
        stage.evaluate(view, layout, Q8, tmp_path, stop_rule=rule)


def test_a_variant_the_whole_set_would_leave_inconclusive_stops_for_futility(seq, tmp_path):
    # Q2_K's loss against a margin about its size: the whole set would settle nothing, so with a
    # futility bound it stops early, inconclusive, and says why; compare reads it as it reads any
    params, served = seq
    near = {**GATES, "custom": {**GATES["custom"], "max_drop_overall": 0.03}}
    p = make_params(served.data, evaluate={"sequential": {"enabled": True, "look": LOOK, "seed": 7,
                                                          "spending": "pocock", "futility": 0.3}}, gates=near)
    view, layout = stage_args(p, served.root, stage.PARAMS, Q2)
    m = stage.evaluate(view, layout, Q2, tmp_path, stop_rule=stop_rule(view, layout, Q2))
    s = m["sequential"]
    assert s["stopped_for"] == "futility" and s["verdict_at_stop"] == "inconclusive", s
    assert s["stopped"] and s["items"] < s["total"] and s["conditional_power"] < 0.3
    assert s["spending"] == "pocock" and "Pocock" in s["design"] and "futility" in s["design"]
    total = records(served.root, F16)[0]["sequential"]["total"]
    assert s["repeated_alpha"] == pytest.approx(repeated_alpha(s["looks"], total, params.compare.alpha,
                                                               Spending("pocock")))


def test_with_the_record_cache_the_reference_serves_as_far_as_its_longest_running_variant(seq, tmp_path,
                                                                                         monkeypatch):
    # every variant reads the reference's items another variant served: in all the reference
    # serves each item once, as many as its longest-running variant used — no more
    params, served = seq
    monkeypatch.setenv("QPIPE_RECORD_CACHE", str(tmp_path / "cache"))
    res = tmp_path / "results"
    items, served_by = {}, {}
    for name, gates in ((F16, GATES), (Q8, GATES), (Q2, STRICT)):
        p = make_params(served.data, evaluate={"sequential": {"enabled": True, "look": LOOK, "seed": 7},
                                               "out_dir": str(res)}, gates=gates)
        stage.run(*stage_args(p, served.root, stage.PARAMS, name), name, rules=stop_rule)
        m = json.loads((res / name / "metrics.json").read_text())
        items[name] = m["sequential"]["items"]
        if name != F16:
            served_by[name] = json.loads((res / name / "run.json").read_text())["reference_served"]
    assert items[F16] == LOOK and min(items[Q8], items[Q2]) > LOOK
    assert sum(s["served"] for s in served_by.values()) == max(items.values()) - LOOK
    assert served_by[Q8]["served"] == items[Q8] - LOOK  # the first to run served its own part
    assert served_by[Q2]["from_cache"] == min(items[Q8], items[Q2]) - LOOK  # and the second read it
    a, b = ({r["id"]: r["output"] for r in map(json.loads, (res / n / "reference-samples.jsonl").read_text()
                                                 .splitlines())} for n in (Q8, Q2))
    assert all(a[i] == b[i] for i in set(a) & set(b))  # one serving of each reference item
    # the variants served the reference under the identity its own stage used: one file of it,
    # holding its opening look and every item its variants served for it
    files = sorted((tmp_path / "cache").glob("*.jsonl"))
    assert len(files) == 3  # gguf_f16, Q8, Q2
    lines = {len(f.read_text().splitlines()) - 1 for f in files}  # the header aside
    assert max(items.values()) in lines


def test_compare_pairs_a_variant_with_the_reference_records_it_read_and_refuses_any_other(seq):
    params, served = seq
    from pipeline.compare.stage import PARAMS as COMPARE
    from pipeline.io import file_sha256

    view, layout = stage_args(sequential_params(served, GATES), served.root, COMPARE)
    v = compare.run(view, layout, baseline=F16, variants=[Q8])["variants"][Q8]
    path = served.root / "results" / Q8 / "reference-samples.jsonl"
    assert v["custody"]["reference_samples_sha256"] == file_sha256(path)
    assert v["accuracy"]["n"] == len(path.read_text().splitlines()) > LOOK
    # the reference read against another run on the items it served itself, at α: a sample
    # fixed in advance, not a stopping time
    r = compare.run(view, layout, baseline=Q8, variants=[F16])["variants"][F16]
    assert r["accuracy"]["n"] == LOOK and r["sequential"]["repeated_alpha"] == params.compare.alpha
    # read against the baseline on every item it was served, by itself and by its variants: as far
    # as the longest-running variant went, at the repeated level of the looks those items make
    loaded = {n: compare.load_results(served.root / "results", n) for n in (F16, Q8, Q2)}
    union = compare.served_in_all(served.root / "results", F16, loaded, {Q8: F16, Q2: F16})
    longest = max(len(loaded[n][1]) for n in (Q8, Q2))
    assert len(union) == longest and len({x["id"] for x in union}) == longest
    seq, _, at = compare.sequential_design(F16, loaded[F16][0], union, "baseline", union, params.compare)
    looks = look_sizes(seq["total"], LOOK)[:longest // LOOK]
    assert (seq["looks"], seq["items"], seq["opening_items"]) == (looks, longest, LOOK)
    assert seq["repeated_alpha"] == at.alpha == pytest.approx(repeated_alpha(looks, seq["total"], params.compare.alpha))
    kept = path.read_text()
    try:
        path.write_text("".join(kept.splitlines(keepends=True)[:-1]))  # one item short
        with pytest.raises(compare.CompareError, match="are not for its"):
            compare.run(view, layout, baseline=F16, variants=[Q8])
        path.unlink()
        with pytest.raises(compare.CompareError, match="holds no records of gguf_f16"):
            compare.run(view, layout, baseline=F16, variants=[Q8])
    finally:
        path.write_text(kept)
