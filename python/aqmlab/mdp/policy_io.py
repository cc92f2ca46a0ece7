"""PAQMAN policy result object and policy file format (docs/paqman_policy_format.md).

A policy file is one JSON document: a header (format name, version, units, model parameters,
grid definitions) and the action table as one bit string per rate-grid index
(``'1'`` = drop, ``'0'`` = admit, character ``q`` = queue length ``q``). A runtime AQM needs only
``queue``, ``rate_grid`` and ``table``; the rest documents how the policy was made.

Examples
--------
>>> from aqmlab.mdp import negligible_rtt_model, solve, load_policy
>>> import tempfile, os
>>> pol = solve(negligible_rtt_model(833.3, 0.005, buffer=20, grid=5))
>>> path = os.path.join(tempfile.mkdtemp(), "p.json")
>>> pol.save(path)
>>> bool((load_policy(path).policy == pol.policy).all())
True
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from aqmlab.mdp.model import DROP, DROP_PROJECTIONS, RateGrid
from aqmlab.protocol import Result, new_axes, plotted

__all__ = ["PaqmanPolicy", "load_policy", "FORMAT", "VERSION", "atomic_write"]

FORMAT = "aqmlab-paqman-policy"
VERSION = 1


@dataclass(repr=False)
class PaqmanPolicy(Result):
    """An optimal PAQMAN drop policy and how it was obtained, with the result protocol of
    :mod:`aqmlab.protocol` (:meth:`save` and :meth:`load` read and write the policy file).

    Attributes
    ----------
    policy : ndarray of int8, shape (R, B + 1)
        ``policy[r - 1, q] == 1``: drop an arriving (decision) packet that finds ``q`` packets in
        the system when the sender's effective rate is grid index ``r`` (``r * grid.unit_pps``).
    grid : RateGrid
    meta : dict
        Model parameters: ``model`` (``"negligible_rtt"`` or ``"rtt"``), ``service_pps``,
        ``target_s``, ``rtt_s``, ``alpha``, ``penalty``, ``reward``, ``buffer``, ...
    gain : float
        Optimal long-run reward per second (``(m_n + M_n) / 2``).
    lower, upper : float
        Tijms' bounds on the gain at the last sweep.
    iterations : int
        Value-iteration sweeps.
    values : ndarray or None
        Relative values, shape (R, B + 1).
    solve_seconds : float
        Wall time of the solver.
    """

    policy: np.ndarray
    grid: RateGrid
    meta: dict = field(default_factory=dict)
    gain: float = float("nan")
    lower: float = float("nan")
    upper: float = float("nan")
    iterations: int = 0
    values: np.ndarray | None = None
    solve_seconds: float = float("nan")

    @property
    def buffer(self) -> int:
        """Buffer size ``B`` (packets)."""
        return self.policy.shape[1] - 1

    def action(self, queue: int, rate_index: int) -> int:
        """``1`` (drop) or ``0`` (admit) for a queue length and a 1-based rate-grid index.

        A full buffer (``queue >= B``) always drops; indices are clamped to the grid.

        Parameters
        ----------
        queue : int
            Packets in the system.
        rate_index : int
            1-based rate-grid index.

        Returns
        -------
        int
        """
        if queue >= self.buffer:
            return DROP
        r = min(max(int(rate_index), 1), self.grid.size)
        return int(self.policy[r - 1, max(int(queue), 0)])

    def drop_threshold(self) -> np.ndarray:
        """Smallest queue length with a drop, per rate index (``B`` if never below it).

        Returns
        -------
        ndarray of int, shape (R,)
        """
        d = self.policy[:, : self.buffer].astype(bool)
        first = np.where(d.any(axis=1), d.argmax(axis=1), self.buffer)
        return first

    def threshold_fill(self) -> np.ndarray:
        """The threshold policy with the same first drop per rate: drop from it on (its
        "fill-in"; equal to :attr:`policy` when that is threshold-like).

        Returns
        -------
        numpy.ndarray of int8, shape (R, B + 1)
        """
        q = np.arange(self.buffer + 1)
        return (q[None, :] >= self.drop_threshold()[:, None]).astype(np.int8)

    def is_threshold(self, below: int | None = None) -> bool:
        """True if every rate row is admit below its threshold and drop from it on.

        Parameters
        ----------
        below : int, optional
            Only check queues ``q < below`` (default: all); ``below = B - k`` ignores the edge
            of the buffer (docs/paqman.md, "The policy islands").

        Returns
        -------
        bool
        """
        n = self.buffer + 1 if below is None else int(below)
        return bool((self.threshold_fill()[:, :n] == self.policy[:, :n]).all())

    def threshold_reversals(self) -> int:
        """How often the first drop queue turns between rising and falling as the rate grows
        (sign changes of its successive differences, over rates with a drop below ``B``):
        0 for a staircase, large for the odd/even zigzag of the floor projection.

        Returns
        -------
        int
        """
        thr = self.drop_threshold()
        d = np.diff(thr[thr < self.buffer].astype(float))
        d = d[d != 0]
        return int((d[:-1] * d[1:] < 0).sum())

    def summary(self) -> dict:
        """Gain, iterations, drop fraction and thresholds at a few rates (for the CLI).

        Returns
        -------
        dict
        """
        thr = self.drop_threshold()
        idx = np.unique(np.linspace(0, self.grid.size - 1, 5).round().astype(int))
        mu = self.meta.get("service_pps", float("nan"))
        return {
            "gain_per_s": self.gain,
            "iterations": self.iterations,
            "solve_seconds": self.solve_seconds,
            "drop_fraction": float(self.policy[:, : self.buffer].mean()),
            "threshold_like": self.is_threshold(),
            "threshold_reversals": self.threshold_reversals(),
            "first_drop_queue_by_rate": {
                f"{self.grid.rates_pps[i] / mu:.2f}*mu": int(thr[i]) for i in idx
            },
        }

    def _figures(self) -> dict:
        return {
            "model": self.meta.get("model", "negligible_rtt"),
            "rates": self.grid.size,
            "buffer": self.buffer,
            "gain_per_s": self.gain,
            "iterations": self.iterations,
            "drop_fraction": float(self.policy[:, : self.buffer].mean()),
            "threshold_like": self.is_threshold(),
        }

    def to_pandas(self):
        """Long table: ``rate_index``, ``rate_pps``, ``queue``, ``drop`` (and ``value``).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        r, q = np.meshgrid(self.grid.index, np.arange(self.buffer + 1), indexing="ij")
        df = pd.DataFrame(
            {
                "rate_index": r.ravel(),
                "rate_pps": (r * self.grid.unit_pps).ravel(),
                "queue": q.ravel(),
                "drop": self.policy.ravel().astype(bool),
            }
        )
        if self.values is not None:
            df["value"] = self.values.ravel()
        return df

    def plot(self, ax=None, qmax: int | None = None, title: str | None = None):
        """Drop region over (queue, arrival rate) like PAQMAN Fig. 5/6 (dark = drop).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; without it, a new Figure.
        qmax : int, optional
            Largest queue shown (default: twice the largest threshold, at least 10).
        title : str, optional
            The panel's title (default: names the service rate and RTT).

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        fig, ax = new_axes(given := ax, figsize=(5, 4))
        if qmax is None:
            thr = self.drop_threshold()
            qmax = int(min(self.buffer, max(10, 2 * thr[thr < self.buffer].max(initial=5))))
        mu = self.meta.get("service_pps", 1.0)
        pkt_bits = 8 * self.meta.get("pkt_size_bytes", 1500)
        rates = self.grid.rates_pps * pkt_bits / 1e6
        ax.pcolormesh(
            np.arange(qmax + 2) - 0.5,
            np.concatenate([rates - self.grid.unit_pps * pkt_bits / 2e6, [rates[-1]]]),
            self.policy[:, : qmax + 1],
            cmap="Greys",
            vmin=0,
            vmax=1.4,
            shading="flat",
        )
        ax.set_xlabel("queue length (packets)")
        ax.set_ylabel("arrival rate (Mbit/s)")
        ax.axhline(mu * pkt_bits / 1e6, color="tab:red", lw=0.8, ls="--", label="service rate")
        ax.legend(loc="lower right", fontsize=7)
        if title is None:
            title = (
                f"PAQMAN drop region (dark), mu={mu * pkt_bits / 1e6:g} Mbit/s, "
                f"RTT={1e3 * self.meta.get('rtt_s', 0):g} ms"
            )
        ax.set_title(title, fontsize=8)
        return plotted(fig, given)

    # --- file format -----------------------------------------------------------------------

    def to_dict(self) -> dict:
        """The version-1 policy document (see docs/paqman_policy_format.md).

        Returns
        -------
        dict
        """
        m = self.meta
        return {
            "format": FORMAT,
            "version": VERSION,
            "model": m.get("model", "negligible_rtt"),
            "units": {"time": "s", "rate": "packets/s", "queue": "packets", "size": "bytes"},
            "service_rate_pps": m.get("service_pps"),
            "pkt_size_bytes": m.get("pkt_size_bytes", 1500),
            "target_delay_s": m.get("target_s"),
            "rtt_s": m.get("rtt_s", 0.0),
            "gamma_shape": m.get("alpha", 1.0),
            "reward": {"kind": m.get("reward", "default"), "penalty": m.get("penalty")},
            "queue": {"min": 0, "max": self.buffer, "counts": "packets in system before arrival"},
            "rate_grid": {
                "unit_pps": self.grid.unit_pps,
                "min_index": 1,
                "max_index": self.grid.size,
                "admit_step": 1,
                "drop_factor": self.grid.drop_factor,
                "drop_projection": self.grid.drop_projection,
            },
            "solver": {
                "gain_per_s": self.gain,
                "lower": self.lower,
                "upper": self.upper,
                "iterations": self.iterations,
                "eps": m.get("eps"),
                "tau_bar_s": m.get("tau_bar_s"),
            },
            "table": {
                "layout": "rows=rate_index 1..max_index, chars=queue 0..max",
                "encoding": "bitstring, '1'=drop '0'=admit",
                "rows": ["".join("1" if x else "0" for x in row) for row in self.policy],
            },
        }

    def save(self, path: str | os.PathLike) -> None:
        """Write the policy file atomically (temp file + rename).

        Parameters
        ----------
        path : path-like
            The policy file (docs/paqman_policy_format.md); its folder must exist.
        """
        atomic_write(path, json.dumps(self.to_dict(), indent=1, allow_nan=False) + "\n")

    @classmethod
    def load(cls, path: str | os.PathLike) -> PaqmanPolicy:
        """Read a policy file written by :meth:`save` (same as :func:`load_policy`).

        Parameters
        ----------
        path : path-like
            A version-1 policy file.

        Returns
        -------
        PaqmanPolicy
        """
        return load_policy(path)


def atomic_write(path: str | os.PathLike, text: str | bytes) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename.

    Parameters
    ----------
    path : path-like
        Destination; its folder must exist.
    text : str or bytes
        Content.
    """
    path = Path(path)
    mode = "wb" if isinstance(text, bytes) else "w"
    fd, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_policy(path: str | os.PathLike) -> PaqmanPolicy:
    """Read a policy file (docs/paqman_policy_format.md).

    Parameters
    ----------
    path : path-like
        A version-1 policy file.

    Returns
    -------
    PaqmanPolicy

    Raises
    ------
    ValueError
        Naming the file and what is wrong (not JSON, wrong format or version, bad table).
    """
    try:
        doc = json.loads(Path(path).read_text())
    except OSError as e:
        raise ValueError(f"policy file {str(path)!r}: {e.strerror or e}") from None
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError
        raise ValueError(f"policy file {str(path)!r}: not JSON ({e})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"policy file {str(path)!r}: not an {FORMAT} document")
    if doc.get("version") != VERSION:
        raise ValueError(f"policy file {str(path)!r}: version {doc.get('version')!r} unsupported")

    def bad(why: str) -> ValueError:
        return ValueError(f"policy file {str(path)!r}: malformed: {why}")

    def number(section: dict, key: str, where: str):
        if not isinstance(section, dict) or key not in section:
            raise bad(f"{where}.{key} is missing")
        v = section[key]
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise bad(f"{where}.{key} = {v!r}: not a finite number")
        return v

    rg = doc.get("rate_grid")
    unit = number(rg, "unit_pps", "rate_grid")
    if unit <= 0:
        raise bad(f"rate_grid.unit_pps = {unit!r}: must be > 0 (packets/s)")
    size = number(rg, "max_index", "rate_grid")
    if size < 1 or int(size) != size:
        raise bad(f"rate_grid.max_index = {size!r}: must be an integer >= 1")
    factor = number(rg, "drop_factor", "rate_grid")
    if not 0 < factor < 1:
        raise bad(f"rate_grid.drop_factor = {factor!r}: must be in (0, 1)")
    projection = rg.get("drop_projection", "floor")  # optional key; files before it: floor
    if projection not in DROP_PROJECTIONS:
        raise bad(
            f"rate_grid.drop_projection = {projection!r}: expected one of "
            + ", ".join(DROP_PROJECTIONS)
        )
    qmax = number(doc.get("queue"), "max", "queue")
    if qmax < 0 or int(qmax) != qmax:
        raise bad(f"queue.max = {qmax!r}: must be an integer >= 0")
    grid = RateGrid(float(unit), int(size), float(factor), projection)
    nq = int(qmax) + 1
    table_doc = doc.get("table")
    rows = table_doc.get("rows") if isinstance(table_doc, dict) else None
    if not isinstance(rows, list) or not all(
        isinstance(r, str) and set(r) <= {"0", "1"} for r in rows
    ):
        raise bad("table.rows must be a list of strings of '0' and '1'")
    if any(len(r) != nq for r in rows) or len(rows) != grid.size:
        raise bad(
            f"table shape: {len(rows)} rows of lengths {sorted({len(r) for r in rows})}, "
            f"expected {grid.size} rows of {nq}"
        )
    table = np.array([[c == "1" for c in row] for row in rows], dtype=np.int8).reshape(
        grid.size, nq
    )
    if table.shape != (grid.size, nq):
        raise ValueError(
            f"policy file {str(path)!r}: table shape {table.shape} != {(grid.size, nq)}"
        )
    s = doc.get("solver") if isinstance(doc.get("solver"), dict) else {}
    reward = doc.get("reward") if isinstance(doc.get("reward"), dict) else {}
    meta = {
        "model": doc.get("model"),
        "service_pps": doc.get("service_rate_pps"),
        "pkt_size_bytes": doc.get("pkt_size_bytes"),
        "target_s": doc.get("target_delay_s"),
        "rtt_s": doc.get("rtt_s", 0.0),
        "alpha": doc.get("gamma_shape", 1.0),
        "reward": reward.get("kind"),
        "penalty": reward.get("penalty"),
        "eps": s.get("eps"),
        "tau_bar_s": s.get("tau_bar_s"),
    }
    return PaqmanPolicy(
        policy=table,
        grid=grid,
        meta=meta,
        gain=s.get("gain_per_s", float("nan")),
        lower=s.get("lower", float("nan")),
        upper=s.get("upper", float("nan")),
        iterations=s.get("iterations", 0),
    )
