"""Helpers for the hostile-input tests: run the command line in a child process with a time bound, and
fingerprint a folder tree (without following links or opening special files) to show nothing changed."""
from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from ctxrobust.build import write_sums
from ctxrobust.canonical import dumps_pretty

REPO = Path(__file__).resolve().parent.parent
TIMEOUT = 120  # seconds: a command that hangs fails its test instead of the suite


def run(*args: str, env: dict | None = None, timeout: float = TIMEOUT, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`ctxrobust ARGS...` in a child process, bounded by `timeout` (subprocess.TimeoutExpired fails the test)."""
    environment = {**os.environ, "PYTHONPATH": str(REPO / "tests"), **(env or {})}
    environment.pop("CTXROBUST_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "ctxrobust.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=environment, cwd=cwd, stdin=subprocess.DEVNULL)


def fingerprint(root: Path) -> dict[str, str]:
    """relative path -> sha256 of a regular file, the target of a link, or the kind of a special file."""
    found = {}
    for folder, subfolders, files in os.walk(root, followlinks=False):
        for name in subfolders + files:
            path = Path(folder) / name
            mode = os.lstat(path).st_mode
            rel = str(path.relative_to(root))
            if stat.S_ISLNK(mode):
                found[rel] = "link:" + os.readlink(path)
            elif stat.S_ISREG(mode):
                found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            elif stat.S_ISDIR(mode):
                found[rel] = "folder"
            else:
                found[rel] = f"special:{stat.S_IFMT(mode)}"
    return found


def edit_manifest(folder: Path, change) -> None:
    """Change a release's manifest (and re-hash SHA256SUMS, as a careful attacker would)."""
    manifest = json.loads((folder / "manifest.json").read_text())
    change(manifest)
    (folder / "manifest.json").write_text(dumps_pretty(manifest))
    write_sums(folder)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]
