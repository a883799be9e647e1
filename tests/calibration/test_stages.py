"""End to end: the `split` and `calibration@<set>` stages on small generated logs.

Each module fixture runs `split` once in its own project under tmp; the tests only read.
The tokenizer is copied once from models/demo, so a demo model retrained meanwhile cannot
change it between two builds that are compared byte for byte.
"""

import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest
import yaml

from pipeline.calibration import build, split
from pipeline.calibration.dedup import near_duplicates_between
from pipeline.calibration.inspect import diff, freeze
from pipeline.calibration.sample import QuotaError
from pipeline.calibration.split import dedup_text, length_bucket
from pipeline.config import load_params
from demo.generator import draft, planted_pii, write_general_corpus, write_logs
from pipeline.models import load_tokenizer
from conftest import stage_args

SEED = 20261129
CONVERSATIONS = 400
LOGS = dict(seed=SEED, conversations=CONVERSATIONS, days=90, end_date="2026-11-15",
            malformed_share=0.02, duplicate_share=0.03)
PII_KINDS = ("EMAIL", "PHONE", "NATIONAL_ID", "CARD", "ADDRESS", "PERSON")
SCARCE = 200  # more hard samples than 400 conversations leave in the calibration pool
SETS = {
    "business": dict(source="business", num_samples=48, max_seq_len=512, overlength="drop",
                     hard_share_min=0.3, quota_policy="fill", seed=0),
    "general": dict(source="general", num_samples=48, max_seq_len=512, overlength="truncate", seed=0),
    "scarce_fail": dict(source="business", num_samples=SCARCE, max_seq_len=512, hard_share_min=1.0,
                        quota_policy="fail", seed=0),
    "scarce_fill": dict(source="business", num_samples=SCARCE, max_seq_len=512, hard_share_min=1.0,
                        quota_policy="fill", seed=0),
    "rotated": dict(source="business", num_samples=48, max_seq_len=512, hard_share_min=0.3, seed=1,
                    rotation={"previous": "calibration/specs/business.ids", "refresh": 0.25}),
    "reseeded": dict(source="business", num_samples=48, max_seq_len=512, hard_share_min=0.3, seed=1),
}
OUT_DIRS = ("evalset", "pools", "split", "calibration/business", "calibration/general")


# ---------------------------------------------------------------------------------- helpers

def write_params(root: Path, repo: Path, model_dir: Path, *, pii: bool = True) -> Path:
    params = yaml.safe_load((repo / "params.yaml").read_text())
    params["model"]["path"] = str(model_dir)
    params["data"]["sources"] = ["logs"]
    params["data"]["general_corpus"] = "general.jsonl"
    params["split"]["pii"]["enabled"] = pii
    params["calibration"]["sets"] = SETS
    path = root / "params.yaml"
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    return path


def run_split(root: Path):
    params = load_params(root / "params.yaml")
    return params, split.run(*stage_args(params, root, split.PARAMS))


def snapshot(data: Path, dirs=OUT_DIRS) -> dict[str, bytes]:
    files = {p.relative_to(data).as_posix(): p.read_bytes()
             for d in dirs for p in sorted((data / d).rglob("*")) if p.is_file()}
    assert files
    return files


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def file_texts(path: Path) -> str:
    """Everything a file says, as text: raw bytes, plus JSON strings un-escaped, plus Parquet cells."""
    if path.suffix == ".parquet":
        return json.dumps(pq.read_table(path).to_pylist(), ensure_ascii=False)
    raw = path.read_bytes()
    text = raw.decode("utf-8", errors="replace")
    if path.suffix == ".json":
        text += json.dumps(json.loads(raw), ensure_ascii=False)
    elif path.suffix == ".jsonl":
        text += "".join(json.dumps(json.loads(line), ensure_ascii=False) for line in raw.splitlines())
    return text


