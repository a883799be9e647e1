"""The comparison's plots (PNG, matplotlib's Agg backend): accuracy against speed with size as
the marker area and the Pareto front marked, and a variants × slices heatmap of accuracy deltas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def pareto(points: dict[str, tuple[float, float, float]]) -> list[str]:
    """Names not dominated on (accuracy ↑, speed ↑, size ↓).

    >>> pareto({"a": (0.8, 1.0, 10), "b": (0.7, 0.9, 12), "c": (0.75, 2.0, 5)})
    ['a', 'c']
    """
    def dominates(p, q) -> bool:
        ge = p[0] >= q[0] and p[1] >= q[1] and p[2] <= q[2]
        return ge and (p[0] > q[0] or p[1] > q[1] or p[2] < q[2])

    return sorted(n for n, p in points.items()
                  if not any(dominates(q, p) for m, q in points.items() if m != n))


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def empty(out: Path, message: str) -> None:
    """A plot that says why it has nothing to show."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 1.5), dpi=120)
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=9)
    fig.savefig(out)
    plt.close(fig)


def tradeoff(points: dict[str, tuple[float, float, float]], front: list[str], out: Path,
             speed_label: str) -> None:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=120)
    biggest = max(p[2] for p in points.values())
    for name, (acc, speed, size) in points.items():
        on = name in front
        ax.scatter(speed, 100 * acc, s=60 + 900 * size / biggest, alpha=0.6,
                   color="tab:green" if on else "tab:gray", edgecolor="black" if on else "none")
        ax.annotate(name, (speed, 100 * acc), fontsize=7, xytext=(4, 4), textcoords="offset points")
    ordered = sorted((points[n][1], 100 * points[n][0]) for n in front)
    if len(ordered) > 1:
        ax.plot(*zip(*ordered), color="tab:green", lw=1, ls="--", label="Pareto front")
        ax.legend(loc="lower left", fontsize=8)
    ax.set_xlabel(speed_label)
    ax.set_ylabel("business accuracy (%)")
    ax.set_title("accuracy vs speed (marker area: size on disk; green: Pareto-optimal)")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def heatmap(comparison: dict[str, Any], out: Path) -> None:
    plt = _plt()
    served = {n: v for n, v in comparison["variants"].items() if v.get("served")}
    slices = sorted({s for v in served.values() for s in v["slices"]})
    if not served or not slices:
        empty(out, "no served variant to compare per slice")
        return

    grid = np.array([[100 * served[n]["slices"][s]["delta"] for s in slices] for n in served])
    fig, ax = plt.subplots(figsize=(1 + 0.55 * len(slices), 1.2 + 0.45 * len(served)), dpi=120)
    lim = max(1.0, float(np.abs(grid).max()))
    im = ax.imshow(grid, cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
    ax.set_xticks(range(len(slices)), slices, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(served)), list(served), fontsize=7)
    for i, n in enumerate(served):
        for j, s in enumerate(slices):
            mark = "*" if served[n]["slices"][s].get("significant_drop") else ""
            ax.text(j, i, f"{grid[i, j]:+.1f}{mark}", ha="center", va="center", fontsize=6)
    fig.colorbar(im, ax=ax, label="Δ accuracy (pts; * significant drop, Benjamini–Hochberg)")
    ax.set_title("per-slice accuracy change")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def gate_limits(comparison: dict[str, Any], out: Path) -> None:
    """The gate calibration's curve — accuracy drop against mean token KL at each perturbation
    step — with the derived limit's interval shaded and every measured variant placed at its KL
    and accuracy change (its own reference's). Without a calibration, a plot that says why."""
    lim = comparison.get("gate_limits") or {}
    if not lim.get("calibrated"):
        empty(out, f"no gate calibration: {lim.get('why', '')[:110]}")
        return
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    kl = lim["signals"]["kld"]
    xs = [0.0] + [p["signal"] for p in kl["curve"]]
    ds = [0.0] + [100 * p["drop"] for p in kl["curve"]]
    ax.plot(xs, ds, "o-", color="0.4", label="perturbation ladder (noise × std)")
    ax.axhline(100 * lim["margin"], color="tab:red", ls="--", lw=1, label="profile margin")
    lo, hi = kl["limit_ci"]
    if lo is not None:
        ax.axvspan(lo, hi if hi is not None else max(xs), color="tab:red", alpha=0.12,
                   label=f"KL limit 95% CI ({kl['status']})")
    for name, v in comparison["variants"].items():
        d = (v.get("divergence") or {}).get("overall") or {}
        if v.get("served") and d.get("kld_item_mean") is not None and v.get("accuracy"):
            ax.plot(d["kld_item_mean"], -100 * v["accuracy"]["delta"], "s", ms=6)
            ax.annotate(name, (d["kld_item_mean"], -100 * v["accuracy"]["delta"]), fontsize=7,
                        xytext=(4, 3), textcoords="offset points")
    ax.set_xscale("symlog", linthresh=max(min(x for x in xs if x > 0) / 10, 1e-9) if any(xs) else 1e-6)
    ax.set_xlabel("mean token KL from the reference (nats, item mean)")
    ax.set_ylabel("accuracy drop (points)")
    ax.set_title("This model's signal vs business accuracy (gate calibration)", fontsize=9)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
