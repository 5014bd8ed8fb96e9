"""The command line: build, release, sources, validate, prompts, run, score, screen, push.

Each command is a module of `ctxrobust.commands` holding its help line (`HELP`), its flags
(`add_arguments(parser)`) and its body (`run(args) -> int`); `COMMANDS` names them, so adding a
command is one line there. Only the module of the command given is asked for its flags, and nothing
heavy is imported before a command runs: `--version` and `--help` stay fast.

Dataset names and the per-dataset flags of `prompts` and `score` come from the registry: each field
of a dataset's PromptOptions / ScoreOptions model is one flag, refused for datasets without it.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from collections.abc import Collection

import ctxrobust
from ctxrobust.errors import CtxRobustError

COMMANDS = {
    "build": "ctxrobust.commands.build",
    "release": "ctxrobust.commands.release",
    "sources": "ctxrobust.commands.sources",
    "validate": "ctxrobust.commands.validate",
    "prompts": "ctxrobust.commands.prompts",
    "run": "ctxrobust.commands.run",
    "score": "ctxrobust.commands.score",
    "screen": "ctxrobust.commands.screen",
    "push": "ctxrobust.commands.push",
    "export": "ctxrobust.commands.export",
}


def parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The whole parser; with `commands`, only those commands get their flags (the others keep their help line)."""
    top = argparse.ArgumentParser(
        prog="ctxrobust",
        description="Build, validate, publish and score context-robustness datasets.",
        epilog="`ctxrobust COMMAND --help` shows a command's options, with their choices and defaults.",
    )
    top.add_argument(
        "--version", action="version", version=f"ctxrobust {ctxrobust.__version__}", help="print the ctxrobust version and exit"
    )
    sub = top.add_subparsers(dest="command", required=True)
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(module_name)
        p = sub.add_parser(name, help=module.HELP, add_help=getattr(module, "ADD_HELP", True))
        if commands is None or name in commands:
            module.add_arguments(p)
    return top


def _command_in(argv: list[str]) -> str | None:
    """The command `argv` names: its first word that is no top-level option (those take no value)."""
    for i, word in enumerate(argv):
        if word == "--":
            return argv[i + 1] if i + 1 < len(argv) else None
        if not word.startswith("-") or word == "-":
            return word
    return None


class _Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an exception so that every temporary file and folder is removed on the way out."""


def _on_sigterm(signum, frame):
    raise _Terminated()


def _run(argv: list[str]) -> int:
    args = parser([_command_in(argv)]).parse_args(argv)
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread
        previous = None
    try:
        return _dispatch(args)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _dispatch(args) -> int:
    try:
        return importlib.import_module(COMMANDS[args.command]).run(args)
    except _Terminated:
        print("error: interrupted by SIGTERM; no output was left half-written (earlier files are as they were)", file=sys.stderr)
        return 143
    except CtxRobustError as exc:
        from ctxrobust.release_files import printable

        print(printable(f"error: {exc}"), file=sys.stderr)
        return getattr(exc, "exit_code", 2)
    except KeyboardInterrupt:
        print("error: interrupted by SIGINT; no output was left half-written (earlier files are as they were)", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a file or folder the user named cannot be read or written
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        if os.environ.get("CTXROBUST_DEBUG"):
            raise
        print(f"error: internal error ({type(exc).__name__}: {exc}); rerun with CTXROBUST_DEBUG=1 for details", file=sys.stderr)
        return 3


def main(argv: list[str] | None = None) -> int:
    return _run(sys.argv[1:] if argv is None else argv)


def validate_main(argv: list[str] | None = None) -> int:
    return _run(["validate", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
