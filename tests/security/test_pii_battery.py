"""Point 3 — PII everywhere it can hide: values this test generates itself (seeded; never the
demo generator's), in several languages and formats, planted in every string field a record has
— messages, reference, labels, rubric (values and keys), tool schemas (values and keys) — and
in rejected records; after the split, no value survives in any file it wrote."""

import json
import random
import string

import pytest
import yaml

from pipeline.calibration import split
from pipeline.calibration.pii import PIIConfig, Scrubber
from pipeline.config import Params

from .conftest import REPO
from conftest import stage_args

HAN = ("王李张刘陈杨赵黄周吴徐孙胡朱高林何郭马罗梁宋郑谢韩"
       "唐冯于董萧程曹袁邓许傅沈曾彭吕苏卢蒋蔡贾丁魏薛叶阎"
       "余潘杜戴夏钟汪田任姜范方石姚谭廖邹熊金陆郝孔白崔康"
       "毛邱秦江史顾侯邵孟龙万段雷钱汤尹黎易常武乔贺赖龚文")
CYR_FIRST = ["Иван", "Олег", "Дмитрий", "Сергей", "Алексей", "Мария", "Анна", "Елена", "Ольга", "Наталья"]
CYR_LAST = ["Петров", "Смирнов", "Кузнецов", "Попов", "Соколов", "Лебедев", "Козлов", "Новиков"]
HANGUL = "김이박최정강조윤장임한오서신권황안송류홍민준서연지우현수예"


def luhn_complete(prefix: str, length: int, rng) -> str:
    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    total = 0
    for i, ch in enumerate(reversed(body + "0")):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return body + str((10 - total % 10) % 10)


def iban(country: str, bban: str) -> str:
    digits = "".join(str(int(c, 36)) for c in bban + country + "00")
    return f"{country}{98 - int(digits) % 97:02d}{bban}"


def values(rng) -> list[tuple[str, str]]:
    """(kind, text containing it) — the raw value is what must not survive."""
    out = []
    local = "".join(rng.choice(string.ascii_lowercase) for _ in range(7))
    out.append((f"{local}.{rng.randint(10, 99)}@mail-{rng.randint(100, 999)}.com", "email {}"))
    out.append((f"{local}@bücher-{rng.randint(10, 99)}.de", "schreiben Sie an {}"))
    out.append((f"客户{rng.randint(100, 999)}@例子.中国", "邮箱 {}"))
    card = luhn_complete(rng.choice(["4", "51", "52", "55"]), 16, rng)
    seps = [rng.choice([" ", "-", ".", " - "]) for _ in range(3)]
    out.append((card[:4] + seps[0] + card[4:8] + seps[1] + card[8:12] + seps[2] + card[12:], "card {} thanks"))
    bban = f"{rng.randint(10**17, 10**18 - 1)}"
    value = iban("DE", bban)
    out.append((" ".join(value[i:i + 4] for i in range(0, len(value), 4)), "pay to {} please"))
    out.append((iban("GB", "WEST" + f"{rng.randint(10**13, 10**14 - 1)}"), "IBAN {}"))
    out.append((f"{rng.choice('XCPK')}{rng.randint(1000000, 9999999)}", "my passport number is {}"))
    out.append((f"{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/{rng.randint(1940, 2005)}", "date of birth: {}"))
    out.append((f"{rng.randint(1940, 2005)}年{rng.randint(1, 12)}月{rng.randint(1, 28)}日", "出生日期 {}"))
    out.append((f"{rng.choice(['415', '646', '312'])}555{rng.randint(1000, 9999)}", "tel {}"))
    out.append((f"079{rng.randint(10000000, 99999999)}", "mobile No. {}"))
    out.append((f"13{rng.randint(100000000, 999999999)}", "手机 {}"))
    out.append(("".join(rng.sample(HAN, 3)), "你好，我叫{}，订单有问题"))
    out.append((f"{rng.choice(CYR_FIRST)} {rng.choice(CYR_LAST)}", "Здравствуйте, меня зовут {}."))
    out.append(("".join(rng.sample(HANGUL, 3)), "제 이름은 {}입니다"))
    return out


