"""`qpipe search`: the cheapest variant of the model that passes the business gate.

The `sensitivity` stage proposes mixed-precision recipes under the size budgets of params'
`search` section (pipeline/search). This command certifies them, cheapest first:

1. each proposal becomes an ordinary variant in params.yaml (`search_<mix>_<tool>`), its recipe
   copied from the sensitivity stage's outputs to recipes/search/ (the manifest records it);
2. `qpipe repro` quantizes, evaluates and measures its divergence like any other variant;
3. its gate is judged against its engine's reference with the compare stage's own statistics and
   gates, written under `<compare.out_dir>/certify/` (the compare stage's outputs stay untouched);
4. the search stops at the first proposal that passes; every one tried stays in params.yaml, so
   the next `qpipe repro` puts it in comparison.md, MLflow and, when it passed, the handoff.

The report (`search.md`, `search.json`) lists the front, the certified choice, why each cheaper
proposal was rejected, every uniform variant of the same backend judged beside them (and the
smallest that passed), and the proxy's rank correlation with the measured business loss.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import yaml
from ruamel.yaml import YAML  # round-trip: params.yaml's comments and order survive the edit

from pipeline.contracts.files import METRICS, SENSITIVITY
from pipeline.errors import QpipeError

if TYPE_CHECKING:
    from pipeline.config import Params

CERTIFY = "certify"  # <compare.out_dir>/certify/: the report and the proposals' judged comparison
RECIPES = "recipes/search"  # each proposal's recipe, copied out of the sensitivity report
MARK = "proposed by `qpipe search` from the sensitivity stage"


class SearchError(QpipeError, ValueError):
    pass


def _preset_scheme(recipe: Path, candidate: dict[str, Any]) -> str:
    """A GGUF mix is named for its preset (the format of every tensor not overridden)."""
    return f"gguf_{str(yaml.safe_load(recipe.read_text(encoding='utf-8'))['preset']).lower()}"


def _lowest_format_scheme(recipe: Path, candidate: dict[str, Any]) -> str:
    """A config_groups mix is named for its lowest-precision format and its modifier (GPTQ's
    W4A16 → w4a16_gptq): the scheme whose presets hold that format and whose required modifier,
    if any, the recipe has; the recipe holds the rest."""
    from pipeline.config.scheme_tables import SCHEMES, family
    from pipeline.quantize.llmcompressor_recipes import REQUIRED_MODIFIER

    used = [f for f, n in candidate["formats"].items() if n and f != "BF16"]
    low = min(used, key=lambda f: int("".join(c for c in f.split("A")[0] if c.isdigit()) or 16))
    text = recipe.read_text(encoding="utf-8")
    fits = sorted(n for n in family("compressed") if low in SCHEMES.get(n).recipe_schemes
                  and REQUIRED_MODIFIER.get(n, "") in text)
    if not fits:
        raise SearchError(f"{recipe}: no compressed-tensors scheme takes {low} with this recipe's modifier")
    return fits[0]


# A proposal's recipe family → the backend that builds it, the engine that serves its format and
# how its scheme is named.
TOOLS = {
    "gguf": {"backend": "llamacpp", "engine": "llamacpp", "scheme": _preset_scheme},
    "llmcompressor": {"backend": "llmcompressor", "engine": "vllm", "scheme": _lowest_format_scheme},
}
def variant_name(label: str, tool: str) -> str:
    return f"search_{label}_{tool}"


def variant_spec(params: Params, root: Path, candidate: dict[str, Any], tool: str) -> dict[str, Any]:
    """The params.yaml entry of one proposal built by `tool` (a key of TOOLS). Its recipe is
    copied from the sensitivity stage's outputs to recipes/search/<variant>.yaml: a variant keeps
    the recipe it was judged with when the sensitivity is measured again (a calibration change
    re-runs that stage), and the stage can re-run while params name its proposals."""
    if tool not in TOOLS:
        raise SearchError(f"--tool must be one of {', '.join(TOOLS)}, not {tool!r}")
    rel = (candidate.get("recipes") or {}).get(tool)
    if not rel:
        raise SearchError(f"proposal {candidate['label']} has no {tool} recipe: "
                          + "; ".join(candidate.get("notes") or ["see the sensitivity report"]))
    name = variant_name(candidate["label"], tool)
    recipe = f"{RECIPES}/{name}.yaml"
    copy_recipe(root / params.search.out_dir / rel, root / recipe)
    fam = TOOLS[tool]
    scheme = fam["scheme"](root / recipe, candidate)
    reference = params.compare.engine_baselines.get(fam["engine"]) or params.baseline
    return {"backend": fam["backend"], "scheme": scheme, "recipe": recipe,
            "calibration": params.search.calibration, "reference": reference}


def copy_recipe(src: Path, dest: Path) -> None:
    """`src` to `dest`, unless `dest` already holds it; another recipe there is an error (a
    variant's recipe is never replaced behind its evaluation)."""
    text = src.read_text(encoding="utf-8")
    if dest.is_file():
        if dest.read_text(encoding="utf-8") != text:
            raise SearchError(f"{dest} holds another recipe than the sensitivity stage proposes now "
                              f"({src}): the variant was judged with the one it holds — fix: rename or "
                              "remove that variant and its recipe, then search again")
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(dest)


def add_variants(path: Path, specs: dict[str, dict[str, Any]]) -> list[str]:
    """The variants added to params.yaml (comments and order kept; a variant already there with
    the same entry is left alone, one with another entry is an error). Returns those added."""
    ry = _round_trip()
    data = ry.load(path.read_text(encoding="utf-8"))
    variants = data["variants"]
    added = []
    for name, spec in specs.items():
        if name in variants:
            if {k: variants[name].get(k) for k in spec} != spec:
                raise SearchError(f"{path}: variant {name} exists with another entry — fix: remove it "
                                  "or rename it, then search again")
            continue
        variants[name] = spec
        variants.yaml_add_eol_comment(MARK, name)  # on the key's own line: it leaves with the entry
        added.append(name)
    if added:
        _dump(ry, data, path)
    return added


def remove_variants(path: Path, names: list[str]) -> list[str]:
    """`names` taken out of params.yaml again (comments and order of the rest kept); returns those
    removed. Only what the search added is ever removed: a variant without its mark stays."""
    ry = _round_trip()
    data = ry.load(path.read_text(encoding="utf-8"))
    variants = data["variants"]
    removed = [n for n in names if n in variants and MARK in _eol_comment(variants, n)]
    for n in removed:
        del variants[n]
    if removed:
        _dump(ry, data, path)
    return removed


def _round_trip() -> YAML:
    """ruamel's round trip in params.yaml's own layout (block lists indented under their key)."""
    ry = YAML()
    ry.preserve_quotes = True
    ry.width = 120
    ry.indent(mapping=2, sequence=4, offset=2)
    ry.representer.add_representer(type(None), lambda rep, _: rep.represent_scalar("tag:yaml.org,2002:null", "null"))
    return ry


def _eol_comment(mapping: Any, key: str) -> str:
    tokens = mapping.ca.items.get(key) or []
    return " ".join(t.value for t in tokens if t is not None and hasattr(t, "value"))


def _dump(ry: YAML, data: Any, path: Path) -> None:
    buf = io.StringIO()
    ry.dump(data, buf)
    tmp = path.with_name(f".{path.name}.search-tmp")
    tmp.write_text(buf.getvalue(), encoding="utf-8")
    tmp.replace(path)


def spearman(xs: list[float], ys: list[float]) -> float | None:
    """Spearman's rank correlation (scipy's); None under three points or when one side is flat."""
    if len(xs) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    from scipy.stats import spearmanr

    return round(float(spearmanr(xs, ys).statistic), 3)


def outcome(name: str, candidate: dict[str, Any], v: dict[str, Any]) -> dict[str, Any]:
    """One tried proposal, as the report shows it, from its entry in the scratch comparison."""
    gate = v.get("gate") or {}
    div = ((v.get("divergence") or {}).get("overall") or {})
    acc = v.get("accuracy") or {}
    why = [f"{c['criterion']}: {c['verdict']}" + (f" (about {c['items_needed']} items needed)"
                                                   if c.get("items_needed") else "")
           for c in [*gate.get("failed", []), *gate.get("inconclusive", [])]]
    return {"variant": name, "label": candidate["label"], "budget_bits": candidate["budget_bits"],
            "bits_per_weight": candidate["bits_per_weight"], "predicted_kl": candidate["predicted_kl"],
            "served": bool(v.get("served")), "size_bytes": v.get("size_bytes"),
            "measured_kl": div.get("kld_mean"), "accuracy_delta": acc.get("delta"),
            "accuracy_ci": [acc.get("ci_low"), acc.get("ci_high")],
            "verdict": gate.get("verdict") or ("not served" if not v.get("served") else None),
            "why_not": why if gate.get("verdict") != "pass" else [],
            "reason": v.get("reason")}


def failed(name: str, candidate: dict[str, Any], error: str) -> dict[str, Any]:
    """A proposal that could not be built or served (its stage's error, with the log it names)."""
    return {**outcome(name, candidate, {}), "verdict": "failed",
            "why_not": [error.split(" — not run because of it")[0]]}


def withdraw(params_path: Path, root: Path, name: str, recipe: str) -> None:
    """A failed proposal taken out of params.yaml again, with what it left behind (its recipe
    copy, its artifact, results and run record): the next `qpipe repro` runs without it, and no
    stage hashes its leftovers."""
    from pipeline.config import load_params
    from pipeline.orchestrate.strays import remove_path, stray_outputs

    remove_variants(params_path, [name])
    params = load_params(params_path)
    for path in stray_outputs(params, root):
        if name in (path.name, path.stem):
            remove_path(path)
    (root / recipe).unlink(missing_ok=True)


def uniform_passing(comparison: dict[str, Any], names: list[str]) -> dict[str, Any] | None:
    """The smallest of `names` (the backend's uniform variants) that passed `comparison`'s gate;
    None when none did."""
    passed = [(v.get("size_bytes") or 0, n) for n in names
              if (v := comparison.get("variants", {}).get(n, {})).get("served") and (v.get("gate") or {}).get("passed")]
    return {"variant": min(passed)[1], "size_bytes": min(passed)[0]} if passed else None


def outcome_of_uniform(v: dict[str, Any]) -> dict[str, Any]:
    gate = v.get("gate") or {}
    return {"size_bytes": v.get("size_bytes"), "verdict": gate.get("verdict"),
            "measured_kl": ((v.get("divergence") or {}).get("overall") or {}).get("kld_mean"),
            "accuracy_delta": (v.get("accuracy") or {}).get("delta")}


def summarize(tool: str, tried: list[dict[str, Any]], untried: list[dict[str, Any]],
              uniform: dict[str, Any] | None, profile: str) -> dict[str, Any]:
    chosen = next((t for t in tried if t["verdict"] == "pass"), None)
    ranked = [t for t in tried if t["measured_kl"] is not None]
    out = {"tool": tool, "gate_profile": profile, "tried": tried,
           "not_tried": [{"label": c["label"], "bits_per_weight": c["bits_per_weight"],
                          "why": "a cheaper proposal passed first"} for c in untried],
           "certified": chosen and chosen["variant"], "smallest_uniform_passing": uniform,
           "proxy_rank_correlation": {
               "measured_kl": spearman([t["predicted_kl"] for t in ranked], [t["measured_kl"] for t in ranked]),
               "accuracy_drop": spearman([t["predicted_kl"] for t in ranked if t["accuracy_delta"] is not None],
                                         [-t["accuracy_delta"] for t in ranked if t["accuracy_delta"] is not None]),
               "points": len(ranked)}}
    if chosen and uniform:
        out["smaller_than_uniform"] = (chosen["size_bytes"] or 0) < uniform["size_bytes"]
    return out


def render(s: dict[str, Any]) -> str:
    mb = lambda b: f"{b / 1e6:.2f} MB" if b else "—"  # noqa: E731
    lines = [f"# Mixed-precision search ({s['tool']}, gate profile {s['gate_profile']})", ""]
    if s["certified"]:
        lines.append(f"**Certified:** `{s['certified']}` — the cheapest proposal whose gate passed.")
    else:
        lines.append("**No proposal passed the gate**; the reasons are below.")
    u = s["smallest_uniform_passing"]
    lines.append("**Smallest uniform variant that passed** (judged beside them): "
                 + (f"`{u['variant']}`, {mb(u['size_bytes'])}" if u else "none") + ".")
    if "smaller_than_uniform" in s:
        lines.append("The certified mix is " + ("smaller" if s["smaller_than_uniform"] else "not smaller")
                     + " than it.")
    lines += ["", "| proposal | bits/weight | predicted KL | size | measured KL | Δ accuracy [95% CI] | verdict "
              "| why not |",
              "|---|---|---|---|---|---|---|---|"]
    for t in s["tried"]:
        ci = t["accuracy_ci"]
        acc = (f"{t['accuracy_delta']:+.4f} [{ci[0]:+.4f}, {ci[1]:+.4f}]"
               if t["accuracy_delta"] is not None and None not in ci else "—")
        kl = f"{t['measured_kl']:.2e}" if t["measured_kl"] is not None else "—"
        lines.append(f"| `{t['variant']}` | {t['bits_per_weight']} | {t['predicted_kl']:.2e} | {mb(t['size_bytes'])} "
                     f"| {kl} | {acc} | {t['verdict']} | {'; '.join(t['why_not']) or t.get('reason') or ''} |")
    for c in s["not_tried"]:
        lines.append(f"| {c['label']} | {c['bits_per_weight']} | | | | | not tried | {c['why']} |")
    for n, u in sorted((s.get("uniform") or {}).items(), key=lambda x: x[1]["size_bytes"] or 0):
        kl = f"{u['measured_kl']:.2e}" if u["measured_kl"] is not None else "—"
        acc = f"{u['accuracy_delta']:+.4f}" if u["accuracy_delta"] is not None else "—"
        lines.append(f"| `{n}` (uniform) | | | {mb(u['size_bytes'])} | {kl} | {acc} | {u['verdict']} | |")
    rc = s["proxy_rank_correlation"]
    lines += ["", f"Proxy rank correlation over the {rc['points']} proposals measured (Spearman): "
              f"predicted KL vs served token KL {rc['measured_kl']}, vs accuracy drop {rc['accuracy_drop']}"
              " (None: under three points, or one side flat).", ""]
    return "\n".join(lines)


def write_report(dest: Path, summary: dict[str, Any]) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for name, text in (("search.json", json.dumps(summary, indent=2, sort_keys=True) + "\n"),
                       ("search.md", render(summary))):
        tmp = dest / f".{name}.tmp"
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(dest / name)


def run(params_path: Path, *, tool: str = "gguf", max_candidates: int = 3, jobs: int = 1, every: bool = False,
        say: Callable[[str], None] = print) -> dict[str, Any]:
    """The search, end to end (module docstring); returns the summary written to search.json.
    `every`: try every proposal up to `max_candidates` (the front measured whole, and the proxy's
    rank correlation over all of it); the cheapest that passed is still the one certified."""
    from pipeline.compare.stage import PARAMS as COMPARE, run as compare
    from pipeline.config import load_params
    from pipeline.contracts import SensitivityReport
    from pipeline.layout import Layout
    from pipeline.orchestrate.repro import ReproError, repro

    root = params_path.resolve().parent
    params = load_params(params_path)
    say("the sensitivity stage (its proposals), brought up to date:")
    repro(root, ["sensitivity"], jobs=jobs, say=say)
    layout = Layout(root, params)
    report = SensitivityReport.load(layout.search / SENSITIVITY).dump()
    candidates = sorted(report["candidates"], key=lambda c: c["bits_per_weight"])[:max_candidates]
    if not candidates:
        raise SearchError("the sensitivity report proposes nothing under search.budgets — fix: "
                          "raise a budget above the lowest format's bits per weight")
    dest = layout.reports / CERTIFY
    backend = TOOLS[tool]["backend"]
    # the yardstick: every uniform variant of the same backend, judged in the same comparison
    # (references of an engine or a noise floor are no candidates)
    roles = {*params.compare.engine_baselines.values(), *params.compare.noise_floor.values()}
    uniform = [n for n, v in params.variants.items()
               if v.backend == backend and not n.startswith("search_") and n not in roles]
    tried: list[dict[str, Any]] = []
    judged: dict[str, Any] = {}
    candidates_left: list[dict[str, Any]] = []
    if uniform:  # (no targets would be the whole pipeline)
        say("the uniform variants of the same backend (the yardstick), brought up to date:")
        repro(root, [f"{stage}@{v}" for v in uniform for stage in ("evaluate", "divergence")], jobs=jobs, say=say)
    for i, cand in enumerate(candidates):
        name = variant_name(cand["label"], tool)
        spec = variant_spec(params, root, cand, tool)
        if add_variants(params_path, {name: spec}):
            say(f"{name}: added to {params_path.name} ({cand['bits_per_weight']} bits per weight)")
        params = load_params(params_path)
        try:
            repro(root, [f"{stage}@{name}" for stage in ("evaluate", "divergence")], jobs=jobs, say=say)
        except ReproError as err:  # not built or not served here: rejected, and the next one tried
            tried.append(failed(name, cand, str(err)))
            withdraw(params_path, root, name, spec["recipe"])
            params = load_params(params_path)
            say(f"{name}: failed — {tried[-1]['why_not'][0]}; taken out of {params_path.name} again")
            continue
        scratch = params.model_copy(update={"compare": params.compare.model_copy(
            update={"out_dir": f"{params.compare.out_dir}/{CERTIFY}"})})
        # each engine's noise-floor re-run, where it was evaluated, is judged beside them as the
        # compare stage judges it (its reference is one of the names)
        floors = [v for v in params.compare.noise_floor.values() if (layout.result(v) / METRICS).is_file()]
        judged_before = (t["variant"] for t in tried if t["verdict"] != "failed")
        names = {spec["reference"], *floors, *uniform, *judged_before, name} - {params.baseline}
        judged = compare(scratch.for_stage(COMPARE), Layout(root, scratch), variants=sorted(names))
        tried.append(outcome(name, cand, judged["variants"][name]))
        say(f"{name}: {tried[-1]['verdict']}" + (f" — {'; '.join(tried[-1]['why_not'])}"
                                                  if tried[-1]["why_not"] else ""))
        if tried[-1]["verdict"] == "pass" and not every:  # `every`: the whole front, for the proxy's ranking
            candidates_left = candidates[i + 1:]
            break
    yardstick = uniform_passing(judged, uniform)
    summary = summarize(tool, tried, candidates_left, yardstick, params.gates.profile)
    summary["uniform"] = {n: outcome_of_uniform(judged["variants"].get(n, {})) for n in uniform}
    write_report(dest, summary)
    say(f"report: {(dest / 'search.md').relative_to(root)}; `qpipe repro` records the variants tried "
        "in comparison.md, MLflow and the handoff")
    return summary
