"""The RFC 7928 characterization suite: ``aqmlab rfc7928 --aqms A,B,... --out DIR [--quick]``.

Each guideline section is a sweep spec under ``scenarios/rfc7928/`` with an ``[rfc7928]`` table
(``section``, ``title``, the ``metrics`` its table shows, and ``[rfc7928.quick]``: fewer
``seeds`` and ``set``, overrides of the base scenario that shorten the run). The suite adds the
AQMs as the first grid key (``"aqm.type"``), runs every section as a sweep into ``DIR/<name>/``
(:func:`aqmlab.sweep.run`: resumable, one row per run) and writes ``DIR/summary.md``: per
section, the mean of each metric over the seeds with its 95 % Student-t confidence interval
(:func:`aqmlab.stats.across_seeds`). ``docs/rfc7928.md`` says what each section follows and
measures.

Derived metrics: ``loss_pct`` = 100 x bottleneck drops / arrivals of each run;
``lbe_share_pct`` = 100 x ``lbe.share`` (the LEDBAT flows' part of the goodput).
"""

from __future__ import annotations

import copy
import os
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aqmlab.protocol import Result, json_ready
from aqmlab.scenario import ScenarioError, set_key

__all__ = ["SUITE_DIR", "Section", "SuiteResult", "sections", "prepare", "run", "summary_markdown"]

#: The suite's scenario files.
SUITE_DIR = Path(__file__).resolve().parents[2] / "scenarios" / "rfc7928"
COMMAND = "rfc7928"
LINK = "links.bottleneck"


@dataclass
class Section:
    """One guideline section: its file, RFC section number, title, metrics and sweep spec.

    Attributes
    ----------
    name : str
        The section's name (its file's stem; its sweep's folder).
    path : Path
        The section's file.
    rfc_section : str
        The RFC 7928 section number.
    title : str
        The section's title.
    metrics : list of str
        The columns its table shows.
    spec : dict
        Its sweep spec (AQMs added).
    """

    name: str
    path: Path
    rfc_section: str
    title: str
    metrics: list[str]
    spec: dict[str, Any]


