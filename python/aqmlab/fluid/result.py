"""Result objects shared by every fluid model, with the result protocol of
:mod:`aqmlab.protocol` (``to_pandas()``, ``to_dict()``, ``plot(ax=None)``, one-line ``repr``,
notebook view)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from aqmlab.protocol import Result, deprecated, json_ready, new_axes, plotted

__all__ = ["FluidResult", "Equilibrium", "LinearizedModel"]


def _group(name: str) -> str:
    return name.split("[", 1)[0]


@dataclass(repr=False)
class FluidResult(Result):
    """Trajectories of a (batched) fluid simulation.

    Attributes
    ----------
    model : str
        Model name (``"misra"``, ``"sqm"``, ...).
    t : ndarray, shape (T,)
        Time (s); for the EDC spatial model the cumulative packet arrivals (packets).
    y : ndarray, shape (T, B, n)
        States for each of the ``B`` parameter sets.
    state_names : list of str
        Names (with units) of the ``n`` states, e.g. ``"W"`` (packets), ``"q"`` (packets),
        ``"x[3]"`` (packets/s).
    equilibrium : Equilibrium or None
        The model's equilibrium for the same parameters.
    info : dict
        Solver diagnostics (``dt``, ``clamped``, ``extrapolated``, wall time, ...).
    t_label : str
        The label of ``t`` in figures (``"t [s]"``, ``"theta [packets]"``).
    """

    model: str
    t: np.ndarray
    y: np.ndarray
    state_names: list
    equilibrium: Equilibrium | None = None
    info: dict = field(default_factory=dict)
    t_label: str = "t [s]"

    @property
    def batch_size(self) -> int:
        """``B``, the number of parameter sets simulated at once."""
        return self.y.shape[1]

    def _figures(self) -> dict:
        out = {
            "model": self.model,
            "batch": self.batch_size,
            "points": len(self.t),
            "t_end": float(self.t[-1]) if len(self.t) else 0.0,
        }
        for s, v in list(self.final().items())[:4]:
            out[f"{s}(end)"] = float(v[0])
        return out

    def to_dict(self) -> dict:
        """JSON-ready: ``model``, ``t``, ``state_names``, ``y`` (nested lists, shape (T, B,
        n)), ``final`` (per state, one value per parameter set), ``equilibrium`` (its values,
        or None) and ``info``.

        Returns
        -------
        dict
        """
        return {
            "model": self.model,
            "t": json_ready(self.t),
            "state_names": list(self.state_names),
            "y": json_ready(self.y),
            "final": json_ready(self.final()),
            "equilibrium": None if self.equilibrium is None else self.equilibrium.to_dict(),
            "info": json_ready(self.info),
        }

    def __getitem__(self, name: str) -> np.ndarray:
        """Trajectory of one state, shape ``(T, B)``; a group name (``"x"``) gives ``(T, B, k)``."""
        if name in self.state_names:
            return self.y[:, :, self.state_names.index(name)]
        idx = [i for i, s in enumerate(self.state_names) if _group(s) == name]
        if not idx:
            raise KeyError(f"no state {name!r}; states are {self.state_names}")
        return self.y[:, :, idx]

    def final(self) -> dict:
        """Final value of each state: ``{name: array of shape (B,)}``.

        Returns
        -------
        dict
        """
        return {s: self.y[-1, :, i] for i, s in enumerate(self.state_names)}

    def to_pandas(self):
        """Trajectories as a long-by-batch, wide-by-state DataFrame.

        Returns
        -------
        pandas.DataFrame
            Columns ``batch`` (parameter-set index), ``t`` and one column per state.
        """
        import pandas as pd

        T, B, n = self.y.shape
        data = {
            "batch": np.repeat(np.arange(B), T),
            self.t_label.split(" ")[0]: np.tile(self.t, B),
        }
        for i, s in enumerate(self.state_names):
            data[s] = self.y[:, :, i].T.reshape(-1)
        return pd.DataFrame(data)

    def plot(self, ax=None, batch=0, fig=None):
        """Plot each group of states against time (one panel per group).

        Parameters
        ----------
        ax : array of matplotlib Axes, optional
            One Axes per group of states (``"W"``, ``"q"``, ``"x"``, ...); a single Axes when
            the model has one group. Without it, a new Figure.
        batch : int or sequence of int
            Parameter sets to draw.
        fig : matplotlib Figure, optional
            Deprecated (kept for one release): a Figure to add the panels to; give ``ax``.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made (or the ``fig`` given), else ``ax``.
        """
        groups = list(dict.fromkeys(_group(s) for s in self.state_names))
        if fig is not None:
            deprecated("FluidResult.plot(fig=)", "FluidResult.plot(ax=)")
            made, axes = fig, fig.subplots(len(groups), 1, sharex=True, squeeze=False)[:, 0]
        else:
            made, axes = new_axes(
                ax, len(groups), 1, sharex=True, squeeze=False,
                figsize=(7, 1.9 * len(groups) + 0.6),
            )  # fmt: skip
            axes = np.ravel(axes)
        fig = made
        batches = np.atleast_1d(batch)
        for a, g in zip(axes, groups, strict=True):
            for i, s in enumerate(self.state_names):
                if _group(s) != g:
                    continue
                for b in batches:
                    a.plot(self.t, self.y[:, b, i], lw=1, label=s if len(batches) == 1 else None)
            if self.equilibrium is not None and g in self.equilibrium.values:
                for v in np.atleast_1d(self.equilibrium.values[g][batches[0]]):
                    a.axhline(v, color="k", ls=":", lw=0.8)
            a.set_ylabel(g)
            if sum(_group(s) == g for s in self.state_names) <= 10 and len(batches) == 1:
                a.legend(fontsize=6, loc="best", ncol=2)
        axes[-1].set_xlabel(self.t_label)
        if fig is not None:
            fig.suptitle(f"{self.model} fluid model")
            fig.tight_layout()
        return plotted(fig, ax)


@dataclass(repr=False)
class Equilibrium(Result):
    """Operating point of a fluid model.

    Attributes
    ----------
    values : dict
        ``{name: array}``, each of shape ``(B,)`` or ``(B, k)``: e.g. ``W`` (packets), ``q``
        (packets), ``p`` (probability), ``R`` (s).
    state : ndarray, shape (B, n)
        The same point as a state vector of the model (law states included).
    """

    values: dict
    state: np.ndarray

    def __getitem__(self, k):
        return self.values[k]

    def _figures(self) -> dict:
        first = self.to_dict()
        return {"batch": int(self.state.shape[0]), **{k: first[k] for k in list(first)[:6]}}

    def to_dict(self, batch=0) -> dict:
        """JSON-friendly values of one parameter set.

        Parameters
        ----------
        batch : int
            The parameter set.

        Returns
        -------
        dict
            ``{name: value}`` (a list for vector quantities).
        """
        return {k: np.asarray(v)[batch].tolist() for k, v in self.values.items()}

    def plot(self, ax=None):
        """Each equilibrium quantity over the parameter sets (one panel per quantity).

        Parameters
        ----------
        ax : array of matplotlib Axes, optional
            One Axes per quantity. Without it, a new Figure.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        names = list(self.values)
        fig, axes = new_axes(ax, len(names), 1, sharex=True, squeeze=False,
                             figsize=(6, 1.6 * len(names) + 0.6))  # fmt: skip
        for a, k in zip(np.ravel(axes), names, strict=True):
            v = np.asarray(self.values[k], dtype=float)
            a.plot(np.arange(v.shape[0]), v.reshape(v.shape[0], -1), "o-", ms=3, lw=0.8)
            a.set_ylabel(k)
        np.ravel(axes)[-1].set_xlabel("parameter set")
        return plotted(fig, ax)

    def to_pandas(self):
        """One row per parameter set, one column per quantity (``x[j]`` for vector ones).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        cols = {}
        for k, v in self.values.items():
            v = np.asarray(v)
            if v.ndim == 1:
                cols[k] = v
            else:
                for j in range(v.shape[1]):
                    cols[f"{k}[{j}]"] = v[:, j]
        return pd.DataFrame(cols)


@dataclass(repr=False)
class LinearizedModel(Result):
    """Linearisation ``dx/dt = A dx(t) + Ad dx(t - delay) + B du(t - delay)`` around an equilibrium.

    ``A`` holds the partial derivatives of the right-hand side with respect to the current state,
    ``Ad`` those with respect to the delayed state, ``B`` those with respect to the delayed input
    (the mark/drop probability ``p``). Papers usually identify ``x(t)`` with ``x(t - delay)`` in the
    state terms: that form is ``A + Ad`` (property :attr:`A_identified`).

    Attributes
    ----------
    A, Ad : ndarray, shape (B, n, n)
    B : ndarray, shape (B, n, m)
    delay : ndarray, shape (B,)  (s)
    states, inputs : list of str
    extra : dict
        Model-specific extras (the equilibrium, KTL's ``A1``, ``A2``, ``B1``, EDC's
        ``discrete(n)``, ...).
    """

    A: np.ndarray
    Ad: np.ndarray
    B: np.ndarray
    delay: np.ndarray
    states: list
    inputs: list
    extra: dict = field(default_factory=dict)

    @property
    def A_identified(self) -> np.ndarray:
        """``A + Ad``: the paper form with delayed and current states identified."""
        return self.A + self.Ad

    def _figures(self) -> dict:
        ev = np.linalg.eigvals(self.A_identified[0])
        return {
            "states": list(self.states),
            "inputs": list(self.inputs),
            "batch": int(self.A.shape[0]),
            "delay": float(np.ravel(self.delay)[0]),
            "max_re_eig": float(ev.real.max()),
        }

    def to_dict(self, batch=0) -> dict:
        """JSON-ready matrices of one parameter set.

        Parameters
        ----------
        batch : int
            The parameter set.

        Returns
        -------
        dict
            ``states``, ``inputs``, ``A``, ``Ad``, ``B`` (nested lists), ``delay`` (s).
        """
        return {
            "states": list(self.states),
            "inputs": list(self.inputs),
            "A": json_ready(self.A[batch]),
            "Ad": json_ready(self.Ad[batch]),
            "B": json_ready(self.B[batch]),
            "delay": float(np.ravel(self.delay)[batch]),
        }

    def to_pandas(self, batch=0):
        """``[A | Ad | B]`` of one parameter set, one row per state.

        Parameters
        ----------
        batch : int
            The parameter set.

        Returns
        -------
        pandas.DataFrame
            Index: the states; columns ``A:s``, ``Ad:s``, ``B:u``.
        """
        import pandas as pd

        return pd.DataFrame(
            np.hstack([self.A[batch], self.Ad[batch], self.B[batch]]),
            index=self.states,
            columns=[f"A:{s}" for s in self.states]
            + [f"Ad:{s}" for s in self.states]
            + [f"B:{u}" for u in self.inputs],
        )

    def plot(self, ax=None, batch=0, fig=None):
        """Eigenvalues of ``A_identified`` (delay-free part) in the complex plane.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; without it, a new Figure.
        batch : int
            The parameter set.
        fig : matplotlib Figure, optional
            Deprecated (kept for one release): a Figure to add the Axes to; give ``ax``.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made (or the ``fig`` given), else ``ax``.
        """
        if fig is not None:
            deprecated("LinearizedModel.plot(fig=)", "LinearizedModel.plot(ax=)")
            made, axes = fig, fig.add_subplot(111)
        else:
            made, axes = new_axes(ax, figsize=(4, 4))
        ev = np.linalg.eigvals(self.A_identified[batch])
        axes.plot(ev.real, ev.imag, "x")
        axes.axvline(0, color="k", lw=0.5)
        axes.set_xlabel("Re")
        axes.set_ylabel("Im")
        return plotted(made, ax)
