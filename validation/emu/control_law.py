"""One-change experiment on the grid's CoDel and FQ-CoDel rows: CoDel's control law.

aqmlab's CoDel follows Linux's arithmetic by default (``control_law = "linux"``,
docs/aqm/codel.md): a 16-bit reciprocal square root advanced by one Newton step each time
``count`` changes. FQ-CoDel also adds the packets of an overflow batch to the fat flow's
``count`` (Linux ``fq_codel_drop``: ``flow->cvars.count += i``) without a step, and a
dropping state re-entered within 16 intervals resumes at ``count - lastcount``: one Newton
step from a root computed for a much smaller count then wraps (``count * y^2 > 3``) and leaves
a spacing far below ``interval / sqrt(count)``. CoDel then marks or drops every packet it
dequeues until it leaves the dropping state. The AQM is the same code on both sides of the
grid (the emulator's forwarder runs it), so both see these bursts; what they test is how the
senders answer them.

The one change: ``control_law = "rfc"`` (RFC 8289's exact square root) on both sides, the
rest of the row as the grid has it::

    .venv/bin/python validation/emu/control_law.py --screen            # simulator only, seconds
    sudo .venv/bin/python validation/emu/control_law.py --seeds 1,2,3  # both sides, minutes
    .venv/bin/python validation/emu/control_law.py --summarise validation/emu/control_law.jsonl
    .venv/bin/python validation/emu/control_law.py --resim validation/emu/control_law.jsonl

``--screen`` simulates every CoDel and FQ-CoDel row of the grid (seed 1) under both laws and
prints the rows whose signals (marks and drops at the bottleneck) differ by more than a
factor 2 between them. The run emulates and simulates those rows with the ``rfc`` law and
appends one JSON line per run (row, seed, the grid's measures of both sides);
``--summarise`` sets them beside the grid's own runs (``grid-seed*.jsonl``, the ``linux``
law) and counts the bars each variant meets; ``--resim`` computes their simulated side
again after a simulator change.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import grid  # noqa: E402

#: Signals (marks + drops) differing by more than this factor between the laws: a row the
#: law moves.
FACTOR = 2.0


def scenario(row: dict, seed: int, sim: bool, law: str) -> dict:
    """The grid's scenario of ``row`` with CoDel's control law ``law``."""
    d = grid.scenario_dict(row, seed, sim)
    d["aqm"]["control_law"] = law
    return d


def screen() -> list[str]:
    """Rows of the grid whose signals the law changes by more than ``FACTOR`` (seed 1)."""
    from aqmlab.scenario import Scenario
    from aqmlab.sim import simulate

    moved = []
    print("| row | signals linux | signals rfc | util linux / rfc [%] |")
    print("|---|---|---|---|")
    for row in grid.rows():
        if row["aqm"] not in ("codel", "fq_codel"):
            continue
        m = {}
        for law in ("linux", "rfc"):
            m[law] = grid.measures(simulate(Scenario(scenario(row, 1, True, law))).summary)
        sig = {k: v["marks"] + v["drops"] for k, v in m.items()}
        lo, hi = sorted(sig.values())
        if hi > FACTOR * max(lo, 1):
            moved.append(row["name"])
            print(
                f"| {row['name']} | {sig['linux']} | {sig['rfc']} | "
                f"{100 * m['linux']['util']:.1f} / {100 * m['rfc']['util']:.1f} |",
                flush=True,
            )
    print(f"\n{len(moved)} rows moved by the law")
    return moved


def run(rows: list[str], seeds: list[int], out: Path) -> None:
    """Emulates and simulates ``rows`` with the ``rfc`` law, appending to ``out``."""
    from aqmlab.emu import emulate
    from aqmlab.scenario import Scenario
    from aqmlab.sim import simulate

    by_name = {r["name"]: r for r in grid.rows()}
    todo = [(r, s) for s in seeds for r in rows]
    with out.open("a") as f:
        for i, (name, seed) in enumerate(todo, 1):
            t0 = time.time()
            row = by_name[name]
            s = grid.measures(simulate(Scenario(scenario(row, seed, True, "rfc"))).summary)
            e = grid.measures(emulate(Scenario(scenario(row, seed, False, "rfc"))).summary)
            rec = {"row": name, "seed": seed, "law": "rfc", "sim": s, "emu": e}
            f.write(json.dumps(rec) + "\n")
            f.flush()
            print(
                f"[{i}/{len(todo)}] {name} seed {seed}: util {100 * s['util']:.1f} / "
                f"{100 * e['util']:.1f} %, signals {s['marks'] + s['drops']} / "
                f"{e['marks'] + e['drops']} ({time.time() - t0:.0f} s)",
                flush=True,
            )


def resim(path: Path) -> None:
    """Simulates the stored ``rfc`` runs again (after a simulator change), keeping their
    emulated side, as ``grid.py --resim`` does for the grid."""
    from aqmlab.scenario import Scenario
    from aqmlab.sim import simulate

    by_name = {r["name"]: r for r in grid.rows()}
    out = []
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            sc = Scenario(scenario(by_name[r["row"]], r["seed"], True, r["law"]))
            r["sim"] = grid.measures(simulate(sc).summary)
            out.append(json.dumps(r))
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(out) + "\n")
    tmp.replace(path)
    print(f"{path.name}: {len(out)} runs simulated again", flush=True)


def summarise(path: Path) -> None:
    """The ``rfc`` runs beside the grid's (``linux``) runs of the same rows and seeds."""
    rfc = grid.runs_by_row(path)
    base = grid.stored_runs()
    print(
        "| row | law | seeds | util sim / emu [%] | delay sim / emu [ms] | signals sim / emu |"
        " retx per 1000 sim / emu | misses |"
    )
    print("|---|---|---|---|---|---|---|---|")
    within = {"linux": 0, "rfc": 0}
    for name, rs in rfc.items():
        seeds = {r["seed"] for r in rs}
        variants = {"linux": [base[(name, s)] for s in sorted(seeds) if (name, s) in base],
                    "rfc": rs}  # fmt: skip
        for law, runs in variants.items():
            if not runs:
                continue
            n = len(runs)

            def mean(side: str, f, runs: list[dict] = runs, n: int = n) -> float:
                return sum(f(r[side]) for r in runs) / n

            misses = grid.misses(runs)
            within[law] += not misses
            print(
                f"| {name} | {law} | {n} | {mean('sim', lambda m: 100 * m['util']):.1f} / "
                f"{mean('emu', lambda m: 100 * m['util']):.1f} | "
                f"{mean('sim', lambda m: m['delay_ms']):.2f} / "
                f"{mean('emu', lambda m: m['delay_ms']):.2f} | "
                f"{mean('sim', lambda m: m['marks'] + m['drops']):.0f} / "
                f"{mean('emu', lambda m: m['marks'] + m['drops']):.0f} | "
                f"{mean('sim', lambda m: 1000 * m['retx_rate']):.2f} / "
                f"{mean('emu', lambda m: 1000 * m['retx_rate']):.2f} | "
                f"{', '.join(misses) or 'none'} |"
            )
    print(
        f"\nrows within every bar: linux {within['linux']} of {len(rfc)}, "
        f"rfc {within['rfc']} of {len(rfc)}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--screen", action="store_true", help="simulator only: rows the law moves")
    ap.add_argument("--rows", default=None, help="comma-separated row names (default: screened)")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--out", default=str(HERE / "control_law.jsonl"))
    ap.add_argument("--summarise", default=None)
    ap.add_argument("--resim", default=None, help="simulate the runs of this file again")
    a = ap.parse_args()
    if a.resim:
        resim(Path(a.resim))
        return 0
    if a.summarise:
        summarise(Path(a.summarise))
        return 0
    if a.screen:
        screen()
        return 0
    rows = a.rows.split(",") if a.rows else screen()
    run(rows, [int(s) for s in a.seeds.split(",")], Path(a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
