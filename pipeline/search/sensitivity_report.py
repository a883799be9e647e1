"""The sensitivity report for people: `sensitivity.md` (the most sensitive parts, the uniform
variants, the proposed mixes) and `sensitivity.png` (KL per layer and part for each format; the
front of predicted KL against bits per weight, the uniform variants beside it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

TOP = 12  # parts listed in the report, most sensitive first


def write_markdown(r: dict[str, Any], path: Path) -> None:
    lines = [f"# Sensitivity of {r['model']} on calibration set `{r['calibration']}`", "",
             f"{len(r['parts'])} parts, {r['tokens']} calibration tokens. Method: {r['method']}.", "",
             "## Uniform variants", "",
             "| format | bits / weight | KL, all parts at once | sum of the parts' own KL |", "|---|---|---|---|"]
    for u in r["uniform"]:
        lines.append(f"| {u['format']} | {u['bits_per_weight']:.3f} | {u['measured_kl']:.4g} | "
                     f"{u['predicted_kl']:.4g} |")
    lines += ["", "The sum of the parts' own KL predicts a mix's; the two columns above say how closely on "
              "this model (HAWQ-V3 and ModelOpt's AutoQuantize make the same assumption).", "",
              "## Proposed mixes", "",
              "| proposal | budget (bits / weight) | bits / weight | predicted KL | parts per format | recipes |",
              "|---|---|---|---|---|---|"]
    for c in r["candidates"]:
        mix = ", ".join(f"{f} {n}" for f, n in c["formats"].items() if n)
        made = ", ".join(f"[{tool}]({path})" for tool, path in c["recipes"].items() if path) or "—"
        lines.append(f"| {c['label']} | ≤ {c['budget_bits']} | {c['bits_per_weight']:.3f} | {c['predicted_kl']:.4g} | "
                     f"{mix} | {made} |")
    notes = sorted({n for c in r["candidates"] for n in c["notes"]})
    if notes:
        lines += [""] + [f"- {n}" for n in notes]
    lines += ["", "Each recipe is the tool's own format: the llm-compressor recipe quantizes with config groups "
              "per format (served by vLLM); the GGUF recipe is a llama.cpp preset with `--tensor-type` "
              "overrides. Either can be a variant's `recipe:` in params.yaml."]
    if r["unfit"]:
        lines += ["", f"{len(r['unfit'])} part × format pairs cannot be built and are never proposed: "
                  + "; ".join(f"{u['part']} {u['format']} ({u['why']})" for u in r["unfit"][:6])
                  + ("; …" if len(r["unfit"]) > 6 else "") + "."]
    lines += ["", f"## The {TOP} most sensitive parts", "", "| part | format | KL | weights |", "|---|---|---|---|"]
    for row in sorted(r["rows"], key=lambda x: -x["kl"])[:TOP]:
        lines.append(f"| {row['part']} | {row['format']} | {row['kl']:.4g} | {row['weights']:,} |")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def plot(r: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.2))
    parts = list(r["parts"])
    for fmt, marker in zip(sorted({x["format"] for x in r["rows"]}), "os^v"):
        kl = {x["part"]: x["kl"] for x in r["rows"] if x["format"] == fmt}
        ax.plot(range(len(parts)), [max(kl[p], 1e-12) for p in parts], marker=marker, ms=3, lw=0.8, label=fmt)
    ax.set_yscale("log")
    ax.set_xlabel("part, in the model's order")
    ax.set_ylabel("KL, this part alone quantized")
    ax.set_title("sensitivity per part")
    ax.legend(fontsize=8)
    bx.plot([c["bits_per_weight"] for c in r["candidates"]], [max(c["predicted_kl"], 1e-12) for c in r["candidates"]],
            "o-", label="proposed mixes (predicted)")
    for u in r["uniform"]:
        bx.plot([u["bits_per_weight"]], [max(u["measured_kl"], 1e-12)], "s", label=f"uniform {u['format']} (measured)")
    bx.set_yscale("log")
    bx.set_xlabel("bits per weight")
    bx.set_ylabel("KL")
    bx.set_title("size against KL")
    bx.legend(fontsize=8)
    fig.suptitle(f"{r['model']}: calibration set {r['calibration']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
