"""lm-eval's task index: our own task folders alone when they hold every task asked for (no ~11 s
scan of the built-in task files per evaluation), the full index when a built-in task is asked."""

import yaml

from pipeline.evaluate.lmeval import task_manager


def test_own_tasks_skip_the_builtin_index_and_builtin_ones_get_it(tmp_path):
    from lm_eval.tasks import TaskManager

    (tmp_path / "mine.jsonl").write_text('{"prompt": "a", "target": "b"}\n')
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump({
        "task": "mine", "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(tmp_path / "mine.jsonl")}},
        "test_split": "test", "output_type": "generate_until", "doc_to_text": "{{prompt}}",
        "doc_to_target": "{{target}}", "metric_list": [{"metric": "exact_match"}]}))
    own = task_manager(TaskManager, [str(tmp_path)], ["mine"])
    assert set(own.all_tasks) == {"mine"}
    full = task_manager(TaskManager, [str(tmp_path)], ["mine", "arc_easy"])
    assert {"mine", "arc_easy"} <= set(full.all_tasks) and len(full.all_tasks) > 1000
