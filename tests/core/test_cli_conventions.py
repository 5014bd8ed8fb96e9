"""Command-line conventions: --version, help on every option, build settings listed, wrong --set keys named."""

from __future__ import annotations

import argparse

import pytest

import ctxrobust
from ctxrobust import cli, registry


def _subparsers(top: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"ctxrobust {ctxrobust.__version__}"


def test_every_option_and_argument_of_every_command_has_help():
    top = cli.parser()
    missing = []
    for name, sub in {"": top, **_subparsers(top)}.items():
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert not missing, f"options without help: {missing}"


@pytest.mark.parametrize("dataset", registry.names())
def test_build_dataset_help_lists_its_settings_with_types_defaults_and_bounds(dataset, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["build", dataset, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert f"settings of {dataset}" in out
    others = [n for n in registry.names() if n != dataset]
    assert not any(f"settings of {n}" in out for n in others)
    listed = {line.split()[0] for line in out.split(f"settings of {dataset}", 1)[1].splitlines()[1:] if line.strip()}
    assert listed == set(registry.get(dataset).config_cls.model_fields)
    expected = {
        "gsm-ic": "  n_variants         int; default 58052; >= 8; <= 1000000.",
        "misleadqa": "situatedqa_per_question   int; default 2; >= 1",
        "pseudowords": "contexts_per_length  int; default 10; >= 1; <= 999",
    }[dataset]
    assert expected in out


def test_a_wrong_set_key_names_the_valid_keys(tmp_path, capsys):
    assert cli.main(["build", "pseudowords", "--version", "1.0.0", "--set", "vocab_size=3", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: build configuration for pseudowords: no setting vocab_size; its settings are contexts_per_length, kinds,")
    assert "vocabulary_size" in err and "Extra inputs" not in err
    assert not any(tmp_path.iterdir())
