"""Each variant's quantization on this machine, from the manifests `dvc repro` wrote: backend,
scheme, format, wall time, peak memory, size and compression ratio against the baseline.

    python benchmarks/quantize_variants.py                 # after `bash scripts/demo.sh`
    python benchmarks/quantize_variants.py --artifacts /path/to/project/artifacts --json out.json

Reads `artifacts/<variant>/manifest.json` only (each is verified first: a figure from files
that do not match their manifest is marked). The times are those of the `quantize@<variant>`
stage's own run, in whatever machine load there was: the backend's work (model load, calibration,
save) without the stage's load check — except for the backends in their own environment
(GPTQModel, AutoAWQ, ModelOpt), whose worker process also starts Python and its imports and runs
the load check itself. Peak RSS is the larger of the stage process and its child processes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def rows(artifacts: Path) -> list[dict]:
    from pipeline.artifacts.manifest import MANIFEST, verify

    out = []
    for m_path in sorted(artifacts.glob(f"*/{MANIFEST}")):
        d = m_path.parent
        problems = verify(d)
        m = json.loads(m_path.read_text())
        q = m.get("quantization", {})
        out.append({"variant": d.name, "backend": m.get("backend"), "scheme": m.get("scheme"),
                    "format": m.get("format"), "wall_s": q.get("wall_seconds"),
                    "peak_rss_mib": round(q["peak_rss_bytes"] / 2**20) if q.get("peak_rss_bytes") else None,
                    "size_mib": round(m["size_bytes"] / 2**20, 2), "verified": not problems,
                    "load_check": (m.get("load_check") or {}).get("loader")})
    base = next((r for r in out if r["backend"] == "none"), None)
    for r in out:
        r["compression"] = round(base["size_mib"] / r["size_mib"], 2) if base and r["size_mib"] else None
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--artifacts", type=Path, default=REPO / "artifacts")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    table = rows(args.artifacts)
    if not table:
        sys.exit(f"no manifests under {args.artifacts} — run `bash scripts/demo.sh` (or dvc repro) first")
    print("| variant | backend | scheme | format | quantize s | peak RSS MiB | size MiB | × smaller | "
          "verified | load check |")
    print("|---|---|---|---|---:|---:|---:|---:|---|---|")
    for r in table:
        print(f"| {r['variant']} | {r['backend']} | {r['scheme']} | {r['format']} | {r['wall_s']:.1f} | "
              f"{r['peak_rss_mib']} | {r['size_mib']} | {r['compression']} | "
              f"{'yes' if r['verified'] else 'NO'} | {r['load_check']} |")
    if args.json:
        args.json.write_text(json.dumps(table, indent=2))


if __name__ == "__main__":
    main()
