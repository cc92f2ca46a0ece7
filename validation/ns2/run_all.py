"""Rerun the ns-2 cross-check of the reproductions: paper | ns-2 | aqmlab per case.

    make ns2                                    # Debian's ns2 (validation/ns2/install.sh)
    .venv/bin/python validation/ns2/run_all.py             # full: every case and seed (long)
    .venv/bin/python validation/ns2/run_all.py --quick     # the quick reproductions' cases
    .venv/bin/python validation/ns2/run_all.py --paper ktl # one paper
    .venv/bin/python validation/ns2/run_all.py --workers 1 # one ns-2 process at a time

For each paper it runs ``aqmlab.repro.run(PAPER, quick, ns2=True)`` (aqmlab's reproduction,
then every case ns-2 can host over the same seeds) and writes ``results/PAPER[-quick].json``
(aqmlab's and ns-2's case means, the checks with their ns-2 verdicts, the cases left out) and
the generated tables of ``RESULTS.md`` (between the ``tables`` markers; the text around them is
written by hand). ``--tables-only`` regenerates the tables from the JSON files.

Every ns-2 run's metrics are kept in ``results/cases/PAPER/CASE-seedSEED-KEY.json`` as soon as
the run ends (KEY hashes the generated configuration and ``dumbbell.tcl``,
:func:`aqmlab.repro.ns2.case_key`) and reused when present, so an interrupted run continues
where it stopped (aqmlab's side, seconds to minutes, runs again). ``--fresh`` ignores them.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
CASES = RESULTS / "cases"
BEGIN, END = "<!-- tables:begin (run_all.py) -->", "<!-- tables:end -->"

#: the papers' own figures per case and metric (where the paper states one for that case)
PAPER = {
    "ktl": {  # Kim, Tang & Low, GLOBECOM 2003, §III (experiments A and B)
        ("A-redlike", "mean_queue_pkts"): "434.8",
        ("A-pd", "mean_queue_pkts"): "205.3",
        ("A-redlike", "utilization"): "0.93",
        ("A-pd", "utilization"): "0.95",
        ("B-memoryless", "utilization"): "0.83",
        ("B-memory", "utilization"): "0.91",
        ("B-memory", "mean_queue_pkts"): "≈ 200 (figure)",
    },
    "sfc": {  # Gao & Hou, §VII (Figs. 8-14; numbers read from the text)
        ("A-200-sfc", "utilization"): "≈ 1",
        ("A-200-sfc", "mean_queue_pkts"): "≈ 50",
        ("A-200-pi", "mean_queue_pkts"): "≈ 50",
        ("A-200-sfc", "loss"): "up to 50 % below the others",
    },
    "edc": {  # Suzer, Kang & Basaran 2011, §4.3 (Figs. 6-9)
        ("LL-red", "mean_queue_pkts"): "150-300",
        ("LL-red", "drops_per_s"): "≈ 30",
        ("HH-red", "drops_per_s"): "≈ 350",
        ("LL-pi", "mean_queue_pkts"): "≈ 200 (figure)",
        ("HH-pi", "mean_queue_pkts"): "≈ 800 (figure)",
        ("LL-pi", "drops_per_s"): "≈ 50",
        ("LL-red", "mean_e2e_delay_ms"): "≈ 750",
        ("LL-pi", "mean_e2e_delay_ms"): "≈ 500",
    },
}


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def run_paper(paper: str, quick: bool, workers: int = 2) -> dict:
    """aqmlab's reproduction with the ns-2 column (each ns-2 run kept in results/cases/ and
    reused); the JSON record written to results/."""
    from aqmlab.repro import PAPERS
    from aqmlab.repro.ns2 import attach

    t0 = time.perf_counter()
    rep = importlib.import_module(PAPERS[paper][0]).run(quick=quick)
    attach(rep, workers=workers, cache=CASES)
    return {
        "paper": paper,
        "quick": quick,
        "wall_seconds": round(time.perf_counter() - t0, 1),
        "aqmlab": {c: rep.cases[c] for c in rep.ns2["cases"]},
        "ns2": rep.ns2,
        "checks": [c for c in rep.checks if "ns2" in c],
    }


def tables(records: list[dict]) -> str:
    """The generated part of RESULTS.md: per paper, the checks ns-2 can judge and every case."""
    md = []
    for rec in records:
        p = rec["paper"]
        mode = "quick" if rec["quick"] else "full"
        ns2 = rec["ns2"]
        seeds = sorted({len(s) for s in ns2["seeds"].values()})
        md += [
            f"### {p} ({mode}; ns-2 {ns2['version']}; {'/'.join(map(str, seeds))} seeds per case; "
            f"{rec['wall_seconds']:.0f} s)",
            "",
            "| check | paper | aqmlab | verdict | ns-2 | ns-2 verdict |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for c in rec["checks"]:
            cells = [
                c["claim"],
                c["paper"],
                c["ours"],
                c["verdict"],
                c["ns2"]["ns2"],
                c["ns2"]["verdict"],
            ]
            md.append("| " + " | ".join(s.replace("|", "\\|") for s in cells) + " |")
        md += ["", "| case | metric | paper | ns-2 | aqmlab | ns-2 / aqmlab |", "| --- |" * 1]
        md[-1] = "| --- | --- | --- | --- | --- | --- |"
        for case, m in ns2["cases"].items():
            for k, v in m.items():
                a = rec["aqmlab"].get(case, {}).get(k)
                ratio = (
                    f"{v / a:.2f}"
                    if isinstance(v, float) and isinstance(a, float) and a not in (0.0,)
                    else "-"
                )
                paper = PAPER.get(p, {}).get((case, k), "-")
                md.append(f"| {case} | {k} | {paper} | {_fmt(v)} | {_fmt(a)} | {ratio} |")
        if ns2["skipped"]:
            md += [
                "",
                "Not run in ns-2: " + "; ".join(f"{c} ({w})" for c, w in ns2["skipped"].items()),
            ]
        md.append("")
    return "\n".join(md)


def write_tables(records: list[dict]) -> None:
    """Replace the generated part of RESULTS.md."""
    path = HERE / "RESULTS.md"
    text = path.read_text() if path.exists() else f"# ns-2 cross-check\n\n{BEGIN}\n{END}\n"
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(head + BEGIN + "\n\n" + tables(records) + "\n" + END + tail)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="the quick reproductions' cases")
    ap.add_argument("--paper", default="ktl,sfc,edc", help="comma-separated: ktl, sfc, edc")
    ap.add_argument("--tables-only", action="store_true", help="regenerate RESULTS.md's tables")
    ap.add_argument("--workers", type=int, default=2, help="parallel ns-2 processes (default 2)")
    ap.add_argument(
        "--fresh", action="store_true", help="rerun the ns-2 runs kept in results/cases"
    )
    a = ap.parse_args(argv)
    if a.workers < 1:
        print(f"error: --workers = {a.workers}: must be at least 1", file=sys.stderr)
        return 2
    papers = [p for p in a.paper.split(",") if p]
    for p in papers:
        if p not in ("ktl", "sfc", "edc"):
            print(f"error: --paper = {p}: one of ktl, sfc, edc", file=sys.stderr)
            return 2
    if not a.tables_only:
        from aqmlab.repro.ns2 import available

        if why := available():
            print(f"error: {why}", file=sys.stderr)
            return 2
        RESULTS.mkdir(exist_ok=True)
        for p in papers:
            if a.fresh:
                shutil.rmtree(CASES / p, ignore_errors=True)
            rec = run_paper(p, a.quick, a.workers)
            name = f"{p}{'-quick' if a.quick else ''}.json"
            (RESULTS / name).write_text(json.dumps(rec, indent=1, ensure_ascii=False) + "\n")
            print(f"{p}: {len(rec['ns2']['cases'])} cases in ns-2 ({rec['wall_seconds']:.0f} s)")
    from aqmlab.repro.ns2 import CHECKS, _verdict

    records = []
    for p in ("ktl", "sfc", "edc"):  # the full run where there is one, else the quick one
        for name in (f"{p}.json", f"{p}-quick.json"):
            if (RESULTS / name).exists():
                rec = json.loads((RESULTS / name).read_text())
                # the ns-2 figures and verdicts from the stored ns-2 cases, by today's rules
                judged = CHECKS[p](rec["ns2"]["cases"])
                for c in rec["checks"]:
                    if c["id"] in judged:
                        fig, ok = judged[c["id"]]
                        c["ns2"] = {"ns2": fig, "verdict": _verdict(ok)}
                (RESULTS / name).write_text(json.dumps(rec, indent=1, ensure_ascii=False) + "\n")
                records.append(rec)
                break
    write_tables(records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
