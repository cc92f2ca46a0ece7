"""Experiment reports: one self-contained HTML page from a sweep, a folder of runs or one run.

:func:`build_report` reads the input (:mod:`aqmlab.report.inputs`), computes the table
(:mod:`aqmlab.report.metrics`, 95 % Student-t intervals from :func:`aqmlab.stats.mean_ci`), draws the
figures (:mod:`aqmlab.report.figures`) and writes the page (:mod:`aqmlab.report.page`) through
:mod:`aqmlab.output` (temporary file and rename; an existing file only with ``force``).
``docs/report.md`` describes the page.

Examples
--------
>>> import tempfile, pathlib
>>> from aqmlab.sim import simulate
>>> base = pathlib.Path(tempfile.mkdtemp())
>>> _ = simulate({"duration": "3s", "dumbbell": {"rate": "10Mbps"},
...               "flows": [{"count": 2}]}).save(base / "run")
>>> build_report(base / "run", base / "report.html").name
'report.html'
"""

from __future__ import annotations

import os
from pathlib import Path

from aqmlab.report.inputs import ReportInputError, RunSet, load_runs

__all__ = ["ReportInputError", "RunSet", "build_report", "figures_folder", "load_runs"]


def figures_folder(out: str | os.PathLike[str]) -> Path:
    """Where :func:`build_report` writes the figure files of the page ``out``: beside it,
    ``NAME-figures/`` for ``NAME.html``.

    Parameters
    ----------
    out : path-like
        The page.

    Returns
    -------
    Path
    """
    out = Path(out)
    return out.with_name(out.stem + "-figures")


def build_report(
    source: str | os.PathLike[str],
    out: str | os.PathLike[str],
    force: bool = False,
    formats: list[str] | None = None,
    size: str = "two",
) -> Path:
    """Write the HTML report of ``source`` (a sweep folder, a folder of runs or a run) to ``out``.

    With ``formats``, every figure of the page is also written as a file per format into
    :func:`figures_folder` (``report-figures/cdf.svg``, ...; :mod:`aqmlab.report.export`).

    Parameters
    ----------
    source : path-like
        The input folder.
    out : path-like
        The HTML file to write (``.html``).
    force : bool
        Replace an existing ``out`` (and figure folder).
    formats : list of str, optional
        Also write the figures as files in these formats (``["png", "svg", "pdf"]``).
    size : {"one", "two"}
        Width of the figure files: one column (3.5 in) or two columns (7.16 in).

    Returns
    -------
    Path
        ``out``.

    Raises
    ------
    ReportInputError
        ``source`` is missing or not a sweep, run or folder of runs.
    OutputError
        ``out`` exists (without ``force``), is a folder, has another extension, ...
    """
    from aqmlab.output import check_output_dir, check_output_file, output_file
    from aqmlab.report.figures import WIDTHS
    from aqmlab.report.page import render_page

    check_output_file(out, force, suffixes=(".html",), what="--out")
    if size not in WIDTHS:
        raise ValueError(f"--size = {size!r}: must be one of {', '.join(WIDTHS)}")
    if formats:
        check_output_dir(figures_folder(out), force)
    rs = load_runs(source)
    if formats:
        from aqmlab.report.export import write_figures
        from aqmlab.report.figures import all_figures

        write_figures(all_figures(rs, size), figures_folder(out), formats, force=force)
    title = f"aqmlab report: {Path(source).resolve().name}"
    html = render_page(rs, title)
    with output_file(out, force=force, suffixes=(".html",), what="--out") as tmp:
        tmp.write_text(html, encoding="utf-8")
    return Path(out)
