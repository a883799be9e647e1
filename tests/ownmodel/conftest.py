"""A second, untrained model with the shapes public checkpoints have, and a project around it.

`own_model` builds once per module, from a config, a Llama-architecture model shaped like
SmolLM-135M: hidden 576 (not a multiple of 128 or 256), 9 query / 3 key-value heads of width 64,
intermediate 1536, tied input/output embeddings, and a vocabulary (49152) larger than its
tokenizer's (4098: the extra rows are padding, as in many published checkpoints). Its weights are
random (seeded); its tokenizer is the demo's byte-level BPE with other special tokens and a
Llama-3 style chat template (`<|start_header_id|>role<|end_header_id|>\\n\\n…<|eot_id|>`), so
nothing downstream can pass by falling back on the demo's ChatML.

`own_project` writes params.yaml (with the demo's full variant matrix) into tmp, copies
recipes/ and calibration/ there, points model.path at models/own, shrinks the calibration sets
and the evaluation, adds a group-64 GPTQ variant, and runs `split` and `calibration@business`
with the new model's tokenizer and template.
"""

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from demo.matrix import full_params
from pipeline.artifacts.manifest import MANIFEST
from pipeline.calibration import build, split
from pipeline.config import Params
from pipeline.evaluate import stage as evaluate
from pipeline.quantize import stage as quantize
from conftest import stage_args

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "models" / "demo"
MODEL_REL = "models/own"
SMALL_SET = dict(num_samples=16, max_seq_len=256)
EVAL_LIMIT = 24
LOAD_CHECK_TOKENS = 6

# The model's shapes (SmolLM-135M's widths, two layers).
SHAPE = dict(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=2,
             num_attention_heads=9, num_key_value_heads=3, head_dim=64,
             max_position_embeddings=2048, rope_theta=10000.0, tie_word_embeddings=True)
SEED = 1234

# The demo tokenizer's three special tokens (ids 0-2) get Llama-3's names; the two header markers
# are added after its 4096 BPE entries.
RENAMED = {"<|endoftext|>": "<|end_of_text|>", "<|im_start|>": "<|begin_of_text|>",
           "<|im_end|>": "<|eot_id|>"}
BOS, EOT, PAD = "<|begin_of_text|>", "<|eot_id|>", "<|end_of_text|>"
HEADERS = ("<|start_header_id|>", "<|end_header_id|>")
NEW_SPECIALS = (BOS, EOT, PAD, *HEADERS)
DEMO_SPECIALS = tuple(RENAMED)
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] | trim"
    " + '<|eot_id|>' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}")

# W4A16 GPTQ with groups of 64, which divide 576 and 1536 (the preset's 128 does not divide 576).
GPTQ_G64_RECIPE = """\
# GPTQ, 4-bit weights in groups of 64 (576-wide layers: the W4A16 preset's 128 does not divide them)
quant_stage:
  quant_modifiers:
    GPTQModifier:
      targets: [Linear]
      ignore: [lm_head]
      dampening_frac: 0.01
      config_groups:
        group_0:
          targets: [Linear]
          weights: {num_bits: 4, type: int, symmetric: true, strategy: group, group_size: 64}
"""
GPTQ_G64 = "gptq_w4a16_g64_business"
GPTQ_G64_VARIANT = {"backend": "llmcompressor", "scheme": "w4a16_gptq",
                    "recipe": "recipes/gptq_w4a16_g64.yaml", "calibration": "business",
                    "reference": "baseline"}


