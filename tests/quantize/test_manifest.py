"""manifest.json + SHA256SUMS: written by build_manifest, checked by verify, by `sha256sum -c`
and by `qpipe verify`. Each tamper changes exactly one thing and must be named exactly."""

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.artifacts.manifest import (MANIFEST, SUMS, VerificationError, build_manifest, file_table,
                                         require_verified, tree_sha256, verify)
from pipeline.cli import app

FILES = {
    "config.json": b'{"architectures": ["LlamaForCausalLM"]}\n',
    "model.safetensors": bytes(range(256)) * 64,
    "tokenizer.json": b'{"model": {"vocab": {}}}\n',
    "sub dir/shard 2.bin": b"\x00\x01\x02 with spaces in the path\n",
}
WEIGHTS = "model.safetensors"


@pytest.fixture
def artifact(tmp_path: Path) -> Path:
    root = tmp_path / "artifact"
    for rel, data in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    build_manifest(root, lineage={"variant": "x", "scheme": "w4a16_gptq"})
    return root


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def only(problems, path: str):
    assert [m.path for m in problems] == [path], problems
    return problems[0].problem


# ---------------------------------------------------------------------------------- writing

def test_manifest_lists_every_file_with_size_and_sha256(artifact):
    m = json.loads((artifact / MANIFEST).read_text())
    assert {f["path"]: (f["size"], f["sha256"]) for f in m["files"]} == {
        rel: (len(data), sha256(data)) for rel, data in FILES.items()}
    assert m["variant"] == "x" and m["scheme"] == "w4a16_gptq"
    assert m["size_bytes"] == sum(map(len, FILES.values()))


def test_sha256sums_is_accepted_by_sha256sum(artifact):
    if shutil.which("sha256sum") is None:
        pytest.skip("sha256sum (GNU coreutils) is not installed")
    done = subprocess.run(["sha256sum", "--check", "--strict", SUMS], cwd=artifact,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(line.rsplit(": ", 1)[0] for line in done.stdout.splitlines()) == sorted(FILES)
    assert all(line.endswith(": OK") for line in done.stdout.splitlines())


def test_sha256sum_catches_what_verify_catches(artifact):
    if shutil.which("sha256sum") is None:
        pytest.skip("sha256sum (GNU coreutils) is not installed")
    _flip_byte(artifact / WEIGHTS)
    done = subprocess.run(["sha256sum", "--check", SUMS], cwd=artifact, capture_output=True, text=True)
    assert done.returncode == 1
    assert f"{WEIGHTS}: FAILED" in done.stdout


# ---------------------------------------------------------------------------------- verify

def _flip_byte(path: Path, offset: int = 100) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def test_intact_artifact_verifies(artifact):
    assert verify(artifact) == []
    assert require_verified(artifact).variant == "x"


def test_one_flipped_byte_is_named_as_modified(artifact):
    _flip_byte(artifact / WEIGHTS)
    assert "modified" in only(verify(artifact), WEIGHTS)


def test_flipped_byte_in_a_subdirectory(artifact):
    _flip_byte(artifact / "sub dir" / "shard 2.bin", offset=0)
    assert "modified" in only(verify(artifact), "sub dir/shard 2.bin")


def test_deleted_file_is_missing(artifact):
    (artifact / "tokenizer.json").unlink()
    assert only(verify(artifact), "tokenizer.json") == "missing"


def test_added_file_is_extra(artifact):
    (artifact / "stray.bin").write_bytes(b"not in the manifest")
    assert "extra" in only(verify(artifact), "stray.bin")


def test_truncated_file_is_a_size_mismatch(artifact):
    path = artifact / WEIGHTS
    path.write_bytes(path.read_bytes()[:1000])
    problem = only(verify(artifact), WEIGHTS)
    assert "size" in problem and "1000" in problem and str(len(FILES[WEIGHTS])) in problem


def test_edited_sha256sums_is_flagged(artifact):
    sums = artifact / SUMS
    sums.write_text(sums.read_text().replace(sha256(FILES[WEIGHTS]), "0" * 64))
    assert only(verify(artifact), SUMS)


def test_missing_sha256sums_is_flagged(artifact):
    (artifact / SUMS).unlink()
    assert only(verify(artifact), SUMS) == "missing"


def test_no_manifest(artifact):
    (artifact / MANIFEST).unlink()
    assert [m.problem for m in verify(artifact)] == ["no manifest"]


def test_require_verified_names_the_file_and_the_fix(artifact):
    _flip_byte(artifact / WEIGHTS)
    with pytest.raises(VerificationError) as info:
        require_verified(artifact)
    msg = str(info.value)
    assert WEIGHTS in msg and "modified" in msg
    assert "fix:" in msg and "dvc repro quantize@" in msg
    assert [m.path for m in info.value.mismatches] == [WEIGHTS]


# ---------------------------------------------------------------------------------- tree hash

def test_tree_sha256_ignores_order_but_not_content(artifact):
    files = file_table(artifact)
    assert tree_sha256(files) == tree_sha256(list(reversed(files)))
    assert tree_sha256(files) == json.loads((artifact / MANIFEST).read_text())["content_sha256"]
    changed = [dict(f, sha256="0" * 64) if f["path"] == WEIGHTS else f for f in files]
    assert tree_sha256(changed) != tree_sha256(files)
    renamed = [dict(f, path="renamed.safetensors") if f["path"] == WEIGHTS else f for f in files]
    assert tree_sha256(renamed) != tree_sha256(files)


def test_tree_sha256_is_independent_of_directory_creation_order(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for root, names in ((a, sorted(FILES)), (b, sorted(FILES, reverse=True))):
        for rel in names:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(FILES[rel])
    assert build_manifest(a, lineage={})["content_sha256"] == build_manifest(b, lineage={})["content_sha256"]
    assert (a / SUMS).read_bytes() == (b / SUMS).read_bytes()


# ---------------------------------------------------------------------------------- CLI

def test_qpipe_verify_exits_0_when_intact(artifact):
    result = CliRunner().invoke(app, ["verify", str(artifact)])
    assert result.exit_code == 0, result.output
    assert "every file matches" in " ".join(result.output.split())


def test_qpipe_verify_exits_1_naming_the_file(artifact):
    _flip_byte(artifact / WEIGHTS)
    result = CliRunner().invoke(app, ["verify", str(artifact)])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if "MISMATCH" in line]
    assert len(lines) == 1, result.output
    assert f"{WEIGHTS}: modified" in lines[0]


def test_qpipe_verify_names_a_file_with_brackets_as_it_is(tmp_path):
    root = tmp_path / "run[final]"
    root.mkdir()
    (root / "w[b].bin").write_bytes(b"weights")
    build_manifest(root, lineage={})
    _flip_byte(root / "w[b].bin", offset=0)
    result = CliRunner().invoke(app, ["verify", str(root)])
    assert result.exit_code == 1
    assert f"{root}/w[b].bin: modified" in result.output


def test_a_precomputed_file_table_must_list_exactly_the_files_present(tmp_path):
    from pipeline.artifacts.manifest import build_manifest, file_table

    (tmp_path / "a.bin").write_bytes(b"a")
    table = file_table(tmp_path)
    (tmp_path / "late.bin").write_bytes(b"written after hashing")
    with pytest.raises(ValueError, match="late.bin"):
        build_manifest(tmp_path, lineage={}, files=table)
    (tmp_path / "late.bin").unlink()
    assert build_manifest(tmp_path, lineage={}, files=table)["files"] == table