@pytest.mark.parametrize("seed", range(5))
def test_no_generated_value_survives_in_any_field(seed):
    rng = random.Random(seed)
    planted = values(rng)
    scrubber = Scrubber(PIIConfig())
    for value, template in planted:
        text = template.format(value)
        record = {"messages": [{"role": "user", "content": text}], "reference": text,
                  "scenario": "faq", "segment": f"vip {text}",
                  "rubric": {"type": "json", "expected": {text: [text]}},
                  "tools": [{"name": "lookup", "description": text,
                             "parameters": {"properties": {text: {"type": "string", "enum": [text]}}}}]}
        scrubber.scrub_data(record)
        dumped = json.dumps(record, ensure_ascii=False)
        assert value not in dumped, (template, value, dumped)


def test_nothing_survives_the_split(tmp_path):
    rng = random.Random(20261201)
    planted = [v for _ in range(3) for v in values(rng)]
    logs = tmp_path / "logs"
    logs.mkdir()
    lines = []
    ids = []  # a conversation id that is the customer's phone, a record id with an e-mail in it
    for i, (value, template) in enumerate(planted * 3):
        text = template.format(value)
        conv, rid = f"whatsapp:+1415{rng.randint(2000000, 9999999)}", f"{i}-{rng.randint(10**5, 10**6)}@crm.example"
        ids += [conv.split(":")[1], rid]
        rec = {"id": rid, "conversation_id": conv, "timestamp": "2026-10-01T10:00:00Z",
               "scenario": "faq", "segment": f"tier {text}", "difficulty": "easy",
               "messages": [{"role": "user", "content": f"Hello. {text}"},
                            {"role": "assistant", "content": f"Noted: {text}"}],
               "reference": f"Noted: {text}",
               "tools": [{"name": "crm", "description": f"look up {text}"}]}
        lines.append(json.dumps(rec, ensure_ascii=False))
    # a rejected record quoting a value in a field the ingestor names
    first = planted[0][1].format(planted[0][0])
    lines.append(json.dumps({"id": rid, "conversation_id": "dup", "timestamp": "2026-10-01T10:00:00Z",
                             "scenario": "faq", "messages": [{"role": "user", "content": first}]},
                            ensure_ascii=False))
    (logs / "a.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = yaml.safe_load((REPO / "params.yaml").read_text())
    data["model"]["path"] = str(REPO / "models" / "demo")
    data["data"]["sources"] = ["logs"]
    data["split"]["eval_share"] = 0.5
    split.run(*stage_args(Params.model_validate(data), tmp_path, split.PARAMS))
    outputs = [p for p in (tmp_path / "data").rglob("*") if p.is_file()]
    assert any(p.name == "evalset.jsonl" for p in outputs)
    blob = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in outputs)
    survivors = sorted({v for v, _ in planted if v in blob} | {v for v in ids if v in blob})
    assert survivors == [], survivors
    # and in MLflow: every split output logged as tracking logs files, the evaluation set as a
    # dataset input, then everything the store holds (database and artifacts) read back
    from mlflow import MlflowClient

    from pipeline.tracking.log import dataset_input, upload
    from pipeline.tracking.project import Dataset

    store = tmp_path / "mlflow"
    store.mkdir()
    client = MlflowClient(tracking_uri=f"sqlite:///{store / 'mlflow.db'}")
    run = client.create_run(client.create_experiment("pii", artifact_location=(store / "art").as_uri()))
    for p in outputs:
        upload(client, run.info.run_id, p, p.parent.name)
    card = json.loads((tmp_path / "data" / "evalset" / "card.json").read_text())
    client.log_inputs(run.info.run_id, [dataset_input(Dataset(
        "evalset", "evaluation", tmp_path / "data" / "evalset", card["content_sha256"], card, None))])
    held = "\n".join(p.read_bytes().decode("utf-8", errors="replace") for p in store.rglob("*") if p.is_file())
    assert len(held) > 10_000  # the files did arrive
    assert sorted({v for v, _ in planted if v in held} | {v for v in ids if v in held}) == []
