"""Point 4 — secrets never written: planted in every place a user might put one (a tracking URI
with a password or a token in its query, an engine's env, a secret flag in extra_args, a bearer
header in a log line), then every output that leaves the machine is searched for them."""

import json
import os
from pathlib import Path

import pytest
import yaml

from pipeline import secrets
from pipeline.engines.base import get_engine
from pipeline.tracking.store import redact

PLANTED = {"uri_password": "hunter2-Pw%21", "query_token": "qtok-7c1f9a", "env_token": "hf_envSecret42",
           "flag_key": "sk-flagSecret99", "flag_eq": "tok-eqSecret77", "bearer": "bearerSecret123456"}


def planted_params(repo: Path) -> dict:
    data = yaml.safe_load((repo / "params.yaml").read_text())
    data["tracking"]["tracking_uri"] = (f"https://bob:{PLANTED['uri_password']}@mlflow.example:5000"
                                        f"/?x=1&access_token={PLANTED['query_token']}")
    data["engines"]["vllm"]["env"] = {"HF_TOKEN": PLANTED["env_token"], "ODD_NAME": PLANTED["env_token"]}
    data["engines"]["vllm"]["extra_args"] = ["--api-key", PLANTED["flag_key"],
                                             f"--hf-token={PLANTED['flag_eq']}"]
    return data


def leaked(text: str) -> list[str]:
    return [k for k, v in PLANTED.items() if v in text]


def test_masking_covers_every_planted_form():
    text = (f"postgresql://u:{PLANTED['uri_password']}@db/x?sslmode=require "
            f"https://h/?token={PLANTED['query_token']} --api-key {PLANTED['flag_key']} "
            f"--hf-token={PLANTED['flag_eq']} Authorization: Bearer {PLANTED['bearer']}")
    assert leaked(secrets.mask_text(text)) == []
    assert leaked(redact(text)) == []
    tree = secrets.mask_tree({"engines": {"vllm": {"env": {"ANYTHING": PLANTED["env_token"]},
                                                   "extra_args": ["--api-key", PLANTED["flag_key"]]}},
                              "nested": [{"db_password": PLANTED["uri_password"]}],
                              "max_tokens": 128, "tokenizer": "models/demo"})
    assert leaked(json.dumps(tree)) == []
    # what is not a secret stays as it was
    assert tree["max_tokens"] == 128 and tree["tokenizer"] == "models/demo"


def test_params_uploaded_to_mlflow_carry_no_secret(repo, tmp_path):
    from mlflow import MlflowClient

    from pipeline.tracking.log import upload

    (tmp_path / "params.yaml").write_text(yaml.safe_dump(planted_params(repo)))
    log = tmp_path / "engine.log"
    log.write_text(f"$ python -m vllm --api-key {PLANTED['flag_key']}\n"
                   f"non-default args: {{'api_key': ['{PLANTED['flag_key']}']}}\n"
                   f"Authorization: Bearer {PLANTED['bearer']}\n")
    run_json = tmp_path / "run.json"
    run_json.write_text(json.dumps({"engine": {"details": {"settings": {
        "env": {"HF_TOKEN": PLANTED["env_token"]}, "extra_args": ["--api-key", PLANTED["flag_key"]]}}}}))
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp = client.create_experiment("x", artifact_location=(tmp_path / "mlruns").as_uri())
    run = client.create_run(exp)
    for f in (tmp_path / "params.yaml", log, run_json):
        upload(client, run.info.run_id, f, "files")
    stored = list((tmp_path / "mlruns").rglob("*"))
    texts = [p.read_text(errors="replace") for p in stored if p.is_file()]
    assert len(texts) == 3 and [k for t in texts for k in leaked(t)] == []
    uploaded = yaml.safe_load(next(t for t in texts if "tracking_uri" in t))
    assert uploaded["tracking"]["tracking_uri"].startswith("https://bob:***@mlflow.example:5000")
    assert uploaded["evaluate"]["max_tokens"] == 128  # the rest of the params is intact


