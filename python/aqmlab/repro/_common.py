"""Shared machinery of the reproductions: jobs, parallel runs, TOML, checks, report, output.

A reproduction builds :class:`Job` s (one scenario and seed each), runs them with
:func:`run_jobs` (in worker processes; a progress bar on a terminal), reduces the results to the
paper's metrics and returns a :class:`Repro` that :func:`write_repro` writes to a folder:

``scenarios/CASE.toml`` (rerun one case with ``aqmlab run``; files the scenarios name, such as
PAQMAN's policies, beside them), ``runs/CASE/seed-N/`` (each run's ``summary.json`` and its
normalized ``scenario.toml``, from which ``aqmlab run`` reproduces it), the figures (PNG),
``report.md`` and
``repro.json`` = ``{"paper", "quick", "cases": {CASE: {metric: value}}, "checks": [...]}``.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from aqmlab.protocol import Result, new_axes, plotted
from aqmlab.toml import to_toml

__all__ = [
    "Job",
    "Run",
    "Repro",
    "CHECK_KEYS",
    "check",
    "check_source",
    "mean_std",
    "source_text",
    "run_jobs",
    "to_toml",
    "write_repro",
    "VERDICTS",
]

VERDICTS = ("reproduced", "not reproduced", "not comparable")


# --- running ---------------------------------------------------------------------------------------
@dataclass
class Job:
    """One simulation: ``case`` name, ``seed`` and the scenario (a plain dict)."""

    case: str
    seed: int
    scenario: dict[str, Any]


@dataclass
class Run:
    """The reduced result of one job: the summary's links, per-flow goodputs and the time
    series of every monitored link (``{link: {column: numpy array}}``)."""

    case: str
    seed: int
    links: dict[str, dict[str, Any]]
    warmup_s: float
    sim_seconds: float
    wall_seconds: float
    goodputs_bps: list[float]
    ts: dict[str, dict[str, np.ndarray]]
    flows: list[dict[str, Any]] = field(default_factory=list)  # summary.json's flows
    extra: dict[str, Any] = field(default_factory=dict)  # SimResult.extra (sqm_controller.json)
    summary: dict[str, Any] = field(default_factory=dict)  # the whole summary.json


def _run_one(job: Job) -> Run:
    from aqmlab.sim import simulate

    res = simulate(job.scenario, seed=job.seed)
    s = res.summary
    cols = res.columns["timeseries"]
    names = list(cols["link"])
    ts: dict[str, dict[str, np.ndarray]] = {}
    keep = (
        "time_s",
        "queue_pkts",
        "queue_delay_ms_mean",
        "arrivals",
        "drops",
        "marks",
        "throughput_bps",
    )
    arr = {k: np.asarray(cols[k]) for k in keep}
    names_arr = np.asarray(names)
    for link in dict.fromkeys(names):
        sel = names_arr == link
        ts[link] = {k: arr[k][sel] for k in keep}
    return Run(
        case=job.case,
        seed=job.seed,
        links=s["links"],
        warmup_s=float(s.get("warmup_s", 0.0)),
        sim_seconds=float(s["sim_seconds"]),
        wall_seconds=float(s.get("wall_seconds", 0.0)),
        goodputs_bps=[float(f["goodput_bps"]) for f in s["flows"] if f["kind"] == "tcp"],
        ts=ts,
        flows=s["flows"],
        extra=res.extra,
        summary=s,
    )


def _workers() -> int:
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    return max(1, min(n, 8))


def run_jobs(jobs: list[Job], label: str, workers: int | None = None) -> dict[str, list[Run]]:
    """Run every job (in worker processes when there are several cores), showing a progress
    bar on a terminal. Returns ``{case: [Run, ...]}`` ordered by seed."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    n = workers or _workers()
    out: dict[str, list[Run]] = {j.case: [] for j in jobs}
    prog = Progress(
        TextColumn(f"{label:<6}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("runs"),
        TimeElapsedColumn(),
        disable=not sys.stderr.isatty(),
    )
    with prog:
        task = prog.add_task(label, total=len(jobs))
        if n == 1 or len(jobs) == 1:
            for j in jobs:
                out[j.case].append(_run_one(j))
                prog.advance(task)
        else:
            import multiprocessing as mp

            with ProcessPoolExecutor(max_workers=n, mp_context=mp.get_context("spawn")) as ex:
                futs = [ex.submit(_run_one, j) for j in jobs]
                for f in as_completed(futs):
                    r = f.result()
                    out[r.case].append(r)
                    prog.advance(task)
    for runs in out.values():
        runs.sort(key=lambda r: r.seed)
    return out


# --- metrics helpers -------------------------------------------------------------------------------
def mean_std(values) -> tuple[float, float]:
    v = np.asarray(list(values), dtype=float)
    if v.size == 0:
        return float("nan"), float("nan")
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0


def binned(t: np.ndarray, y: np.ndarray, width: float, how: str = "mean"):
    """``y`` over consecutive bins of ``width`` seconds: (bin centres, mean or sum per bin)."""
    if len(t) == 0:
        return np.array([]), np.array([])
    idx = np.floor(t / width).astype(int)
    n = idx.max() + 1
    s = np.bincount(idx, weights=y, minlength=n)
    if how == "sum":
        return (np.arange(n) + 0.5) * width, s
    c = np.bincount(idx, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (np.arange(n) + 0.5) * width, s / np.maximum(c, 1)


# --- checks and the result -------------------------------------------------------------------------
def check(
    claim: str,
    paper: str,
    ours: str,
    verdict: str,
    why: str,
    *,
    id: str,
    source: dict[str, Any],
    rule: str = "",
    **extra: Any,
) -> dict[str, Any]:
    """One row of the report's comparison: the paper's number beside ours with a verdict.

    Parameters
    ----------
    claim : str
        What the paper claims, in a few words.
    paper : str
        The paper's number or statement.
    ours : str
        What we measured.
    verdict : str
        One of :data:`VERDICTS`.
    why : str
        The reason for the verdict a reader can check: which measurement, which decision of
        ours, which sensitivity run (not the pass rule).
    id : str
        A stable identifier.
    source : dict
        Where the paper says it (:func:`check_source`): ``{"where": ..., "quote": ...}`` and/or
        ``"value"``.
    rule : str
        The pass rule and its tolerance (how the verdict is computed from the numbers).
    **extra
        Further per-check fields (e.g. another simulator's number), kept in ``repro.json``.

    Returns
    -------
    dict
    """
    if verdict not in VERDICTS:
        raise ValueError(f"verdict = {verdict!r}: one of {', '.join(VERDICTS)}")
    check_source(source, id)
    if not why.strip():
        raise ValueError(f"why = {why!r}: check {id} needs the reason for its verdict")
    row = {
        "id": id,
        "claim": claim,
        "source": dict(source),
        "paper": paper,
        "ours": ours,
        "verdict": verdict,
        "why": why,
        "rule": rule,
    }
    row.update(extra)
    return row


#: The keys every check has (``repro.json``); further keys may follow (:func:`check`'s extra).
CHECK_KEYS = ("id", "claim", "source", "paper", "ours", "verdict", "why", "rule")


def check_source(source: Any, id: str = "?") -> None:
    """Validate a check's ``source``: a dict with a non-empty ``where`` (section, figure,
    table or equation of the paper) and a non-empty ``quote`` (the paper's words, at most
    ~20 words) or a ``value`` (the paper's exact number), or both.

    Parameters
    ----------
    source : Any
        The candidate.
    id : str
        The check's id (for the message).

    Raises
    ------
    ValueError
        ``source = ...: reason`` when it does not follow the schema.
    """
    if not isinstance(source, dict):
        raise ValueError(f"source = {source!r}: check {id} needs a dict with 'where'")
    unknown = set(source) - {"where", "quote", "value"}
    if unknown:
        raise ValueError(f"source = {source!r}: check {id} has unknown keys {sorted(unknown)}")
    where = source.get("where")
    if not isinstance(where, str) or not where.strip():
        raise ValueError(f"source = {source!r}: check {id} needs a non-empty 'where'")
    quote = source.get("quote")
    value = source.get("value")
    has_quote = isinstance(quote, str) and bool(quote.strip())
    has_value = isinstance(value, int | float | str) and not isinstance(value, bool)
    if quote is not None and not has_quote:
        raise ValueError(f"source = {source!r}: check {id}: 'quote' must be a non-empty string")
    if not (has_quote or has_value):
        raise ValueError(f"source = {source!r}: check {id} needs a 'quote' or a 'value'")
    if has_quote and len(quote.split()) > 30:
        raise ValueError(f"source = {source!r}: check {id}: quote longer than 30 words")


def source_text(source: dict[str, Any]) -> str:
    """A source in one line: ``where: "quote" (value)``.

    Parameters
    ----------
    source : dict
        A check's ``source``.

    Returns
    -------
    str
    """
    out = source["where"]
    if source.get("quote"):
        out += f': "{source["quote"]}"'
    if "value" in source and not (source.get("quote") and str(source["value"]) in source["quote"]):
        out += f" ({source['value']})"
    return out


@dataclass(repr=False)
class Repro(Result):
    """What a reproduction produced (see the module docstring for the files), with the result
    protocol of :mod:`aqmlab.protocol`: ``to_pandas()`` gives the ``cases`` and ``checks``
    tables, ``to_dict()`` the ``repro.json`` content, ``plot()`` the checks by verdict;
    :func:`write_repro` writes the folder.

    Attributes
    ----------
    paper, title : str
        The reproduction's name and the paper.
    quick : bool
        The reduced mode ran.
    cases : dict
        Case name to its metrics.
    checks : list of dict
        The paper's numbers beside ours (:func:`check`).
    scenarios : dict
        Case name to its scenario.
    figures : dict
        File name to matplotlib Figure.
    sections : list of tuple
        ``(heading, markdown)`` of the report's further sections.
    wall_seconds : float
        Wall-clock time of the run.
    seeds : list of int
        The seeds every case ran with.
    rerun : str or None
        Replaces the report's "rerun with aqmlab run" sentence.
    files : dict
        ``scenarios/NAME`` to text (files the scenarios read, e.g. policies).
    runs : dict
        Case name to its runs (written to ``runs/``).
    reference : str
        The paper's full reference (authors, title, venue, year), the report's first line.
    ns2 : dict or None
        The ns-2 cross-check (:func:`aqmlab.repro.ns2.attach`), else None.
    """

    paper: str
    title: str
    quick: bool
    cases: dict[str, dict[str, float]]
    checks: list[dict[str, Any]]
    scenarios: dict[str, dict[str, Any]]
    figures: dict[str, Any] = field(default_factory=dict)  # file name -> matplotlib Figure
    sections: list[tuple[str, str]] = field(default_factory=list)  # (heading, markdown)
    wall_seconds: float = 0.0
    seeds: list[int] = field(default_factory=list)
    rerun: str | None = None  # replaces the report's "rerun with aqmlab run" sentence
    files: dict[str, str] = field(default_factory=dict)  # scenarios/NAME -> text (e.g. policies)
    runs: dict[str, list[Run]] = field(default_factory=dict)  # every run, written to runs/
    reference: str = ""  # authors, "title", venue, year
    # --- ns2 hook: set by aqmlab.repro.ns2.attach (`aqmlab repro NAME --ns2`) ---
    ns2: dict[str, Any] | None = None  # repro.json's "ns2": version, cases, skipped, seeds

    def _figures(self) -> dict[str, Any]:
        out: dict[str, Any] = {"paper": self.paper, "quick": self.quick, "cases": len(self.cases)}
        for v in VERDICTS:
            out[v] = sum(c["verdict"] == v for c in self.checks)
        return out

    def to_pandas(self):
        """``{"cases": one row per case and a column per metric, "checks": one row per
        check (id, claim, source, paper, ours, verdict, why, rule and any further fields; the
        source as one line)}``.

        Returns
        -------
        dict of str to pandas.DataFrame
        """
        import pandas as pd

        cases = pd.DataFrame.from_dict(self.cases, orient="index")
        cases.index.name = "case"
        cols = list(dict.fromkeys([*CHECK_KEYS, *(k for c in self.checks for k in c)]))
        rows = [{**c, "source": source_text(c["source"])} for c in self.checks]
        checks = pd.DataFrame(rows, columns=cols)
        return {"cases": cases, "checks": checks}

    def to_dict(self) -> dict[str, Any]:
        """The ``repro.json`` content (:meth:`to_json`).

        Returns
        -------
        dict
        """
        return self.to_json()

    def plot(self, ax=None):
        """How many of the paper's claims were reproduced, not reproduced or not comparable.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; without it, a new Figure.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        fig, axes = new_axes(ax, figsize=(5, 2.5))
        counts = [sum(c["verdict"] == v for c in self.checks) for v in VERDICTS]
        axes.barh(list(VERDICTS), counts, color=["tab:green", "tab:red", "tab:gray"])
        axes.set_xlabel("checks")
        axes.set_title(self.title, fontsize=8)
        return plotted(fig, ax)

    def to_json(self) -> dict[str, Any]:
        """``repro.json``: ``paper``, ``quick``, ``cases`` (non-finite values as None),
        ``checks``.

        Returns
        -------
        dict
        """

        def clean(x):
            if isinstance(x, float) and not math.isfinite(x):
                return None
            return x

        out = {
            "paper": self.paper,
            "quick": self.quick,
            "cases": {c: {k: clean(v) for k, v in m.items()} for c, m in self.cases.items()},
            "checks": self.checks,
        }
        if self.ns2 is not None:  # ns2 hook
            out["ns2"] = self.ns2
        return out

    def report(self) -> str:
        """``report.md``: the paper's numbers beside ours, the sections, the cases table and
        the figures.

        Returns
        -------
        str
            Markdown.
        """
        mode = "quick (reduced: fewer seeds, shorter runs)" if self.quick else "full"
        md = [f"# Reproduction: {self.title}", ""]
        if self.reference:
            md += [f"Paper: {self.reference}", ""]
        rerun = self.rerun or (
            "Every case's scenario is in `scenarios/` "
            "(`aqmlab run scenarios/CASE.toml --out DIR`, `--seed N` for the other seeds)."
        )
        seeds = f"seeds {', '.join(map(str, self.seeds))}; " if self.seeds else ""
        md.append(
            f"Mode: **{mode}**; {seeds}"
            f"wall time {self.wall_seconds:.0f} s. Generated by `aqmlab repro {self.paper}"
            f"{' --quick' if self.quick else ''}`. {rerun}"
        )
        counts = ", ".join(f"{sum(c['verdict'] == v for c in self.checks)} {v}" for v in VERDICTS)
        md += ["", "## Claims", "", f"{len(self.checks)} claims: {counts}.", ""]
        ns2 = self.ns2 is not None  # ns2 hook: the ns-2 figure and verdict of each check
        md.append(
            "| claim | source | paper | ours | verdict |" + (" ns-2 |" if ns2 else "") + " why |"
        )
        md.append("| --- | --- | --- | --- | --- |" + (" --- |" if ns2 else "") + " --- |")
        for c in self.checks:
            cells = [
                c["claim"],
                source_text(c["source"]),
                c["paper"],
                c["ours"],
                f"**{c['verdict']}**",
                c["why"],
            ]
            if ns2:
                n = c.get("ns2")
                cells.insert(5, f"{n['ns2']} (**{n['verdict']}**)" if n else "-")
            md.append("| " + " | ".join(_cell(s) for s in cells) + " |")
        rules = [c for c in self.checks if c.get("rule")]
        if rules:
            md += ["", "Pass rules (how each verdict is computed from the numbers):", ""]
            md += [f"* {c['claim']}: {c['rule']}" for c in rules]
        for head, body in self.sections:
            md += ["", f"## {head}", "", body.strip()]
        md += ["", "## Cases", ""]
        metrics = list(dict.fromkeys(k for m in self.cases.values() for k in m))
        md.append("| case | " + " | ".join(metrics) + " |")
        md.append("| --- |" + " --- |" * len(metrics))
        for case, m in self.cases.items():
            vals = [_fmt(m.get(k)) for k in metrics]
            md.append(f"| {case} | " + " | ".join(vals) + " |")
        if self.figures:
            md += ["", "## Figures", ""]
            for name in self.figures:
                md.append(f"![{name}]({name})")
                md.append("")
        return "\n".join(md).rstrip() + "\n"


def _cell(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)


def write_repro(rep: Repro, out: str | os.PathLike[str], force: bool = False) -> Path:
    """Write a reproduction's files into ``out`` through :mod:`aqmlab.output`.

    Parameters
    ----------
    rep : Repro
        The reproduction.
    out : path-like
        The output folder.
    force : bool
        Replace ``out`` even if it holds files aqmlab did not write.

    Returns
    -------
    Path
    """
    import matplotlib.pyplot as plt

    from aqmlab.output import output_dir

    with output_dir(out, force=force, command=f"repro {rep.paper}") as tmp:
        sc = tmp / "scenarios"
        sc.mkdir()
        for case, data in rep.scenarios.items():
            (sc / f"{case}.toml").write_text(to_toml(data))
        for name, text in rep.files.items():  # files the scenarios name (relative paths)
            (sc / name).write_text(text)
        _write_runs(rep, tmp)
        for name, fig in rep.figures.items():
            fig.savefig(tmp / name, dpi=110)
            plt.close(fig)
        (tmp / "report.md").write_text(rep.report())
        (tmp / "repro.json").write_text(json.dumps(rep.to_json(), indent=2) + "\n")
    return Path(out)


def _write_runs(rep: Repro, tmp: Path) -> None:
    """Every run as a result folder of its own, ``runs/CASE/seed-N/``: its ``summary.json``
    and the normalized ``scenario.toml`` (with the files it reads beside it), from which
    ``aqmlab run`` reproduces that summary."""
    from aqmlab.results import write_scenario
    from aqmlab.scenario import _resolve_files, parse_scenario

    for case, runs in rep.runs.items():
        for run in runs:
            if run.case != case:  # a case that reused an identical case's runs
                continue
            # a case's scenario, or one per case and seed (when the seed draws the set-up)
            given = rep.scenarios.get(f"{case}-seed{run.seed}", rep.scenarios.get(case))
            if given is None:
                continue
            d = tmp / "runs" / case / f"seed-{run.seed}"
            d.mkdir(parents=True)
            data = {**json.loads(json.dumps(given)), "seed": run.seed}
            _resolve_files(data, tmp / "scenarios")
            write_scenario(parse_scenario(data), d)
            (d / "summary.json").write_text(json.dumps(run.summary, indent=2) + "\n")


def timed(fn: Callable[[], Repro]) -> Repro:
    t0 = time.perf_counter()
    rep = fn()
    rep.wall_seconds = time.perf_counter() - t0
    return rep
