"""lm-evaluation-harness against the served engine (its `local-completions` client on the
engine's OpenAI endpoint; in process for the transformers reference).

Public tasks work where their datasets are available offline; `business_exact` is built here
from the business evaluation set: the samples scored by exact match, prompts rendered with the
base model's chat template, run as an lm-eval `generate_until` task. Your own task YAMLs go in
`evaluate.lm_eval.include_path`.

When `business_exact` is the only task, lm-eval's requests go through the evaluation's own engine
client and record cache (`served_model`): its prompts are the evaluation's own items, so an answer
the evaluation was already given is not generated a second time — lm-eval's rendering, stop strings,
filters and metric still make its score. A prompt lm-eval renders to other token ids than the
harness is served anew. Under a sequential design the task holds the items the evaluation served.
"""

from __future__ import annotations

import json
import logging
import tempfile
from pathlib import Path
from typing import Any

import yaml

from pipeline.engines.base import Engine
from pipeline.evaluate.harness import EvalSet, run_prompts

log = logging.getLogger(__name__)
BUILTIN = "business_exact"


def builtin_task(evalset: EvalSet, tokenizer, folder: Path, *, max_tokens: int,
                 only: set[str] | None = None) -> None:
    """Write the `business_exact` task (YAML + its JSONL data) into `folder`; `only`: the item ids
    to keep (a sequential evaluation's served items)."""
    rows = [{"id": i.id, "prompt": tokenizer.apply_chat_template(i.messages, tokenize=False,
                                                                 add_generation_prompt=True),
             "target": i.reference, "scenario": i.slices.get("scenario")}
            for i in evalset.items if i.rubric.get("type", "exact") == "exact"
            and (only is None or i.id in only)]
    if not rows:
        raise ValueError(f"{evalset.path}: no exact-match samples for the {BUILTIN} task")
    data = folder / f"{BUILTIN}.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    stop = [t for t in (tokenizer.eos_token,) if t]
    task = {"task": BUILTIN, "dataset_path": "json",
            "dataset_kwargs": {"data_files": {"test": str(data)}}, "test_split": "test",
            "output_type": "generate_until", "doc_to_text": "{{prompt}}",
            "doc_to_target": "{{target}}",
            "generation_kwargs": {"until": stop, "max_gen_toks": max_tokens, "do_sample": False,
                                  "temperature": 0.0},
            "filter_list": [{"name": "strip", "filter": [{"function": "remove_whitespace"},
                                                          {"function": "take_first"}]}],
            "metric_list": [{"metric": "exact_match", "aggregation": "mean",
                             "higher_is_better": True, "ignore_case": True,
                             "ignore_punctuation": True}],
            "metadata": {"version": 1}}
    (folder / f"{BUILTIN}.yaml").write_text(yaml.safe_dump(task, sort_keys=False))


def task_manager(cls, include: list[str], tasks: list[str]):
    """lm-eval's task index over our folders only when they hold every task asked for: indexing
    its ~14,700 built-in task files takes ~11 s per evaluation on 2 cores, for nothing when the
    tasks are `business_exact` and the user's own. A built-in task asked for gets the full index."""
    own = cls(include_path=include, include_defaults=False)
    if all(t in own.all_tasks for t in tasks):
        return own
    return cls(include_path=include)


def cut(text: str, until: list[str] | str | None) -> str:
    """The answer up to the first stop string (lm-eval's `until`), as a server stopping there gives."""
    stops = [until] if isinstance(until, str) else list(until or [])
    ends = [text.find(s) for s in stops if s and s in text]
    return text[:min(ends)] if ends else text


def served_model(server, tokenizer, *, max_tokens: int, concurrency: int):
    """An lm-eval model whose `generate_until` asks `server` (the evaluation's engine, through its
    record cache) for greedy answers to the prompts' token ids; nothing else is offered."""
    from lm_eval.api.model import LM

    class Served(LM):
        def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
            kwargs = [r.args[1] for r in requests]
            ids = [list(tokenizer(r.args[0], add_special_tokens=False)["input_ids"]) for r in requests]
            out: list[str] = [""] * len(requests)
            by_length: dict[int, list[int]] = {}
            for i, kw in enumerate(kwargs):
                by_length.setdefault(int(kw.get("max_gen_toks", max_tokens)), []).append(i)
            for n, at in by_length.items():
                got, _ = run_prompts(server, [ids[i] for i in at], max_tokens=n, concurrency=concurrency)
                for i, c in zip(at, got, strict=True):
                    out[i] = cut(c.text, kwargs[i].get("until"))
            return out

        def loglikelihood(self, requests, disable_tqdm: bool = False):
            raise NotImplementedError("business_exact generates; log-likelihood tasks use the engine's endpoint")

        loglikelihood_rolling = loglikelihood

    return Served()


def run(engine: Engine, cfg, evalset: EvalSet, tokenizer, tokenizer_dir: Path, root: Path,
        *, max_tokens: int, concurrency: int, server=None, only: set[str] | None = None) -> dict[str, Any]:
    """Run the configured lm-eval tasks against the started engine; {task: {metric: value}}.
    `server`: the evaluation's engine client (with its record cache), which answers `business_exact`
    when that is the only task; `only`: the items the evaluation served."""
    import lm_eval
    from lm_eval.tasks import TaskManager

    with tempfile.TemporaryDirectory(prefix="qpipe-lmeval-") as tmp:
        folder = Path(tmp)
        if BUILTIN in cfg.tasks:
            builtin_task(evalset, tokenizer, folder, max_tokens=max_tokens, only=only)
        include = [str(folder)] + ([str(root / cfg.include_path)] if cfg.include_path else [])
        if server is not None and list(cfg.tasks) == [BUILTIN]:
            model, args = served_model(server, tokenizer, max_tokens=max_tokens, concurrency=concurrency), None
        else:
            model, args = engine.lm_eval_model(tokenizer_dir, concurrency)
        out = lm_eval.simple_evaluate(model=model, model_args=args, tasks=list(cfg.tasks),
                                      task_manager=task_manager(TaskManager, include, cfg.tasks),
                                      limit=cfg.limit, log_samples=False,
                                      random_seed=0, numpy_random_seed=0, torch_random_seed=0)
    results = {task: {k: v for k, v in metrics.items() if isinstance(v, (int, float))}
               for task, metrics in out["results"].items()}
    return {"version": lm_eval.__version__,
            "model": model if isinstance(model, str) else "the evaluation's engine client (record cache)",
            "tasks": results,
            "n_samples": {t: v.get("effective", v.get("original"))
                          for t, v in (out.get("n-samples") or {}).items()}}
