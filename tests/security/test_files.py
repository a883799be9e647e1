"""Point 2 — safe files: no link, special file or path out of its folder is listed, verified,
copied or shipped; handoff deletes only the bundles it made, in a folder of its own."""

import json
import os
import socket

import pytest
import yaml
from pydantic import ValidationError

from pipeline.artifacts.manifest import (UnsafeFileError, VerificationError, build_manifest,
                                         require_verified, verify)
from pipeline.config import Params
from pipeline.handoff import stage as handoff

from .conftest import CANDIDATE, REPO, compare
from conftest import stage_args


def test_a_symlinked_folder_inside_an_artifact_is_reported_and_never_followed(project, tmp_path):
    secret_home = tmp_path / "home"
    secret_home.mkdir()
    (secret_home / "id_rsa").write_text("PRIVATE KEY")
    art = project.root / "artifacts" / CANDIDATE
    os.symlink(secret_home, art / "extras")
    problems = verify(art)
    assert [p.path for p in problems] == ["extras"] and "symlink" in problems[0].problem
    with pytest.raises(UnsafeFileError, match="links are not allowed"):
        build_manifest(art, lineage={})
    # the handoff refuses before copying anything: no private file reaches a bundle
    with pytest.raises(Exception, match="symlink"):
        handoff.run(*stage_args(project.params, project.root, handoff.PARAMS))
    assert not list((project.root).glob("handoff/**/id_rsa"))


def test_a_symlinked_file_and_a_socket_are_reported(project):
    art = project.root / "artifacts" / CANDIDATE
    os.symlink("/etc/hostname", art / "sub" / "leak.txt")
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(art / "sock"))
        found = {p.path: p.problem for p in verify(art)}
    assert "symlink" in found["sub/leak.txt"] and "special file" in found["sock"]


@pytest.mark.parametrize("bad", ["../outside.bin", "/etc/passwd", "sub/../../x", "a//b", ""])
def test_manifest_paths_that_leave_the_folder_are_refused_unread(project, tmp_path, bad):
    art = project.root / "artifacts" / CANDIDATE
    (project.root / "artifacts" / "outside.bin").write_bytes(b"outside")
    manifest = json.loads((art / "manifest.json").read_text())
    manifest["files"].append({"path": bad, "size": 7, "sha256": "0" * 64})
    (art / "manifest.json").write_text(json.dumps(manifest))
    problems = verify(art)
    assert problems and all("unsafe path" in p.problem for p in problems), problems
    with pytest.raises(VerificationError, match="unsafe path"):
        require_verified(art)


def test_a_manifest_whose_content_hash_is_edited_does_not_verify(project):
    art = project.root / "artifacts" / CANDIDATE
    manifest = json.loads((art / "manifest.json").read_text())
    manifest["content_sha256"] = project.shas["baseline"]  # claim to be another artifact
    (art / "manifest.json").write_text(json.dumps(manifest))
    assert any("content_sha256" in p.problem for p in verify(art))


def test_handoff_deletes_only_bundles_it_made(project):
    out = project.root / "handoff"
    (out / "notes").mkdir(parents=True)
    (out / "notes" / "keep.txt").write_text("a person's file")
    handoff.run(*stage_args(project.params, project.root, handoff.PARAMS))
    assert (out / CANDIDATE).is_dir()
    compare(project.root, [])  # the candidate no longer passes anything: its bundle is stale
    handoff.run(*stage_args(project.params, project.root, handoff.PARAMS))
    assert not (out / CANDIDATE).exists()
    assert (out / "notes" / "keep.txt").read_text() == "a person's file"


@pytest.mark.parametrize("out_dir", [".", "", "..", "../elsewhere", "/tmp/handoff", "artifacts",
                                     "results", "results/handoff", "models", "data/x", "reports"])
def test_handoff_out_dir_must_be_a_folder_of_its_own(out_dir):
    data = yaml.safe_load((REPO / "params.yaml").read_text())
    data["handoff"]["out_dir"] = out_dir
    with pytest.raises(ValidationError, match="handoff"):
        Params.model_validate(data)


def test_an_ordinary_handoff_folder_is_accepted():
    data = yaml.safe_load((REPO / "params.yaml").read_text())
    data["handoff"]["out_dir"] = "deliveries/handoff"
    assert str(Params.model_validate(data).handoff.out_dir) == "deliveries/handoff"
