#!/usr/bin/env python3
"""What the command line adds to a run: ``aqmlab dumbbell`` with its defaults, timed
from the shell, minus the simulation's own wall time (``wall_seconds`` in the summary.json it
writes, the event loop and the recorders). The rest is the interpreter, imports, the results
files and the table.

Three variants, each run ``--repeat`` times (default 5) in fresh processes, median counted:

  full      ``aqmlab dumbbell --out DIR`` (summary.json, Parquet, queue.png, table)
  no-plots  the same with ``--no-plots`` (no matplotlib)
  help      ``aqmlab dumbbell --help`` (interpreter and the CLI's own imports only)

Bar: the full command adds < 0.5 s to the simulation. The no-plots figure is printed beside it
to separate the figure's share (matplotlib's import, drawing and PNG encoding) from the rest.
The figure (the Parquet files with --no-plots) is written by a second process that the command
forks when it starts (aqmlab.forked), so the wall times need a free core: the cpu column (the
command's CPU seconds, its worker's included) shows the work, which does not depend on it.
Exit status 0 = PASS, 1 = FAIL, 2 = cannot run.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BAR_S = 0.5


def _aqmlab() -> str | None:
    exe = Path(sys.executable).with_name("aqmlab")
    return str(exe) if exe.exists() else shutil.which("aqmlab")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _time(cmd: list[str], out: Path | None) -> tuple[float, float, float]:
    """(wall seconds of the command, the simulation's wall seconds from its summary, CPU
    seconds of the command and the processes it waited for)."""
    c0 = _cpu()
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    cpu = _cpu() - c0
    sim = 0.0
    if out is not None:
        sim = json.loads((out / "summary.json").read_text())["wall_seconds"]
    return wall, sim, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    exe = _aqmlab()
    if exe is None:
        print("bench_cli: the aqmlab command is not installed (run make build)")
        return 2
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, extra in (("full", []), ("no-plots", ["--no-plots"]), ("help", None)):
            walls, sims, cpus = [], [], []
            for i in range(a.repeat):
                if extra is None:
                    w, s, c = _time([exe, "dumbbell", "--help"], None)
                else:
                    out = Path(tmp) / f"{name}-{i}"
                    w, s, c = _time([exe, "dumbbell", "--out", str(out), *extra], out)
                walls.append(w)
                sims.append(s)
                cpus.append(c)
            rows[name] = tuple(statistics.median(v) for v in (walls, sims, cpus))
    print(
        f"{'variant':<10} {'wall [s]':>9} {'simulation [s]':>15} {'added [s]':>10} {'cpu [s]':>8}"
    )
    for name, (w, s, c) in rows.items():
        print(f"{name:<10} {w:>9.3f} {s:>15.3f} {w - s:>10.3f} {c:>8.3f}")
    added = rows["full"][0] - rows["full"][1]
    figure = rows["full"][0] - rows["no-plots"][0]
    print(f"figure's share: {figure:.3f} s; interpreter and CLI imports: {rows['help'][0]:.3f} s")
    ok = added < BAR_S
    print(f"bar: the command adds < {BAR_S} s: {added:.3f} s -> {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
