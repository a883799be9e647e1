"""lm-evaluation-harness against the served engine (its `local-completions` client on the
engine's OpenAI endpoint; in process for the transformers reference).

Public tasks work where their datasets are available offline; `business_exact` is built here
from the business evaluation set: the samples scored by exact match, prompts rendered with the
base model's chat template, run as an lm-eval `generate_until` task. Your own task YAMLs go in
`evaluate.lm_eval.include_path`.
"""

from __future__ import annotations

import json
import logging
import tempfile
from pathlib import Path
from typing import Any

import yaml

from pipeline.engines.base import Engine
from pipeline.evaluate.harness import EvalSet

log = logging.getLogger(__name__)
BUILTIN = "business_exact"


def builtin_task(evalset: EvalSet, tokenizer, folder: Path, *, max_tokens: int) -> None:
    """Write the `business_exact` task (YAML + its JSONL data) into `folder`."""
    rows = [{"id": i.id, "prompt": tokenizer.apply_chat_template(i.messages, tokenize=False,
                                                                 add_generation_prompt=True),
             "target": i.reference, "scenario": i.slices.get("scenario")}
            for i in evalset.items if i.rubric.get("type", "exact") == "exact"]
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


def run(engine: Engine, cfg, evalset: EvalSet, tokenizer, tokenizer_dir: Path, root: Path,
        *, max_tokens: int, concurrency: int) -> dict[str, Any]:
    """Run the configured lm-eval tasks against the started engine; {task: {metric: value}}."""
    import lm_eval
    from lm_eval.tasks import TaskManager

    with tempfile.TemporaryDirectory(prefix="qpipe-lmeval-") as tmp:
        folder = Path(tmp)
        if BUILTIN in cfg.tasks:
            builtin_task(evalset, tokenizer, folder, max_tokens=max_tokens)
        include = [str(folder)] + ([str(root / cfg.include_path)] if cfg.include_path else [])
        model, args = engine.lm_eval_model(tokenizer_dir, concurrency)
        out = lm_eval.simple_evaluate(model=model, model_args=args, tasks=list(cfg.tasks),
                                      task_manager=task_manager(TaskManager, include, cfg.tasks),
                                      limit=cfg.limit, log_samples=False,
                                      random_seed=0, numpy_random_seed=0, torch_random_seed=0)
    results = {task: {k: v for k, v in metrics.items() if isinstance(v, (int, float))}
               for task, metrics in out["results"].items()}
    return {"version": lm_eval.__version__, "model": model, "tasks": results,
            "n_samples": {t: v.get("effective", v.get("original"))
                          for t, v in (out.get("n-samples") or {}).items()}}
