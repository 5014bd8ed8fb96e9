"""The command line starts light: `--version`, `--help` and the parsers of the commands whose flags are
not made from dataset models import none of the heavy libraries, and no command module imports one at its top."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from paths import REPO

from ctxrobust import cli

HEAVY = ("numpy", "pandas", "pyarrow", "scipy", "numba", "datasets", "matplotlib", "openai", "huggingface_hub")
# commands whose flags come from the datasets' PromptOptions / ScoreOptions: their parsers import those models
MODEL_FLAGS = {"prompts", "run", "score", "export"}

PROBE = """
import contextlib, io, json, sys
from ctxrobust import cli
with contextlib.redirect_stdout(io.StringIO()):
    try:
        {action}
    except SystemExit:
        pass
print(json.dumps(sorted({{name.split(".")[0] for name in sys.modules}} & set({heavy!r}))))
"""


def heavy_after(action: str) -> list[str]:
    """The heavy libraries in sys.modules of a fresh interpreter after `action` (one statement)."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(action=action, heavy=HEAVY)], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_the_probe_sees_a_heavy_import():
    assert heavy_after("import numpy") == ["numpy"]


@pytest.mark.parametrize("argv", [["--version"], ["--help"], []], ids=["version", "help", "no-command"])
def test_version_and_help_import_nothing_heavy(argv):
    assert heavy_after(f"cli.main({argv!r})") == []


def test_no_command_module_imports_anything_heavy_at_its_top():
    assert heavy_after("import importlib; [importlib.import_module(m) for m in cli.COMMANDS.values()]") == []


def test_the_parsers_of_commands_without_model_flags_import_nothing_heavy():
    light = sorted(set(cli.COMMANDS) - MODEL_FLAGS)
    assert {"build", "validate", "push"} <= set(light)
    assert heavy_after(f"cli.parser({light!r})") == []


@pytest.mark.parametrize("command", sorted(MODEL_FLAGS & set(cli.COMMANDS)))
def test_the_parsers_of_commands_with_model_flags_import_nothing_heavy(command):
    assert heavy_after(f"cli.parser([{command!r}])") == []
