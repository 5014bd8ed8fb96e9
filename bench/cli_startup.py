"""Benchmark: how long the command line takes to start, as whole processes (`ctxrobust --version`, `--help`).

Each command is run RUNS times after one warm-up run that is not counted, as a child process from its start
to its exit (interpreter start-up, imports and parser included); printed: min, median and max of the wall
seconds and of the child's cpu seconds (user + system, from wait4: the steadier figure on a shared machine).
The interpreter alone (`python -c pass`) is timed too: the floor no command can go under. With --commands,
`ctxrobust COMMAND --help` is timed for every command as well (those whose flags are made from the datasets'
options models import those models). It measures; it passes or fails nothing.

    .venv/bin/python bench/cli_startup.py [--runs 20] [--commands] [--quick]

--quick (or BENCH_QUICK=1) runs each command 3 times: it checks that the bench still runs, not the figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(command: list[str]) -> tuple[float, float, int]:
    """(wall seconds, cpu seconds of this child alone (wait4), exit code); its output is thrown away."""
    started = time.perf_counter()
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, child.returncode


def spread(values: list[float]) -> str:
    return f"{min(values):6.3f} {statistics.median(values):6.3f} {max(values):6.3f}"


def ctxrobust_command() -> list[str]:
    """The installed `ctxrobust` script beside this interpreter (what a user runs), else `python -m ctxrobust.cli`."""
    script = Path(sys.executable).parent / "ctxrobust"
    if script.is_file():
        return [str(script)]
    found = shutil.which("ctxrobust")
    return [found] if found else [sys.executable, "-m", "ctxrobust.cli"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="counted runs of each command (default: %(default)s)")
    parser.add_argument("--commands", action="store_true", help="also time `ctxrobust COMMAND --help` for every command")
    parser.add_argument("--quick", action="store_true", help="3 runs of each command (also BENCH_QUICK=1)")
    args = parser.parse_args()
    quick = args.quick or os.environ.get("BENCH_QUICK") == "1"
    runs = 3 if quick else max(1, args.runs)
    ctxrobust = ctxrobust_command()
    cases = {"python -c pass (the floor)": [sys.executable, "-c", "pass"]}
    cases["ctxrobust --version"] = [*ctxrobust, "--version"]
    cases["ctxrobust --help"] = [*ctxrobust, "--help"]
    if args.commands:
        sys.path.insert(0, str(ROOT))
        from ctxrobust.cli import COMMANDS

        cases.update({f"ctxrobust {name} --help": [*ctxrobust, name, "--help"] for name in COMMANDS})
    print(f"{runs} run(s) each after one warm-up; seconds as min median max")
    print(f"{'':34s} {'wall':^20s}   {'cpu':^20s}")
    for label, command in cases.items():
        walls, cpus = [], []
        for n in range(runs + 1):
            wall, cpu, code = timed(command)
            if code != 0:
                print(f"error: {' '.join(command)} exited with {code}", file=sys.stderr)
                return 1
            if n:  # the first run warms the file cache and is not counted
                walls.append(wall)
                cpus.append(cpu)
        print(f"{label:34s} {spread(walls)}   {spread(cpus)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
