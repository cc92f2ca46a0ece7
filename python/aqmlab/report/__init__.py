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

__all__ = ["ReportInputError", "RunSet", "build_report", "load_runs"]


def build_report(
    source: str | os.PathLike[str], out: str | os.PathLike[str], force: bool = False
) -> Path:
    """Write the HTML report of ``source`` (a sweep folder, a folder of runs or a run) to ``out``.

    Parameters
    ----------
    source : path-like
        The input folder.
    out : path-like
        The HTML file to write (``.html``).
    force : bool
        Replace an existing ``out``.

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
    from aqmlab.output import check_output_file, output_file
    from aqmlab.report.page import render_page

    check_output_file(out, force, suffixes=(".html",), what="--out")
    rs = load_runs(source)
    title = f"aqmlab report: {Path(source).resolve().name}"
    html = render_page(rs, title)
    with output_file(out, force=force, suffixes=(".html",), what="--out") as tmp:
        tmp.write_text(html, encoding="utf-8")
    return Path(out)
