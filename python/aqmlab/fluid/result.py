"""Result objects shared by every fluid model (python-control style: ``.plot()``, ``.to_pandas()``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["FluidResult", "Equilibrium", "LinearizedModel"]


def _group(name: str) -> str:
    return name.split("[", 1)[0]


@dataclass
class FluidResult:
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
        return self.y.shape[1]

    def __getitem__(self, name: str) -> np.ndarray:
        """Trajectory of one state, shape ``(T, B)``; a group name (``"x"``) gives ``(T, B, k)``."""
        if name in self.state_names:
            return self.y[:, :, self.state_names.index(name)]
        idx = [i for i, s in enumerate(self.state_names) if _group(s) == name]
        if not idx:
            raise KeyError(f"no state {name!r}; states are {self.state_names}")
        return self.y[:, :, idx]

    def final(self) -> dict:
        """Final value of each state: ``{name: array of shape (B,)}``."""
        return {s: self.y[-1, :, i] for i, s in enumerate(self.state_names)}

    def to_pandas(self):
        """Trajectories as a long-by-batch, wide-by-state DataFrame.

        Columns: ``batch`` (parameter-set index), ``t`` and one column per state.
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

    def plot(self, batch=0, fig=None):
        """Plot each group of states against time (one axis per group).

        Parameters
        ----------
        batch : int or sequence of int
            Parameter sets to draw.
        fig : matplotlib Figure, optional

        Returns
        -------
        matplotlib.figure.Figure
        """
        import matplotlib.pyplot as plt

        groups = list(dict.fromkeys(_group(s) for s in self.state_names))
        if fig is None:
            fig = plt.figure(figsize=(7, 1.9 * len(groups) + 0.6))
        axes = fig.subplots(len(groups), 1, sharex=True, squeeze=False)[:, 0]
        batches = np.atleast_1d(batch)
        for ax, g in zip(axes, groups, strict=True):
            for i, s in enumerate(self.state_names):
                if _group(s) != g:
                    continue
                for b in batches:
                    ax.plot(self.t, self.y[:, b, i], lw=1, label=s if len(batches) == 1 else None)
            if self.equilibrium is not None and g in self.equilibrium.values:
                for v in np.atleast_1d(self.equilibrium.values[g][batches[0]]):
                    ax.axhline(v, color="k", ls=":", lw=0.8)
            ax.set_ylabel(g)
            if sum(_group(s) == g for s in self.state_names) <= 10 and len(batches) == 1:
                ax.legend(fontsize=6, loc="best", ncol=2)
        axes[-1].set_xlabel(self.t_label)
        fig.suptitle(f"{self.model} fluid model")
        fig.tight_layout()
        return fig


@dataclass
class Equilibrium:
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

    def to_dict(self, batch=0) -> dict:
        """JSON-friendly values of one parameter set."""
        return {k: np.asarray(v)[batch].tolist() for k, v in self.values.items()}

    def to_pandas(self):
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


@dataclass
class LinearizedModel:
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

    def to_pandas(self, batch=0):
        import pandas as pd

        return pd.DataFrame(
            np.hstack([self.A[batch], self.Ad[batch], self.B[batch]]),
            index=self.states,
            columns=[f"A:{s}" for s in self.states]
            + [f"Ad:{s}" for s in self.states]
            + [f"B:{u}" for u in self.inputs],
        )

    def plot(self, batch=0, fig=None):
        """Eigenvalues of ``A_identified`` (delay-free part) in the complex plane."""
        import matplotlib.pyplot as plt

        fig = fig or plt.figure(figsize=(4, 4))
        ax = fig.add_subplot(111)
        ev = np.linalg.eigvals(self.A_identified[batch])
        ax.plot(ev.real, ev.imag, "x")
        ax.axvline(0, color="k", lw=0.5)
        ax.set_xlabel("Re")
        ax.set_ylabel("Im")
        return fig
