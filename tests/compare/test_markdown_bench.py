from pipeline.compare.markdown import _bench_node


def test_the_report_names_the_node_speed_was_measured_on():
    node = {"node": "gpu-07", "cpu": "AMD EPYC 9654", "cpus": 64, "gpus": ["NVIDIA H200", "NVIDIA H200"]}
    [_, line] = _bench_node({"bench": {"v": {"output_tps_ratio": 1.2}}, "bench_node": node})
    assert "`gpu-07` (AMD EPYC 9654, 64 CPUs, GPUs: NVIDIA H200, NVIDIA H200)" in line
    [_, line] = _bench_node({"bench": {"v": {}}, "bench_node": {"node": "n1", "machine": "x86_64", "cpus": 2}})
    assert "`n1` (x86_64, 2 CPUs, no GPU)" in line
    assert _bench_node({"bench": None, "bench_node": node}) == []  # no speed figures: nothing to name
