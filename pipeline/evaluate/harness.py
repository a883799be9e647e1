"""The evaluation harness: the business evaluation set, rendered once with the base model's
tokenizer and chat template, sent to an engine with greedy decoding and fixed max tokens.

The harness version is a hash of the code that decides what a sample's record says (prompt
rendering, scoring, detectors), so `compare` can refuse to pair records made by different code.
"""

from __future__ import annotations

import functools
import hashlib
import shutil
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from pipeline.contracts import ContractError, EvalItem as ItemRecord, EvalsetCard
from pipeline.contracts.contract import describe
from pipeline.importgraph import closure
from pipeline.engines.base import Completion, Engine
from pipeline.errors import QpipeError
from pipeline.contracts.files import CARD, EVALSET_ITEMS

PACKAGE = Path(__file__).resolve().parents[1]


@functools.cache
def harness_version() -> str:
    """A hash of every file whose change can change a record: the evaluation stage and all it
    imports (prompting, scoring, detectors, engines, the lm-eval bridge), found from the imports
    themselves — the same set dvc.yaml lists as evaluate's code deps."""
    h = hashlib.sha256()
    for path in closure(["pipeline.evaluate.stage"], PACKAGE):
        h.update(path.relative_to(PACKAGE.parent).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


class EvalSetError(QpipeError, ValueError):
    pass


@dataclass(frozen=True)
class EvalItem:
    id: str
    conversation_id: str
    messages: list[dict]
    reference: str
    rubric: dict
    slices: dict[str, str]


@dataclass(frozen=True)
class EvalSet:
    items: list[EvalItem]
    sha256: str           # the card's content hash: the identity compare checks
    path: Path


def load_evalset(path: Path, *, limit: int | None = None) -> EvalSet:
    card_path, data = path / CARD, path / EVALSET_ITEMS
    if not card_path.is_file() or not data.is_file():
        raise EvalSetError(f"{path}: no evaluation set (card.json + evalset.jsonl) — fix: "
                           "`dvc repro split`")
    card = EvalsetCard.load(card_path)  # an older card (no schema id) or a foreign one: ContractError
    raw = data.read_bytes()
    # The identity recorded with every result is the hash of the bytes read here, not a claim.
    digest = hashlib.sha256(raw).hexdigest()
    if card.content_sha256 != digest:
        raise EvalSetError(f"{data}: its SHA256 {digest[:12]}… is not the {card_path.name}'s "
                           f"{card.content_sha256[:12]}… — the file changed after the split "
                           "wrote it; fix: `dvc repro split` (or `dvc checkout data`)")
    items = []
    # split on "\n" only: a record's text may hold U+2028 and the like, which str.splitlines
    # would treat as line ends
    for n, line in enumerate(raw.decode("utf-8").split("\n"), 1):
        if not line.strip():
            continue
        try:
            r = ItemRecord.model_validate_json(line)  # the card's item schema
            items.append(EvalItem(r.id, r.conversation_id, r.messages, r.reference or "",
                                  r.rubric or {}, dict(r.slices)))
        except ValueError as err:
            raise ContractError(f"{data}:{n}", f"not a {card.items} record ({describe(err)})",
                                EvalsetCard.fix()) from None
    # a limit that keeps every item is the whole set, and says so: the teacher-forced passes and
    # the gate calibration name the whole set by its digest alone
    prefix = bool(limit) and limit < len(items)
    items = items[:limit] if prefix else items
    sha = f"{digest}[:{limit}]" if prefix else digest
    return EvalSet(items, sha, path)


def render(tokenizer, items: list[EvalItem]) -> list[list[int]]:
    """Prompt token ids: the conversation up to the answer, through the base chat template.
    Special-token strings inside message text are escaped (the split does it already; an
    evaluation set made elsewhere gets the same), so customer text never becomes a turn marker."""
    from pipeline.models import escape_messages, special_strings

    specials = special_strings(tokenizer)
    return [list(tokenizer.apply_chat_template(escape_messages(i.messages, specials)[0],
                                               add_generation_prompt=True, tokenize=True,
                                               return_dict=True)["input_ids"])
            for i in items]


class MemorySampler:
    """Peak resident memory of the engine's processes (and their children), sampled."""

    def __init__(self, pids: Callable[[], list[int]], interval: float = 0.2):
        self.pids, self.interval, self.peak = pids, interval, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import psutil

        while not self._stop.is_set():
            total = 0
            for pid in self.pids():
                try:
                    proc = psutil.Process(pid)
                    total += sum(p.memory_info().rss for p in [proc, *proc.children(recursive=True)])
                except psutil.Error:
                    continue
            self.peak = max(self.peak, total)
            self._stop.wait(self.interval)

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def gpu_memory() -> dict[str, Any] | None:
    """Used GPU memory per device, where nvidia-smi exists (engines hold it outside our process)."""
    if not shutil.which("nvidia-smi"):
        return None
    out = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.used,memory.total",
                          "--format=csv,noheader,nounits"], capture_output=True, text=True)
    rows = [r.split(", ") for r in out.stdout.strip().splitlines() if r]
    return {"gpus": [{"name": n, "used_mib": int(u), "total_mib": int(t)} for n, u, t in rows]}


def run_prompts(engine: Engine, prompts: list[list[int]], *, max_tokens: int, concurrency: int,
                ignore_eos: bool = False, progress: Callable[[int, Completion], None] | None = None
                ) -> tuple[list[Completion], float]:
    """Complete every prompt (order kept); returns the completions and the wall time.
    ``progress(i, completion)`` is called for each prompt, in order, as its answer is known."""
    workers = concurrency if engine.accepts_parallel else 1
    t0 = time.perf_counter()
    if workers == 1:
        out = []
        for i, p in enumerate(prompts):
            out.append(engine.complete(p, max_tokens, ignore_eos=ignore_eos))
            if progress:
                progress(i, out[-1])
        return out, time.perf_counter() - t0
    pool = ThreadPoolExecutor(workers)
    try:
        futures = [pool.submit(engine.complete, p, max_tokens, ignore_eos=ignore_eos)
                   for p in prompts]
        out = []
        for i, f in enumerate(futures):
            out.append(f.result())  # the first failure raises (with the engine's log tail)
            if progress:
                progress(i, out[-1])
    except BaseException:
        # Ctrl-C or a failure: drop the queued requests now; the ones in flight end when the
        # caller stops the engine.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return out, time.perf_counter() - t0
