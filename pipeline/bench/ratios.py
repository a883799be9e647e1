"""Speed ratios against the baseline from the bench's measurements: each variant measurement
over the mean of the baseline measurements just before and after it (the schedule brackets
every variant), the median over rounds, and paired tests of per-request latency."""

from __future__ import annotations

import statistics

import numpy as np

from pipeline.stats.paired import hodges_lehmann_interval, latency_test, paired_latency  # noqa: F401


def neighbours(measurements: list[dict], j: int, baseline: str) -> list[dict]:
    """The baseline measurements just before and just after measurement j."""
    before = next((m for m in reversed(measurements[:j]) if m["variant"] == baseline), None)
    after = next((m for m in measurements[j + 1:] if m["variant"] == baseline), None)
    return [m for m in (before, after) if m is not None]


def ratios(measurements: list[dict], baseline: str, sizes: dict[str, int],
           bandwidth: float) -> dict[str, dict]:
    """Per variant: each of its measurements over its bracketing baselines' mean, then the
    median over rounds — output and total tok/s, single-stream TTFT/TPOT p50, peak memory —
    a Mann-Whitney U test of single-stream end-to-end latency against those baselines, and a
    paired test (Wilcoxon signed-rank on per-request log ratios, request i against request i
    of the bracketing baseline runs, no baseline run counted twice for one variant)."""
    def tps(m, key):
        return m["offline"][key]

    def stream1(m, key):
        level = m["streaming"].get("1") or {}
        if key in ("ttft_p50", "tpot_p50") and (level.get("burst_share") or 0) > 0.5:
            return None  # tokens arrived in one burst: no per-token timing to compare
        return level.get(key)

    out: dict[str, dict] = {}
    per: dict[str, dict[str, list]] = {}
    used: dict[str, set[int]] = {}
    for j, m in enumerate(measurements):
        name = m["variant"]
        if name == baseline:
            continue
        bases = neighbours(measurements, j, baseline)
        # The paired latency test: request i of this run against request i of its bracketing
        # baseline runs (same prompt, same position), each baseline run used once per variant.
        fresh = [b for b in bases if id(b) not in used.setdefault(name, set())]
        used[name].update(id(b) for b in fresh)
        per.setdefault(name, {}).setdefault("log_ratios", []).extend(
            log_ratios(stream1(m, "e2e") or [], [stream1(b, "e2e") or [] for b in fresh]))
        mean = lambda f, bases=bases: statistics.fmean(f(b) for b in bases)  # noqa: E731
        acc = per[name]
        for k in ("output", "total", "ttft", "tpot", "rss", "e2e", "e2e_base", "tpot1"):
            acc.setdefault(k, [])
        acc["output"].append(tps(m, "median_output_tokens_per_second")
                             / mean(lambda b: tps(b, "median_output_tokens_per_second")))
        acc["total"].append(tps(m, "median_total_tokens_per_second")
                            / mean(lambda b: tps(b, "median_total_tokens_per_second")))
        if stream1(m, "ttft_p50") and all(stream1(b, "ttft_p50") for b in bases):
            acc["ttft"].append(stream1(m, "ttft_p50") / mean(lambda b: stream1(b, "ttft_p50")))
        if stream1(m, "tpot_p50") and all(stream1(b, "tpot_p50") for b in bases):
            acc["tpot"].append(stream1(m, "tpot_p50") / mean(lambda b: stream1(b, "tpot_p50")))
        elif stream1(m, "tpot_p50") is None or not all(stream1(b, "tpot_p50") for b in bases):
            acc["burst"] = acc.get("burst", 0) + 1
        if stream1(m, "tpot_p50"):
            acc["tpot1"].append(stream1(m, "tpot_p50"))
        if m.get("peak_rss_bytes") and all(b.get("peak_rss_bytes") for b in bases):
            acc["rss"].append(m["peak_rss_bytes"] / mean(lambda b: b["peak_rss_bytes"]))
        acc["e2e"] += stream1(m, "e2e") or []
        for b in bases:
            acc["e2e_base"] += stream1(b, "e2e") or []
    rnd = lambda xs: round(statistics.median(xs), 4) if xs else None  # noqa: E731
    for name, acc in per.items():
        roof = None
        if acc["tpot1"] and sizes.get(name):
            roof = round(sizes[name] / statistics.median(acc["tpot1"]) / (bandwidth * 1e9), 4)
        out[name] = {"output_tps_ratio": rnd(acc["output"]),
                     "output_tps_ratio_per_round": [round(x, 4) for x in acc["output"]],
                     "total_tps_ratio": rnd(acc["total"]),
                     "ttft_p50_ratio": rnd(acc["ttft"]), "tpot_p50_ratio": rnd(acc["tpot"]),
                     "peak_rss_ratio": rnd(acc["rss"]),
                     "ttft_tpot_pairs_left_out": acc.get("burst", 0),  # a side came in one burst
                     "latency_vs_baseline": latency_test(acc["e2e_base"], acc["e2e"]),
                     "latency_paired": paired_latency(acc["log_ratios"]),
                     # per request, in schedule order: compare pairs them with another
                     # variant's (its engine's own reference) request by request
                     "log_latency_ratios": [round(x, 6) for x in acc["log_ratios"]],
                     "roofline_fraction": roof}
    base_tpot = [stream1(m, "tpot_p50") for m in measurements
                 if m["variant"] == baseline and stream1(m, "tpot_p50")]
    out[baseline] = {"output_tps_ratio": 1.0, "output_tps_ratio_per_round": [],
                     "total_tps_ratio": 1.0, "ttft_p50_ratio": 1.0, "tpot_p50_ratio": 1.0,
                     "peak_rss_ratio": 1.0, "latency_vs_baseline": None,
                     "roofline_fraction": round(sizes[baseline] / statistics.median(base_tpot)
                                                / (bandwidth * 1e9), 4)
                     if base_tpot and sizes.get(baseline) else None}
    return out


def log_ratios(variant: list[float], bases: list[list[float]]) -> list[float]:
    """Per request: log(variant latency) − mean over the baseline runs of log(their latency for
    the same request)."""
    bases = [b for b in bases if len(b) == len(variant)]
    if not bases or not variant:
        return []
    return [float(np.log(v) - np.mean([np.log(b[i]) for b in bases]))
            for i, v in enumerate(variant) if v > 0 and all(b[i] > 0 for b in bases)]
