"""The load generator shared by `bench` and the serving upgrades: the business's traffic drawn from
the evaluation set (traffic.py), and GuideLLM run in its own environment (guidellm_runs.py runs
guidellm_driver.py there as a script)."""
