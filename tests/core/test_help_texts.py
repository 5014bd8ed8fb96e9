"""Help that explains itself: every build setting of every dataset has a description that
`build DATASET --help` shows; command help states choices and defaults, and says nothing twice;
the package list covers every folder that ships files (no setuptools warning on install)."""

from __future__ import annotations

import argparse
import re
import subprocess
import typing

import pytest
from paths import REPO

from ctxrobust import cli, registry
from ctxrobust.commands import common

COMMANDS = ("build", "release", "sources", "validate", "prompts", "run", "score", "screen", "push", "export")


def _help(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as done:
        cli.main(argv)
    assert done.value.code == 0
    return capsys.readouterr().out


def _fields():
    return [(dataset.name, name, info) for dataset in registry.datasets() for name, info in dataset.config_cls.model_fields.items()]


@pytest.mark.parametrize("dataset, name, info", _fields(), ids=[f"{d}.{n}" for d, n, _ in _fields()])
def test_every_build_setting_has_a_description(dataset, name, info):
    assert info.description and info.description.strip(), f"{dataset}: setting {name} has no description"
    assert "\n" not in info.description, f"{dataset}: setting {name}: the description is one line"


@pytest.mark.parametrize("dataset", registry.names())
def test_build_help_shows_each_setting_with_its_description(dataset, capsys):
    out = _help(capsys, ["build", dataset, "--help"])
    settings = out.split(f"settings of {dataset}", 1)[1].splitlines()[1:]
    lines = {line.split()[0]: line for line in settings if line.strip()}
    for name, info in registry.get(dataset).config_cls.model_fields.items():
        assert name in lines, f"{name} is not listed"
        assert lines[name].endswith(f". {info.description}"), f"{name}: its description is not shown: {lines[name]!r}"


def _flat(text: str) -> str:
    """Help text on one line, as written before argparse wrapped it (at spaces and after hyphens)."""
    return re.sub(r"\s+", " ", re.sub(r"(?<=\w-)\n\s*(?=\w)", "", text)).strip()


def _sentences(text: str) -> list[str]:
    """The help's statements: its text after the usage, split at '.' and ';' and before the dataset
    names that lead a dataset's part of an option's help ("gsm-ic, misleadqa: ..."), without them."""
    body = text.split("\n\n", 1)[1] if "\n\n" in text else text
    names = "|".join(re.escape(n) for n in registry.names())
    lead = rf"(?:{names})(?:, (?:{names}))*: "
    parts = re.split(rf"(?<=[.;])\s+|\s(?={lead})", _flat(body))
    statements = (re.sub(rf"^{lead}", "", part).rstrip(".;").strip() for part in parts)
    return [s for s in statements if len(s.split()) >= 4]


def _repeated(text: str) -> list[str]:
    seen, repeated = set(), []
    for sentence in _sentences(text):
        if sentence in seen:
            repeated.append(sentence)
        seen.add(sentence)
    return repeated


def test_the_repeat_finder_finds_a_statement_made_once_per_dataset():
    text = "usage: x\n\n  --strict  gsm-ic: refuse to score a file with any bad row; misleadqa: refuse to score a file with any bad row\n"
    assert _repeated(text) == ["refuse to score a file with any bad row"]


def test_score_help_says_nothing_twice(capsys):
    out = _help(capsys, ["score", "--help"])
    assert not _repeated(out), _repeated(out)
    assert "--strict gsm-ic, misleadqa, pseudowords: refuse to score a file with any bad row" in _flat(out)


@pytest.mark.parametrize("command", COMMANDS)
def test_no_command_help_says_anything_twice(command, capsys):
    out = _help(capsys, [command, "--help"])
    assert not _repeated(out), _repeated(out)


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    top = cli.parser()
    action = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_option_with_a_default_or_choices_shows_them():
    """An argparse default other than None / False / SUPPRESS is in the option's help, and so is every
    choice argparse enforces (in the usage, {a,b}, or in the text)."""
    missing = []
    for command, sub in _subparsers().items():
        formatter = sub._get_formatter()
        for action in sub._actions:
            where = f"{command} {'/'.join(action.option_strings) or action.dest}"
            default = action.default
            if default is not None and default is not False and default is not argparse.SUPPRESS:
                shown = format(default, "g") if isinstance(default, float) else str(default)
                if f"default: {shown}" not in formatter._expand_help(action):
                    missing.append(f"{where}: default {default!r}")
            shown_in_usage = action.metavar is None  # argparse writes enforced choices as {a,b}
            if action.choices and not shown_in_usage and not all(str(c) in (action.help or "") for c in action.choices):
                missing.append(f"{where}: choices")
    assert not missing, missing


@pytest.mark.parametrize("command", ["prompts", "score"])
def test_dataset_option_flags_show_each_datasets_default_and_values(command, capsys):
    """A flag made from a dataset's options field states that dataset's default (unless the description
    already tells it) and the values a Literal field takes."""
    out = _flat(_help(capsys, [command, "--help"]))
    part = common.OPTION_PARTS[command]
    for dataset in registry.datasets():
        for name, info in dataset.load(part).model_fields.items():
            description = _flat(info.description or "")
            assert description in out, f"{dataset.name} {command} --{name}: description not shown"
            if info.is_required():
                assert f"{description} (required)" in out
            elif info.default is not None and info.default is not False and "default" not in description:
                assert f"{description} (default: {info.default})" in out, f"{dataset.name} --{name}: default not shown"
            values = common._literal_values(info.annotation) or []
            assert all(str(v) in out for v in values), f"{dataset.name} --{name}: values not shown"


def test_sampling_defaults_in_help_are_the_datasets_plans():
    """The help states each dataset's sampling plan (prompts.PLAN) without importing the prompt code: kept equal here."""
    for field, text in common.PLAN_DEFAULTS.items():
        stated: dict[str, float] = {}
        for clause in text.split(", "):
            value, _, datasets = clause.partition(" for ")
            for name in datasets.split(" and "):
                stated[name] = float(value)
        for dataset in registry.datasets():
            plan = getattr(dataset.load("prompts").PLAN, field)
            if plan is None:
                assert dataset.name not in stated, f"{field}: {dataset.name} has no plan value"
            else:
                assert stated.get(dataset.name) == plan, (
                    f"{field}: the help says {stated.get(dataset.name)} for {dataset.name}, its plan {plan}"
                )


def _tracked_folders() -> set[str]:
    try:
        done = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, timeout=60)
    except OSError:
        pytest.skip("git is not available")
    if done.returncode != 0:
        pytest.skip("not a git checkout")
    return {name.rsplit("/", 1)[0] for name in done.stdout.splitlines() if "/" in name}


def test_every_folder_that_ships_files_is_a_listed_package():
    """setuptools warns ("Package ... is absent from the `packages` configuration") for a folder it
    installs data from that `packages` does not list; every tracked folder under an installed one is listed."""
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    packages = set(config["packages"])
    roots = {folder: package for package, folder in config["package-dir"].items()}
    unlisted = []
    for folder in sorted(_tracked_folders()):
        root = next((r for r in sorted(roots, key=len, reverse=True) if folder == r or folder.startswith(r + "/")), None)
        if root is None:
            continue
        package = roots[root] + folder[len(root) :].replace("/", ".")
        if package not in packages:
            unlisted.append(f"{folder} ({package})")
    assert not unlisted, f"folders installed but not listed in [tool.setuptools] packages: {unlisted}"
    data = typing.cast(dict, config["package-data"])
    assert all(package == "*" or package in packages for package in data), "package-data names a package that is not listed"


def test_score_offers_every_input_format_the_converters_read():
    from ctxrobust.cli import parser
    from ctxrobust.evaluation.formats.convert import FORMATS

    score = parser()._subparsers._group_actions[0].choices["score"]
    (action,) = [a for a in score._actions if a.dest == "input_format"]
    assert tuple(action.choices) == FORMATS
