"""Reproductions of the seed papers' evaluations: ``aqmlab repro NAME [--quick] --out DIR``.

One module per paper (``ktl``, ``edc``, ``sfc``, ``paqman``, ``sqm_fluid``, ``sqm_s1``, ``sqm_s2``), each with ``run(quick) -> Repro``; the files
written are described in :mod:`aqmlab.repro._common` and ``docs/repro.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aqmlab.repro._common import Repro, to_toml, write_repro

__all__ = ["NS2_PAPERS", "PAPERS", "Repro", "run", "to_toml", "write_repro"]

#: the reproductions whose cases ns-2 can run (``aqmlab repro NAME --ns2``)
NS2_PAPERS = ("ktl", "sfc", "edc")

#: name -> (module, one-line description)
PAPERS = {
    "ktl": ("aqmlab.repro.ktl", "Kim, Tang & Low 2003, PD-LQ: experiments A and B"),
    "edc": ("aqmlab.repro.edc", "Suzer, Kang & Basaran 2011, EDC vs RED, PI, PIP, AOPC, FLC"),
    "sfc": ("aqmlab.repro.sfc", "Gao & Hou, SFC vs RED, SRED, PI, AVQ: experiments A-E"),
    "paqman": ("aqmlab.repro.paqman", "Kar, Alt, Koeppl & Rizk, PAQMAN vs CoDel and drop-tail"),
    "sqm-fluid": ("aqmlab.repro.sqm_fluid", "Ye et al. 2022, SQM: the MATLAB fluid example"),
    "sqm-s1": ("aqmlab.repro.sqm_s1", "Ye et al. 2022, SQM: ns Scenario 1, delay under churn"),
    "sqm-s2": ("aqmlab.repro.sqm_s2", "Ye et al. 2022, SQM: ns Scenario 2, NewReno vs CUBIC"),
}


def run(name: str, quick: bool = False, ns2: bool = False) -> Repro:
    """Run the reproduction ``name`` (a key of :data:`PAPERS`).

    Parameters
    ----------
    name : str
        The reproduction.
    quick : bool
        The reduced run (fewer seeds, shorter runs).
    ns2 : bool
        Also run the cases ns-2 can host (``ktl``, ``sfc``, ``edc``) in ns-2.35 and add the
        ns-2 column (:mod:`aqmlab.repro.ns2`).

    Returns
    -------
    Repro
    """
    if name not in PAPERS:
        raise ValueError(f"NAME = {name!r}: unknown reproduction (known: {', '.join(PAPERS)})")
    rep = importlib.import_module(PAPERS[name][0]).run(quick=quick)
    if ns2:
        import time

        from aqmlab.repro.ns2 import attach

        t0 = time.perf_counter()
        attach(rep)
        rep.wall_seconds += time.perf_counter() - t0
    return rep


def __getattr__(name: str):
    # Repro, to_toml and write_repro load numpy: import them on first use, so that the command
    # line (which reads only PAPERS at start-up) does not pay for it.
    if name in ("Repro", "to_toml", "write_repro"):
        from aqmlab.repro import _common

        return getattr(_common, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