def build_tokenizer(out: Path):
    """The demo's byte-level BPE, its special tokens renamed, two header markers added, a
    Llama-3 style template; saved with save_pretrained (chat_template.jinja beside it)."""
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    spec = json.loads((DEMO / "tokenizer.json").read_text())
    for tok in spec["added_tokens"]:
        tok["content"] = RENAMED[tok["content"]]
    vocab = spec["model"]["vocab"]
    for old, new in RENAMED.items():
        vocab[new] = vocab.pop(old)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_str(json.dumps(spec)),
                                        bos_token=BOS, eos_token=EOT, pad_token=PAD,
                                        model_max_length=SHAPE["max_position_embeddings"],
                                        clean_up_tokenization_spaces=False)
    tokenizer.add_special_tokens({"additional_special_tokens": list(HEADERS)})
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(out)
    if not (out / "chat_template.jinja").is_file():  # the layout models/demo has
        (out / "chat_template.jinja").write_text(CHAT_TEMPLATE)
    return tokenizer


def build_model(out: Path) -> Path:
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    out.mkdir(parents=True, exist_ok=True)
    tok = build_tokenizer(out)
    ids = dict(bos_token_id=tok.convert_tokens_to_ids(BOS), eos_token_id=tok.convert_tokens_to_ids(EOT),
               pad_token_id=tok.convert_tokens_to_ids(PAD))
    config = LlamaConfig(**SHAPE, **ids, torch_dtype="bfloat16")
    torch.manual_seed(SEED)
    model = LlamaForCausalLM(config).to(torch.bfloat16)
    # The rows past the tokenizer are padding, as in a trained checkpoint they never win: zero
    # (with tied embeddings their logits are 0, below the best real token's), so greedy answers
    # are text, not ids without a token
    with torch.no_grad():
        model.get_input_embeddings().weight[len(tok):] = 0
    model.save_pretrained(out)  # safetensors
    GenerationConfig(**ids).save_pretrained(out)  # eos: the end-of-turn token
    return out


@pytest.fixture(scope="module")
def own_model(tmp_path_factory) -> Path:
    return build_model(tmp_path_factory.mktemp("own-model") / "own")


def project_data() -> dict:
    # params.yaml with the demo's full variant matrix (demo/full_matrix.yaml), as the other slow
    # tests use it: every backend and scheme, W8A8 among them
    data = full_params(REPO)
    data["model"].update(name="own-llama-576", path=MODEL_REL)  # gguf_pre_tokenizer: the same BPE
    for spec in data["calibration"]["sets"].values():
        spec.update(SMALL_SET)
    data["split"]["eval_share"] = 0.2
    data["evaluate"].update(limit=EVAL_LIMIT, warmup=2, max_tokens=32, lm_eval={"tasks": []})
    data["quantize"]["load_check"]["new_tokens"] = LOAD_CHECK_TOKENS
    data["variants"][GPTQ_G64] = dict(GPTQ_G64_VARIANT)
    return data


@pytest.fixture(scope="module")
def own_project(tmp_path_factory, own_model) -> SimpleNamespace:
    root = tmp_path_factory.mktemp("own-project")
    for rel in ("recipes", "calibration"):
        shutil.copytree(REPO / rel, root / rel)
    shutil.copytree(own_model, root / MODEL_REL)
    (root / GPTQ_G64_VARIANT["recipe"]).write_text(GPTQ_G64_RECIPE)
    data = project_data()
    (root / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    params = Params.model_validate(data)
    split.run(*stage_args(params, root, split.PARAMS))
    card = build.run(*stage_args(params, root, build.PARAMS, "business"), "business")
    assert card["samples"] == SMALL_SET["num_samples"]
    quantized: dict[str, dict] = {}
    evaluated: dict[str, dict] = {}

    def quantize_once(variant: str) -> dict:
        if variant not in quantized:
            quantize.run(*stage_args(params, root, quantize.PARAMS, variant), variant)
            quantized[variant] = json.loads((root / "artifacts" / variant / MANIFEST).read_text())
        return quantized[variant]

    def evaluate_once(variant: str) -> dict:
        if variant not in evaluated:
            quantize_once(variant)
            evaluated[variant] = evaluate.run(*stage_args(params, root, evaluate.PARAMS, variant), variant)
        return evaluated[variant]

    return SimpleNamespace(root=root, data=data, params=params, card=card, model=root / MODEL_REL,
                           quantized=quantize_once, evaluated=evaluate_once)
