"""`qpipe-demo generate`: write the embedded demo business logs and general corpus."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from demo.generator import write_general_corpus, write_logs

log = logging.getLogger(__name__)


def generate(d, root: Path) -> dict:
    """Regenerate the committed demo data from the `demo:` section (deterministic)."""
    summary = write_logs(root / d.logs.out_dir, seed=d.seed, conversations=d.logs.conversations,
                         days=d.logs.days, end_date=str(d.logs.end_date),
                         malformed_share=d.logs.malformed_share,
                         duplicate_share=d.logs.duplicate_share)
    summary["general_documents"] = write_general_corpus(
        root / d.general_corpus.path, seed=d.seed, documents=d.general_corpus.documents)
    (root / d.logs.out_dir).with_suffix(".generated.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary
