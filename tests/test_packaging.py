"""The project's packaging: the app's entry points, its health route, and CI
running exactly the test command the README gives."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _first_block(text: str) -> list[str]:
    """The commands of the first code block in `text`, one per line."""
    block = re.search(r"^```[a-z]*\n(.*?)^```", text, re.M | re.S)
    assert block, "no code block"
    lines = [line.strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def _quick_start_commands() -> list[str]:
    """The commands in the README's "Quick start" code block, one per line."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Quick start\s*$(.*?)(?=^## |\Z)", readme, re.M | re.S)
    assert section, "README.md has no '## Quick start' section"
    return _first_block(section.group(1))


def _ci_commands() -> list[list[str]]:
    """The commands .ci/run runs, minus shell set-up (set, cd) and comments."""
    commands = []
    for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] not in ("set", "cd"):
            commands.append(words)
    return commands


def test_python_m_app_help() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "app", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "--port" in result.stdout
    assert "--host" in result.stdout


def test_healthz_answers_ok() -> None:
    from app import server

    client = server.test_client()
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.get_data(as_text=True) == "ok"


def test_index_page_served() -> None:
    from app import server

    response = server.test_client().get("/")
    assert response.status_code == 200
    assert "<html" in response.get_data(as_text=True).lower()


def test_readme_quick_start_is_run_and_test() -> None:
    assert _quick_start_commands() == ["scripts/run", "scripts/test"]


def test_getting_started_gives_the_same_two_commands() -> None:
    """The documentation's first page of instructions starts with the README's commands."""
    page = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert _first_block(page) == _quick_start_commands()


def test_ci_runs_exactly_the_readme_test_command() -> None:
    readme_test = shlex.split(_quick_start_commands()[1])
    commands = _ci_commands()
    assert len(commands) == 1, f".ci/run should run one command, found {commands}"
    words = commands[0]
    # `bash scripts/test "$@"`: the interpreter and pass-through of CI's own
    # arguments aside, it must be the README's command itself.
    while words and words[0] in ("exec", "bash"):
        words = words[1:]
    if words and words[-1] == "$@":
        words = words[:-1]
    assert words == readme_test


def test_torch_pin_agrees_between_setup_and_dockerfile() -> None:
    setup = (ROOT / "scripts" / "setup").read_text(encoding="utf-8")
    docker = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    pin = re.search(r"TEMPSUP_TORCH_VERSION:-([0-9.]+)\}", setup)
    docker_pin = re.search(r"^ARG TORCH_VERSION=([0-9.]+)$", docker, re.M)
    assert pin and docker_pin
    assert pin.group(1) == docker_pin.group(1)


def test_scripts_are_executable() -> None:
    for name in ("scripts/setup", "scripts/run", "scripts/test", ".ci/run"):
        assert (ROOT / name).stat().st_mode & 0o111, f"{name} is not executable"