def leaks(data: Path, values: set[str]) -> dict[str, list[str]]:
    found = {}
    for path in sorted(p for p in data.rglob("*") if p.is_file()):
        text = file_texts(path)
        hits = sorted(v for v in values if v in text)
        if hits:
            found[path.relative_to(data).as_posix()] = hits
    return found


def planted_exact_duplicates(logs: Path) -> list[tuple[str, str]]:
    """(duplicate id, original id) of every planted copy whose messages equal the original's."""
    originals, copies = {}, []
    for path in sorted(logs.glob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if not isinstance(rec, dict) or not isinstance(rec.get("messages"), list):
                continue
            key = json.dumps(rec["messages"], sort_keys=True)
            if str(rec.get("id", "")).startswith("r-dup"):
                copies.append((rec["id"], key))
            elif str(rec.get("id", "")).startswith("r-0"):
                originals.setdefault(key, rec["id"])
    return [(dup, originals[key]) for dup, key in copies if key in originals]


def set_dir(project, name: str) -> Path:
    return project.data / "calibration" / name


# --------------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def model_dir(repo, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("model")
    for p in (repo / "models" / "demo").iterdir():
        if p.is_file() and p.suffix in (".json", ".jinja", ".txt", ".model"):
            shutil.copy2(p, out / p.name)
    assert (out / "tokenizer.json").is_file() and (out / "config.json").is_file()
    return out


@pytest.fixture(scope="module")
def planted() -> set[str]:
    return {value for i in range(CONVERSATIONS) for _, value in planted_pii(draft("logs", SEED, i)[0])}


@pytest.fixture(scope="module")
def project(repo, model_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("project")
    summary = write_logs(root / "logs", **LOGS)
    write_general_corpus(root / "general.jsonl", seed=SEED, documents=200)
    write_params(root, repo, model_dir)
    params, report = run_split(root)
    cards = {name: build.run(*stage_args(params, root, build.PARAMS, name), name) for name in ("business", "general")}
    data = root / params.split.out_dir
    return SimpleNamespace(root=root, data=data, params=params, report=report, cards=cards,
                           summary=summary, files=snapshot(data))


@pytest.fixture(scope="module")
def rerun(project):
    """The same stages again in the same project: outputs must not change."""
    run_split(project.root)
    for name in ("business", "general"):
        build.run(*stage_args(project.params, project.root, build.PARAMS, name), name)
    return snapshot(project.data)


@pytest.fixture(scope="module")
def edited(project, repo, model_dir, tmp_path_factory):
    """A copy of the project whose logs differ in one selected calibration-pool record's user text."""
    root = tmp_path_factory.mktemp("edited")
    shutil.copytree(project.root / "logs", root / "logs")
    shutil.copy2(project.root / "general.jsonl", root / "general.jsonl")
    write_params(root, repo, model_dir)
    pool_ids = {r["id"] for r in read_jsonl(project.data / "pools" / "calibration.jsonl")}
    # ids leave the split as pseudonyms: map them back to the generated logs' own ids
    key, _ = split.id_key(load_params(project.root / "params.yaml"))
    raw_of = {split.pseudonym(key, f"r-{i:07d}"): f"r-{i:07d}" for i in range(CONVERSATIONS)}
    chosen = [raw_of[r["id"]] for r in read_jsonl(set_dir(project, "business") / "samples.jsonl")
              if r["id"] in pool_ids and r["id"] in raw_of]
    target = chosen[0]
    for path in sorted((root / "logs").glob("*.jsonl")):
        lines = path.read_bytes().split(b"\n")
        for k, line in enumerate(lines):
            if f'"id": "{target}"'.encode() in line[:40]:
                rec = json.loads(line)
                user = [m for m in rec["messages"] if m["role"] == "user"][-1]
                user["content"] += " Also, could you confirm this by email before Friday afternoon?"
                lines[k] = json.dumps(rec, ensure_ascii=False).encode()
                path.write_bytes(b"\n".join(lines))
                break
        else:
            continue
        break
    else:
        pytest.fail(f"record {target} not found in the generated logs")
    params, report = run_split(root)
    card = build.run(*stage_args(params, root, build.PARAMS, "business"), "business")
    return SimpleNamespace(root=root, data=root / params.split.out_dir, target=target, card=card,
                           report=report)


@pytest.fixture(scope="module")
def unscrubbed(repo, model_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("nopii")
    write_logs(root / "logs", **LOGS)
    write_general_corpus(root / "general.jsonl", seed=SEED, documents=200)
    write_params(root, repo, model_dir, pii=False)
    params, report = run_split(root)
    card = build.run(*stage_args(params, root, build.PARAMS, "business"), "business")
    return SimpleNamespace(root=root, data=root / params.split.out_dir, report=report, card=card)


@pytest.fixture(scope="module")
def tokenizer(model_dir):
    return load_tokenizer(model_dir)


# ------------------------------------------------------------------------------ ingest, PII

def test_every_record_is_accounted_for_and_every_malformed_kind_rejected(project):
    ingest, summary = project.report["ingest"], project.summary
    planted_bad = Counter(summary["malformed"])
    assert ingest["records_in"] == ingest["kept"] + ingest["rejected"]
    assert ingest["records_in"] == CONVERSATIONS + summary["duplicates"] + sum(planted_bad.values())
    assert set(planted_bad) == set(ingest["rejected_by_reason"])
    assert Counter(ingest["rejected_by_reason"]) == planted_bad
    rejects = read_jsonl(project.data / "split" / "rejects.jsonl")
    assert Counter(r["reason"] for r in rejects) == planted_bad
    per_file = ingest["per_file"].values()
    assert sum(f["records_in"] for f in per_file) == ingest["records_in"]


def test_rejects_point_at_their_exact_line_and_show_no_pii(project, planted):
    rejects = read_jsonl(project.data / "split" / "rejects.jsonl")
    assert rejects
    for r in rejects:
        assert set(r) == {"file", "line", "offset", "sha256", "reason", "detail", "excerpt"}
        assert not Path(r["file"]).is_absolute()  # named relative to the project root
        raw = (project.root / r["file"]).read_bytes()
        body = raw[r["offset"]:].split(b"\n", 1)[0]
        assert raw[:r["offset"]].count(b"\n") + 1 == r["line"]
        assert r["offset"] == 0 or raw[r["offset"] - 1:r["offset"]] == b"\n"
        assert hashlib.sha256(body).hexdigest() == r["sha256"], r["reason"]
        assert 0 < len(r["excerpt"]) <= 120
        assert [v for v in planted if v in r["excerpt"]] == [], r


def test_no_planted_pii_value_in_any_output_file(project, planted):
    assert len(planted) > 100
    files = sorted(p.relative_to(project.data).as_posix() for p in project.data.rglob("*") if p.is_file())
    assert {"pools/calibration.jsonl", "evalset/evalset.jsonl", "split/rejects.jsonl",
            "calibration/business/data.parquet", "calibration/business/imatrix.txt"} <= set(files)
    assert leaks(project.data, planted) == {}


def test_the_leak_check_sees_raw_pii_when_scrubbing_is_off(unscrubbed, planted):
    found = leaks(unscrubbed.data, planted)
    assert "pools/calibration.jsonl" in found and "calibration/business/data.parquet" in found


def test_card_counts_pii_replacements_of_every_kind(project):
    card = project.cards["business"]
    assert card["pii"]["enabled"] is True
    for kind in PII_KINDS:
        assert card["pii"]["replacements"].get(kind, 0) > 0, kind
    assert card["pii"] == project.report["pii"]


def test_disabled_pii_scrubbing_is_recorded_in_the_card(unscrubbed):
    assert unscrubbed.report["pii"] == {"enabled": False, "replacements": {}}
    assert unscrubbed.card["pii"] == {"enabled": False, "replacements": {}}
    card_md = (unscrubbed.data / "calibration" / "business" / "card.md").read_text()
    assert "PII scrubbing: **OFF**" in card_md
    assert json.loads((unscrubbed.data / "calibration" / "business" / "card.json").read_text())["pii"][
        "enabled"] is False


# --------------------------------------------------------------------------- split, overlap

def test_eval_set_and_calibration_are_disjoint(project):
    evalset = read_jsonl(project.data / "evalset" / "evalset.jsonl")
    pool = {r["id"]: r for r in read_jsonl(project.data / "pools" / "calibration.jsonl")}
    selected = read_jsonl(set_dir(project, "business") / "samples.jsonl")
    assert evalset and selected
    assert {s["id"] for s in selected} <= set(pool)
    assert {e["id"] for e in evalset}.isdisjoint(pool)
    assert {e["conversation_id"] for e in evalset}.isdisjoint(r["conversation_id"] for r in pool.values())
    eval_texts = [dedup_text(e["messages"]) for e in evalset]
    for texts in ([dedup_text(pool[s["id"]]["messages"]) for s in selected],       # whole conversation
                  [dedup_text(pool[s["id"]]["messages"][:-1]) for s in selected]):  # prompt only
        assert near_duplicates_between(eval_texts, texts, project.params.split.dedup.near_threshold,
                                       project.params.split.dedup.num_perm) == []
    overlap = project.cards["business"]["overlap_with_evalset"]
    assert overlap["by_id"] == 0 and overlap["near_duplicates"] == 0


def test_split_report_adds_up(project):
    report = project.report
    counts = Counter(report["split"])
    assert (counts["eval"] + counts["eval_duplicates"] + counts["eval_unscorable"] + counts["calibration"]
            + counts["calibration_duplicates"]) == report["ingest"]["kept"]
    evalset = read_jsonl(project.data / "evalset" / "evalset.jsonl")
    pool = read_jsonl(project.data / "pools" / "calibration.jsonl")
    dups = read_jsonl(project.data / "split" / "duplicates.jsonl")
    assert len(evalset) == counts["eval"] > 0
    assert len(pool) == counts["calibration"] > 0
    assert Counter(d["pool"] for d in dups) == +Counter({"eval": counts["eval_duplicates"],
                                                         "calibration": counts["calibration_duplicates"]})
    # every planted exact duplicate is caught (one of each pair flagged); flagged ids never survive
    flagged = {d["id"] for d in dups}
    # ids leave the split as keyed-hash pseudonyms: the planted pairs' raw ids, hashed alike
    key, _ = split.id_key(load_params(project.root / "params.yaml"))
    exact_pairs = [tuple(split.pseudonym(key, i) for i in pair)
                   for pair in planted_exact_duplicates(project.root / "logs")]
    assert exact_pairs and report["ids"].startswith("keyed hash")
    assert [pair for pair in exact_pairs if not set(pair) & flagged] == []
    kept_ids = {r["id"] for r in evalset} | {r["id"] for r in pool}
    assert kept_ids.isdisjoint(d["id"] for d in dups)
    card = json.loads((project.data / "evalset" / "card.json").read_text())
    assert card["samples"] == len(evalset)
    assert card["content_sha256"] == hashlib.sha256(
        (project.data / "evalset" / "evalset.jsonl").read_bytes()).hexdigest()
    assert report["evalset_sha256"] == card["content_sha256"]


def test_stages_are_deterministic_byte_for_byte(project, rerun):
    assert sorted(rerun) == sorted(project.files)
    changed = [name for name in project.files if rerun[name] != project.files[name]]
    assert changed == []


def test_editing_one_calibration_record_changes_the_set_but_not_the_evalset(project, edited):
    before, after = project.cards["business"], edited.card
    assert after["content_sha256"] != before["content_sha256"]
    for name in ("evalset.jsonl", "card.json"):
        assert (edited.data / "evalset" / name).read_bytes() == (project.data / "evalset" / name).read_bytes()
    assert edited.report["evalset_sha256"] == project.report["evalset_sha256"]
    assert edited.report["calibration_pool_sha256"] != project.report["calibration_pool_sha256"]
    d = diff(set_dir(project, "business"), edited.data / "calibration" / "business")
    touched = set(d["added"]) | set(d["removed"]) | set(d["changed_text"])
    key, _ = split.id_key(load_params(project.root / "params.yaml"))
    assert split.pseudonym(key, edited.target) in touched
    assert len(d["added"]) <= 2 and len(d["removed"]) <= 2  # a small, explainable change


# ------------------------------------------------------------------------------------ cards

@pytest.mark.parametrize("name", ["business", "general"])
def test_card_numbers_match_the_data(project, tokenizer, name):
    d = set_dir(project, name)
    card = json.loads((d / "card.json").read_text())
    cs = project.params.calibration.sets[name]
    samples = read_jsonl(d / "samples.jsonl")
    assert card == project.cards[name]
    assert card["samples"] == len(samples) == cs.num_samples
    assert len({s["id"] for s in samples}) == len(samples)
    assert card["content_sha256"] == hashlib.sha256((d / "samples.jsonl").read_bytes()).hexdigest()
    comp = Counter(f"{s['scenario']}|{s['length_bucket']}|{s['difficulty'] or 'unlabelled'}" for s in samples)
    assert card["composition"] == dict(comp) and sum(card["composition"].values()) == card["samples"]
    assert card["by_scenario"] == dict(Counter(s["scenario"] for s in samples))
    assert sum(card["by_scenario"].values()) == card["samples"]
    hard = sum(s["difficulty"] == "hard" for s in samples)
    assert card["hard_share"] == round(hard / len(samples), 4)
    assert card["hard_share"] >= (cs.hard_share_min if name == "business" else 0)
    lengths = [s["n_tokens"] for s in samples]
    assert card["token_lengths"]["min"] == min(lengths) and card["token_lengths"]["max"] == max(lengths)
    assert card["token_lengths"]["total"] == sum(lengths) and max(lengths) <= cs.max_seq_len
    edges = list(project.params.calibration.length_buckets)
    assert all(s["length_bucket"] == length_bucket(s["n_tokens"], edges) for s in samples)
    # the Parquet and llama.cpp files carry exactly the same rows
    assert pq.read_table(d / "data.parquet").to_pylist() == samples
    assert (d / "imatrix.txt").read_text(encoding="utf-8") == "\n\n".join(s["text"] for s in samples) + "\n"
    assert card["inputs_sha256"]


def test_business_texts_are_the_chat_template_of_pool_records(project, tokenizer):
    pool = {r["id"]: r for r in read_jsonl(project.data / "pools" / "calibration.jsonl")}
    for s in read_jsonl(set_dir(project, "business") / "samples.jsonl"):
        rec = pool[s["id"]]
        assert s["text"] == tokenizer.apply_chat_template(rec["messages"], tokenize=False)
        assert s["n_tokens"] == len(tokenizer(s["text"], add_special_tokens=False)["input_ids"])
        assert (s["scenario"], s["difficulty"], s["source"]) == (rec["scenario"], rec.get("difficulty"),
                                                                 "business")


# ------------------------------------------------------------------------ quotas, rotation

def test_quota_shortfall_fails_or_is_filled_and_reported(project):
    pool = read_jsonl(project.data / "pools" / "calibration.jsonl")
    assert sum(r.get("difficulty") == "hard" for r in pool) < SCARCE  # the premise of the test
    with pytest.raises(QuotaError) as err:
        build.run(*stage_args(project.params, project.root, build.PARAMS, "scarce_fail"), "scarce_fail")
    assert "|hard: wanted" in str(err.value) and "short" in str(err.value)
    assert not set_dir(project, "scarce_fail").exists()  # nothing half-written

    card = build.run(*stage_args(project.params, project.root, build.PARAMS, "scarce_fill"), "scarce_fill")
    shortfalls = card["shortfalls"]["business"]
    assert shortfalls and all("|hard: wanted" in s for s in shortfalls)
    missing = sum(int(s.rsplit("(short ", 1)[1].rstrip(")")) for s in shortfalls)
    assert sum(card["filled_from_neighbours"]["business"].values()) == missing
    assert card["samples"] == SCARCE
    md = (set_dir(project, "scarce_fill") / "card.md").read_text()
    assert md.count("> shortfall (business)") == len(shortfalls)


def test_rotation_keeps_about_three_quarters_of_the_frozen_ids(project):
    business = set_dir(project, "business")
    spec = project.root / "calibration" / "specs" / "business.ids"
    assert freeze(business, spec) == 48
    previous = set(spec.read_text().split())
    assert previous == {s["id"] for s in read_jsonl(business / "samples.jsonl")}

    card = build.run(*stage_args(project.params, project.root, build.PARAMS, "rotated"), "rotated")
    rotated = {s["id"] for s in read_jsonl(set_dir(project, "rotated") / "samples.jsonl")}
    assert len(rotated) == 48
    assert card["rotation"]["kept_from_previous"] == 36 and card["rotation"]["refresh"] == 0.25
    assert 36 <= len(rotated & previous) <= 42  # 75% kept, the rest drawn anew (may re-draw a few)

    # same seed, no rotation: far fewer kept
    build.run(*stage_args(project.params, project.root, build.PARAMS, "reseeded"), "reseeded")
    reseeded = {s["id"] for s in read_jsonl(set_dir(project, "reseeded") / "samples.jsonl")}
    assert len(reseeded & previous) < 36


# --------------------------------------------------------------------- regressions

def test_outputs_do_not_depend_on_where_the_project_lives(project):
    where = str(project.root).encode()
    assert [name for name, data in project.files.items() if where in data] == []


def test_build_overlap_check_catches_copies_of_eval_conversations(project, tokenizer):
    evalset = read_jsonl(project.data / "evalset" / "evalset.jsonl")
    rows = [{"id": f"leak-{i}", "scenario": e["slices"]["scenario"], "_source": "business",
             "messages": e["messages"] + [{"role": "assistant", "content": e["reference"]}]}
            for i, e in enumerate(evalset)]
    cs = project.params.calibration.sets["business"].model_copy(update={"max_seq_len": 1 << 20})
    cands = build._candidates(rows, tokenizer, cs, list(project.params.calibration.length_buckets), Counter())
    missed = [r["id"] for _, r in cands
              if build._overlap_with_eval(project.data, [r], project.params)["near_duplicates"] == 0]
    assert missed == []


def test_pii_dictionary_terms_are_scrubbed_from_reject_excerpts(repo, model_dir, tmp_path):
    term = "bluefalcon"  # a customer code name only the dictionary knows
    good = {"conversation_id": "c-1", "timestamp": "2026-08-01T10:00:00Z", "scenario": "faq",
            "messages": [{"role": "user", "content": f"hello, this is {term}, where is my parcel?"},
                         {"role": "assistant", "content": "It ships tomorrow."}]}
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.jsonl").write_text(
        json.dumps({"id": "r-1", **good}) + "\n"
        + json.dumps({"id": "r-2", "codename": term, **good | {"conversation_id": "c-2"}})[:150] + "\n"
        + json.dumps({"id": "r-3", **good | {"conversation_id": "c-3"}}) + "\n")
    (tmp_path / "dictionary.txt").write_text(term + "\n")
    write_general_corpus(tmp_path / "general.jsonl", seed=SEED, documents=20)
    path = write_params(tmp_path, repo, model_dir)
    params = yaml.safe_load(path.read_text())
    params["split"]["pii"]["dictionary"] = "dictionary.txt"
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    _, report = run_split(tmp_path)
    data = tmp_path / "data"
    assert report["ingest"]["rejected_by_reason"] == {"bad_json": 1}
    assert report["pii"]["replacements"]["PERSON"] >= 2
    for name in ("pools/calibration.jsonl", "evalset/evalset.jsonl"):
        assert term not in (data / name).read_text()
    [reject] = read_jsonl(data / "split" / "rejects.jsonl")
    assert term not in reject["excerpt"], reject["excerpt"]


# --------------------------------------------------------------------- parallel scrubbing

SPLIT_DIRS = ("evalset", "pools", "split")


def _split_with(project, repo, model_dir, root: Path, **split_params) -> dict[str, bytes]:
    shutil.copytree(project.root / "logs", root / "logs")
    write_params(root, repo, model_dir)
    params = yaml.safe_load((root / "params.yaml").read_text())
    params["split"].update(split_params)
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    params, _ = run_split(root)
    return snapshot(root / params.split.out_dir, SPLIT_DIRS)


def test_split_by_id_builds_the_evalset_while_streaming_as_reading_back_would(
        project, repo, model_dir, tmp_path, monkeypatch):
    # The id split builds evaluation items in the scrub workers during pass 1; the date split
    # reads kept records back in a pass of their own. Both ways must give the same outputs.
    monkeypatch.setattr(split, "_pools_known_while_streaming", lambda split_params: False)
    read_back = _split_with(project, repo, model_dir, tmp_path / "read-back", workers=2)
    assert read_back == snapshot(project.data, SPLIT_DIRS)


def test_build_outputs_do_not_depend_on_the_number_of_workers(project, repo, model_dir, tmp_path):
    root = tmp_path / "one"
    shutil.copytree(project.root, root, ignore=shutil.ignore_patterns("logs"))
    params = yaml.safe_load((root / "params.yaml").read_text())
    params["split"]["workers"] = 1
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    for name in ("business", "general"):
        build.run(*stage_args(load_params(root / "params.yaml"), root, build.PARAMS, name), name)
    dirs = ("calibration/business", "calibration/general")
    assert snapshot(root / project.params.split.out_dir, dirs) == snapshot(project.data, dirs)


@pytest.mark.parametrize("by", ["conversation_id", "date"])
def test_split_outputs_do_not_depend_on_the_number_of_workers(project, repo, model_dir, tmp_path, by):
    extra = {"by": by, "eval_recent_days": 20} if by == "date" else {}
    serial = _split_with(project, repo, model_dir, tmp_path / "one", workers=1, **extra)
    parallel = _split_with(project, repo, model_dir, tmp_path / "three", workers=3, **extra)
    assert sorted(serial) == sorted(parallel)
    assert [name for name in serial if serial[name] != parallel[name]] == []
    if by == "conversation_id":  # the project ran with the default (one worker per core)
        assert serial == snapshot(project.data, SPLIT_DIRS)
    else:
        report = json.loads(serial["split/report.json"])
        assert report["split"]["eval"] > 0 and report["split"]["calibration"] > 0


def test_the_split_and_the_sets_write_their_files_through_their_contracts(project):
    from pipeline.contracts import ContractError, read_lines
    from pipeline.contracts.business_record import Record
    from pipeline.contracts.split_outputs import CalibrationSample, DuplicateLine, Reject, SplitReport

    report = SplitReport.load(project.data / "split" / "report.json")
    assert report.dump() == project.report  # what the stage returned is what it wrote
    assert report.ingest.kept == sum(report.split.values())
    rejects = read_lines(Reject, project.data / "split" / "rejects.jsonl")
    assert len(rejects) == report.ingest.rejected
    duplicates = read_lines(DuplicateLine, project.data / "split" / "duplicates.jsonl")
    assert len(duplicates) == sum(v for k, v in report.split.items() if k.endswith("_duplicates"))
    pool = read_lines(Record, project.data / "pools" / "calibration.jsonl")
    assert len(pool) == report.split["calibration"]
    for name in ("business", "general"):
        samples = read_lines(CalibrationSample, set_dir(project, name) / "samples.jsonl")
        assert len(samples) == project.cards[name]["samples"]
    bad = project.root / "old-report.json"
    bad.write_text(json.dumps({k: v for k, v in project.report.items() if k != "schema"}))
    with pytest.raises(ContractError, match="no schema id.*dvc repro split"):
        SplitReport.load(bad)