def test_the_served_command_in_a_card_and_the_engine_log_name_no_secret(repo, tmp_path):
    data = planted_params(repo)
    settings = data["engines"]["vllm"]
    eng = get_engine("vllm")(tmp_path / "model", settings, log_path=tmp_path / "engine.log")
    line = eng.portable_command(tmp_path / "model")
    assert leaked(line) == [], line
    assert 'HF_TOKEN="${HF_TOKEN}"' in line and "--api-key '***'" in line
    # the env values reach the engine through its environment, not its command line
    assert all(PLANTED["env_token"] not in a for a in eng.command())


def test_an_external_endpoint_reads_its_key_from_a_named_variable(tmp_path, monkeypatch):
    import http.server
    import threading

    seen = []

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            seen.append(self.headers.get("Authorization"))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"data": []}')

        def log_message(self, *a):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        cls = get_engine("openai")
        # a URL with credentials in it is masked wherever it is written
        url = f"http://user:{PLANTED['uri_password']}@127.0.0.1:{srv.server_port}/v1"
        eng = cls(tmp_path, {}, log_path=tmp_path / "u.log", url=url)
        eng.start()
        assert leaked((tmp_path / "u.log").read_text() + json.dumps(eng.info().details)) == []
        eng.stop()
        url = f"http://127.0.0.1:{srv.server_port}/v1"
        eng = cls(tmp_path, {"api_key_env": "QPIPE_TEST_ENDPOINT_KEY"}, log_path=tmp_path / "e.log", url=url)
        with pytest.raises(Exception, match="QPIPE_TEST_ENDPOINT_KEY"):
            eng.start()  # not set: a clear error, not an anonymous request
        monkeypatch.setenv("QPIPE_TEST_ENDPOINT_KEY", PLANTED["bearer"])
        eng.start()
        assert seen[-1] == f"Bearer {PLANTED['bearer']}"
        assert leaked((tmp_path / "e.log").read_text()) == []
        assert leaked(json.dumps(eng.info().details)) == []
        eng.stop()
    finally:
        srv.shutdown()
    assert os.environ.get("QPIPE_TEST_ENDPOINT_KEY") == PLANTED["bearer"]


def test_the_command_lines_log_masks_a_bearer_key_a_library_prints(capsys):
    """lm-eval logs its model arguments, the engine's per-run key among them: the command line's
    handler writes the record with the key masked, whether it came formatted or as an argument."""
    import logging

    from rich.console import Console

    from pipeline.logs import MaskSecrets

    key = "J1LIBg-PNuApq0CA01-LDi1itNphBXK2LhgnHzst23c"
    console = Console(file=None, stderr=True, force_terminal=False, width=200)
    from rich.logging import RichHandler

    handler = RichHandler(console=console, show_path=False)
    handler.addFilter(MaskSecrets())
    logger = logging.getLogger("lm_eval.test-masking")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("model_args: {'header': {'Authorization': 'Bearer %s'}}" % key)
        logger.warning("args %s", {"header": {"Authorization": f"Bearer {key}"}})
    finally:
        logger.removeHandler(handler)
    err = capsys.readouterr().err
    assert key not in err and err.count("Bearer ***") == 2


def test_a_bundles_serve_command_does_not_depend_on_the_callers_environment(tmp_path, monkeypatch):
    """The same engine and settings give the same serve line whatever the environment of whoever
    builds the bundle (a variable the engine defaults, set or not by the caller, changed it)."""
    settings = {"cpu_kvcache_gb": 1, "env": {"HF_TOKEN": "x"}}
    eng = get_engine("vllm")(tmp_path / "model", settings, log_path=tmp_path / "engine.log")
    for k in ("DO_NOT_TRACK", "VLLM_NO_USAGE_STATS", "HF_HUB_OFFLINE", "OMP_NUM_THREADS"):
        monkeypatch.delenv(k, raising=False)
    bare = eng.portable_command(tmp_path / "model")
    for k, v in (("DO_NOT_TRACK", "true"), ("VLLM_NO_USAGE_STATS", "1"), ("HF_HUB_OFFLINE", "1"),
                 ("OMP_NUM_THREADS", "7"), ("SOME_UNRELATED", "1")):
        monkeypatch.setenv(k, v)
    assert eng.portable_command(tmp_path / "model") == bare
    assert 'DO_NOT_TRACK="${DO_NOT_TRACK}"' in bare and "SOME_UNRELATED" not in bare
    # the engine still runs with the caller's value where the caller set one
    assert eng.environment()["DO_NOT_TRACK"] == "true"
