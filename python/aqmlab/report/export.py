"""Figures written as files a paper can use: PNG, SVG and PDF side by side.

PDF embeds its TrueType fonts (``pdf.fonttype`` 42, not Type 3 bitmaps), SVG draws text as
outlines (``svg.fonttype`` ``path``: no font is needed to view it), PNG is 300 dpi; widths are
one column (3.5 in) or two columns (7.16 in) of a two-column paper
(:data:`aqmlab.report.figures.WIDTHS`). No file carries a date, so the same figure gives the same
SVG and PDF bytes.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["FORMATS", "parse_formats", "save_figure", "write_figures"]

#: The formats a figure can be written in.
FORMATS = ("png", "svg", "pdf")
_METADATA = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
    "pdf": {"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None},
}


def parse_formats(text: str, key: str = "--formats") -> list[str]:
    """A comma-separated list of formats (``png,svg,pdf``), checked.

    Parameters
    ----------
    text : str
        The list as given.
    key : str
        How the error names the option.

    Returns
    -------
    list of str
        The formats, each once, in the order given.

    Raises
    ------
    ValueError
        ``KEY = TEXT: reason`` for an empty list or an unknown format.

    Examples
    --------
    >>> parse_formats("png, SVG,pdf")
    ['png', 'svg', 'pdf']
    """
    out = []
    for part in text.split(","):
        f = part.strip().lower()
        if f not in FORMATS:
            raise ValueError(
                f"{key} = {text!r}: {part.strip()!r} is not a format (known: {', '.join(FORMATS)})"
            )
        if f not in out:
            out.append(f)
    return out


def save_figure(fig, path: str | os.PathLike[str], fmt: str) -> Path:
    """Write ``fig`` to ``path`` in ``fmt`` with the report's style (fonts embedded, no date).

    Parameters
    ----------
    fig : matplotlib Figure
        The figure.
    path : path-like
        The file to write (written as it is: the caller chooses where).
    fmt : {"png", "svg", "pdf"}
        The format.

    Returns
    -------
    Path
        ``path``.
    """
    import matplotlib.pyplot as plt

    from aqmlab.report.figures import STYLE

    if fmt not in FORMATS:
        raise ValueError(f"format = {fmt!r}: must be one of {', '.join(FORMATS)}")
    with plt.rc_context(STYLE):
        fig.savefig(path, format=fmt, dpi=300, metadata=_METADATA[fmt])
    return Path(path)


def write_figures(
    figures: list[tuple[str, object]],
    folder: str | os.PathLike[str],
    formats: list[str],
    force: bool = False,
) -> list[Path]:
    """Write every ``(name, Figure)`` as ``folder/NAME.FORMAT`` through :mod:`aqmlab.output`
    (a temporary folder renamed into place; an existing folder only with ``force`` unless it
    holds nothing but what aqmlab wrote), then close the figures.

    Parameters
    ----------
    figures : list of (str, matplotlib Figure)
        The figures and their file names (without extension).
    folder : path-like
        The folder to write.
    formats : list of str
        Formats of :data:`FORMATS`.
    force : bool
        Replace a folder that holds files aqmlab did not write.

    Returns
    -------
    list of Path
        The files written (under ``folder``).
    """
    import matplotlib.pyplot as plt

    from aqmlab.output import output_dir

    written = []
    try:
        with output_dir(folder, force=force) as tmp:
            for name, fig in figures:
                for fmt in formats:
                    save_figure(fig, tmp / f"{name}.{fmt}", fmt)
                    written.append(Path(folder) / f"{name}.{fmt}")
    finally:
        for _, fig in figures:
            plt.close(fig)
    return written