@dataclass(repr=False, eq=False)
class SuiteResult(Result):
    """The suite's results: per section name, its results table and statistics.

    Attributes
    ----------
    out : Path
        The suite's folder.
    tables : dict
        Section name to its results table (a sweep's ``results.parquet`` with the derived
        metrics, :func:`with_derived`).
    stats : dict
        Section name to its statistics across seeds (:func:`aqmlab.stats.across_seeds`).
    sections : list of Section
        The sections of the suite.
    """

    out: Path
    tables: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    sections: list[Section] = field(default_factory=list)

    def _figures(self) -> dict[str, Any]:
        runs = sum(len(t) for t in self.tables.values())
        failed = sum(int(t["error"].notna().sum()) for t in self.tables.values())
        return {"out": str(self.out), "sections": list(self.tables), "runs": runs, "failed": failed}

    def _tables(self) -> dict[str, Any]:
        return {f"{name} across seeds": st for name, st in self.stats.items()}

    def to_pandas(self):
        """The results tables by section name (one row per run).

        Returns
        -------
        dict of str to pandas.DataFrame
        """
        return dict(self.tables)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``out`` and, per section, its statistics across seeds (the rows of
        :attr:`stats`).

        Returns
        -------
        dict
        """
        return {
            "out": str(self.out),
            "sections": {k: json_ready(v.to_dict("records")) for k, v in self.stats.items()},
        }

    def plot(self, ax=None, section: str | None = None, metric: str | None = None):
        """One section's metric: mean and 95 % confidence interval per configuration
        (:func:`aqmlab.sweep.result.plot_across_seeds`).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; without it, a new Figure.
        section : str, optional
            The section (default: the first that ran).
        metric : str, optional
            The column (default: the section's first metric in its table).

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.

        Raises
        ------
        KeyError
            ``section`` did not run.
        """
        from aqmlab.sweep.result import plot_across_seeds

        if not self.tables:
            raise KeyError("no section ran")
        name = next(iter(self.tables)) if section is None else section
        if name not in self.tables:
            raise KeyError(f"section = {name!r}: not run (ran: {', '.join(self.tables)})")
        df = self.tables[name]
        if metric is None:
            sec = next((s for s in self.sections if s.name == name), None)
            metric = next((m for m in (sec.metrics if sec else []) if m in df.columns), None)
        return plot_across_seeds(df, metric, ax)


def _load_section(path: Path, aqms: Sequence[str], quick: bool) -> Section:
    try:
        doc = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ScenarioError(f"suite file '{path}': {e}") from None
    meta = doc.pop("rfc7928", None)
    if not isinstance(meta, dict) or not {"section", "title", "metrics"} <= set(meta):
        raise ScenarioError(
            f"suite file '{path}': needs an [rfc7928] table (section, title, metrics)"
        )
    q = meta.get("quick", {})
    base = doc.get("base")
    if quick:
        doc["seeds"] = list(q.get("seeds", doc.get("seeds", [1])))
        if isinstance(base, dict):
            base = copy.deepcopy(base)
            for k, v in q.get("set", {}).items():
                set_key(base, k, v, f"{path.name}: rfc7928.quick.set.{k} = {v!r}")
            doc["base"] = base
    doc["grid"] = {"aqm.type": list(aqms), **doc.get("grid", {})}
    doc.setdefault("name", path.stem)
    return Section(path.stem, path, str(meta["section"]), meta["title"], list(meta["metrics"]), doc)


def sections(aqms: Sequence[str], quick: bool = False, folder: Path = SUITE_DIR) -> list[Section]:
    """The suite's sections (one per file of ``folder``, in RFC section order).

    Parameters
    ----------
    aqms : sequence of str
        The AQMs (the first grid key of every section).
    quick : bool
        The reduced suite.
    folder : Path
        The folder of the section files.

    Returns
    -------
    list of Section
    """
    out = [_load_section(p, aqms, quick) for p in sorted(folder.glob("*.toml"))]
    return sorted(out, key=lambda s: [int(x) for x in s.rfc_section.split(".")])


def with_derived(df):
    """The results table with ``loss_pct`` (100 x bottleneck drops / arrivals) and, for runs
    with less-than-best-effort flows, ``lbe_share_pct`` (100 x their part of the goodput,
    ``lbe.share``)."""
    df = df.copy()
    drops, arr = f"{LINK}.drops", f"{LINK}.arrivals"
    if drops in df.columns and arr in df.columns:
        df["loss_pct"] = 100.0 * df[drops] / df[arr].where(df[arr] > 0)
    if "lbe.share" in df.columns:
        df["lbe_share_pct"] = 100.0 * df["lbe.share"]
    return df


def prepare(
    aqms: Sequence[str] | str,
    out: str | os.PathLike[str],
    *,
    quick: bool = False,
    workers: int | None = None,
    dask: str | None = None,
    force: bool = False,
):
    """Check the whole suite before anything runs: the AQM names, every section's spec (with
    the AQM grid), ``workers``, ``dask`` and the output folder. Returns ``(sections,
    prepared sweeps)``.

    Parameters
    ----------
    aqms : str or sequence of str
        AQM names.
    out : path-like
        The suite's folder.
    quick : bool
        The reduced suite.
    workers, dask
        As for :func:`aqmlab.sweep.run`.
    force : bool
        Replace ``out`` even if it is not an aqmlab folder.

    Returns
    -------
    tuple
        ``(sections, prepared sweeps, resume)``.

    Raises
    ------
    ValueError
        One line naming the key and value.
    """
    from aqmlab import sweep as sw
    from aqmlab.aqm import aqm_list
    from aqmlab.output import check_output_dir, manifest_command

    text = aqms if isinstance(aqms, str) else ",".join(aqms)
    names = aqm_list(text)
    secs = sections(names, quick)
    specs = [sw.load_spec(s.spec, name=s.name) for s in secs]
    sw.check_workers(workers)
    out = Path(out)
    resume = not force and out.is_dir() and manifest_command(out) == COMMAND
    if not resume:
        check_output_dir(out, force)
    else:
        for s, spec in zip(secs, specs, strict=True):
            sw.SweepStore.check(out / s.name, spec, force=False)
    return secs, specs, resume


def run(
    aqms: Sequence[str] | str,
    out: str | os.PathLike[str],
    *,
    quick: bool = False,
    workers: int | None = None,
    dask: str | None = None,
    force: bool = False,
    progress: Callable[[str], Callable[[int, int, int], None]] | None = None,
) -> SuiteResult:
    """Run the suite for ``aqms`` into ``out`` and write ``out/summary.md``.

    Parameters
    ----------
    aqms : str or sequence of str
        AQM names (``"codel,pie"`` or a list).
    out : path
        The suite's folder; a folder written by an earlier run of the suite is resumed.
    quick : bool
        The reduced suite (two seeds, short runs): under a minute on two cores.
    workers, dask :
        As for :func:`aqmlab.sweep.run`; one pool or cluster serves every section.
    force : bool
        Replace ``out`` even if it is not an aqmlab folder; never resume.
    progress : callable, optional
        ``progress(section_name)`` returns the ``progress(done, total, failed)`` callback of
        that section's sweep (a context manager is not needed).

    Returns
    -------
    SuiteResult
    """
    from aqmlab import sweep as sw
    from aqmlab.output import output_dir, signals_deferred
    from aqmlab.stats import across_seeds

    secs, specs, resume = prepare(aqms, out, quick=quick, workers=workers, dask=dask, force=force)
    out = Path(out)
    executor = sw.DaskCluster(dask, workers) if dask is not None else sw.LocalPool(workers)
    if not resume:
        with output_dir(out, force=force, command=COMMAND):
            pass
    result = SuiteResult(out, sections=secs)
    try:
        for s, spec in zip(secs, specs, strict=True):
            prep = sw.prepare(spec, out / s.name, force=False, executor=executor)
            cb = progress(s.name) if progress is not None else None
            df = with_derived(sw.execute(prep, cb))
            result.tables[s.name] = df
            result.stats[s.name] = across_seeds(df, [m for m in s.metrics if m in df.columns])
    finally:
        with signals_deferred():  # a signal now waits until the pages and manifest are written
            _finish(out, secs, result, executor, quick)
    return result


def _finish(out: Path, secs: list[Section], result: SuiteResult, executor, quick: bool) -> None:
    """Stop the workers; write ``summary.md``, ``report.html`` and the manifest of a run of the
    suite (also an interrupted one)."""
    from aqmlab.output import manifest_files, refresh_manifest, write_atomic

    executor.close()
    if not result.tables:
        return
    with write_atomic(out / "summary.md") as tmp:
        tmp.write_text(summary_markdown(result, quick))
    write_html_report(out, [x for x in secs if x.name in result.tables])
    # what aqmlab wrote: the pages and each section's sweep folder as its manifest says
    written = ["summary.md", "report.html"]
    for x in secs:
        written += [f"{x.name}/{f}" for f in manifest_files(out / x.name)]
    refresh_manifest(out, COMMAND, written)


def write_html_report(out: Path, secs: list[Section]) -> Path:
    """``out/report.html``: one page with each section's report (:mod:`aqmlab.report`: CI
    table, queue-delay CDFs, delay-versus-goodput ellipses, per-flow goodput), written
    atomically. Returns its path."""
    from aqmlab.output import write_atomic
    from aqmlab.report import load_runs
    from aqmlab.report.page import render_suite

    parts = [(s.name, f"{s.rfc_section}. {s.title}", load_runs(out / s.name)) for s in secs]
    path = out / "report.html"
    with write_atomic(path) as tmp:
        tmp.write_text(render_suite(parts, "RFC 7928 suite"), encoding="utf-8")
    return path


def _fmt(mean: float, low: float, high: float) -> str:
    import math

    if math.isnan(mean):
        return "-"
    if math.isnan(low):
        return f"{mean:.4g}"
    return f"{mean:.4g} ± {(high - low) / 2:.2g}"


def summary_markdown(result: SuiteResult, quick: bool = False) -> str:
    """``summary.md``: per section, a table of each configuration's metrics (mean ± half width
    of the 95 % confidence interval over the seeds; n = the runs that finished).

    Parameters
    ----------
    result : SuiteResult
        The suite's results.
    quick : bool
        Say that the reduced suite ran.

    Returns
    -------
    str
    """
    lines = [
        "# RFC 7928 characterization" + (" (quick)" if quick else ""),
        "",
        "Mean over the seeds ± half width of the 95 % Student-t confidence interval; `n` runs "
        "per row (failed runs left out). Metrics are those of the bottleneck link "
        "(`loss_pct` = 100 x drops / arrivals; `lbe_share_pct` = 100 x the LEDBAT flows' "
        "part of the goodput). See docs/rfc7928.md.",
    ]
    for s in result.sections:
        st = result.stats.get(s.name)
        if st is None:
            continue
        lines += ["", f"## {s.rfc_section}. {s.title} (`{s.name}`)", ""]
        df = result.tables[s.name]
        failed = int(df["error"].notna().sum())
        by = [c for c in st.columns if c not in ("metric", "n", "mean", "std", "ci_low", "ci_high")]
        metrics = list(dict.fromkeys(st["metric"]))
        short = [m.removeprefix(f"{LINK}.") for m in metrics]
        lines.append("| " + " | ".join([*by, "n", *short]) + " |")
        lines.append("|" + "---|" * (len(by) + 1 + len(metrics)))
        for key, part in st.groupby(by, sort=False):
            key = key if isinstance(key, tuple) else (key,)
            cells = {
                r["metric"]: _fmt(r["mean"], r["ci_low"], r["ci_high"]) for _, r in part.iterrows()
            }
            n = int(part["n"].max())
            lines.append(
                "| "
                + " | ".join([*(str(k) for k in key), str(n), *(cells[m] for m in metrics)])
                + " |"
            )
        if failed:
            lines += [
                "",
                f"{failed} run(s) failed; their errors are in `{s.name}/results.parquet`.",
            ]
    return "\n".join(lines) + "\n"
