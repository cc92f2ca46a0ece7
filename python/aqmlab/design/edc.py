"""EDC: discrete PI in the packet-arrival (spatial) domain (docs/design/edc.md).

The spatial plant (EDC eqs. 7-9, per packet arrival, from ``aqmlab.fluid.EDC.linearize()``) is
discretised with a zero-order hold over the event threshold ``n`` packets (``Ad = expm(A n)``); one step of the discrete system is one
controller event.  The controller is ``C(z) = alpha (z - beta)/(z - 1)`` with
``alpha = K_P (K_I + 1)``, ``beta = 1/(K_I + 1)`` (EDC eq. 10), i.e.
``p(k) = p(k-1) + K_P (K_I + 1) e(k) - K_P e(k-1)``, ``e = q - q_ref``.

Decisions on ambiguities
------------------------
* The plant has negative gain (more marking, less queue) and the law acts on ``q - q_ref``
  with positive gains, so the loop is ``1 + C(z) (-P(z)) = 0``.
* The ZOH uses the delay-free spatial model, as EDC does (one event spans many packets).
* The operating point is the caller's: ``q0`` = q_ref, ``R0 = q0/C + Tp``.

Examples
--------
>>> d = edc_design(60, 187.5, 200.0, 0.1, n_event=30, kp=0.03, ki=0.01)
>>> bool(d.stable)
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

import control
import numpy as np

from aqmlab import fluid
from aqmlab.design.plants import check_real, edc_spatial_plant
from aqmlab.protocol import Result, new_axes, plotted

__all__ = ["EDCDesign", "EDCRegion", "edc_design", "edc_discrete_plant", "edc_stable_region"]


def edc_discrete_plant(
    n_flows: float, capacity: float, q0: float, prop_rtt: float, n_event: int
) -> control.StateSpace:
    """ZOH discretisation of the spatial plant over ``n_event`` arrivals (``dt = 1`` event).

    Output ``delta q`` (packets), input ``delta p``.

    Parameters
    ----------
    n_flows : float
        N.
    capacity : float
        C, packets/s.
    q0 : float
        operating queue, packets.
    prop_rtt : float
        propagation RTT Tp, s.
    n_event : int
        event threshold, packets per step.

    Returns
    -------
    control.StateSpace
        Discrete-time (one step per ``n_event`` arrivals), state ``[delta W, delta q]``.

    Examples
    --------
    >>> P = edc_discrete_plant(60, 187.5, 200.0, 0.1, 30)
    >>> bool(np.all(np.abs(P.poles()) < 1))
    True
    """
    n_event = check_real("n_event", n_event)
    if n_event < 1:
        raise ValueError(f"n_event must be >= 1, got {n_event:g}")
    if int(n_event) != n_event:
        raise ValueError(f"n_event must be an integer, got {n_event}")
    edc_spatial_plant(n_flows, capacity, q0, prop_rtt)  # validates the operating point
    lin = fluid.EDC(n_flows, capacity, prop_rtt, qref=q0).linearize()
    Ad, Bd = lin.extra["discrete"](int(n_event))[0]  # ZOH over n_event packets
    return control.ss(Ad, Bd, [[0.0, 1.0]], 0, dt=1)


def _pi(kp: float, ki: float) -> control.TransferFunction:
    alpha, beta = kp * (ki + 1), 1.0 / (ki + 1)  # EDC eq. 10
    return control.tf([alpha, -alpha * beta], [1.0, -1.0], dt=1)


@dataclass(repr=False)
class EDCDesign(Result):
    """Closed loop of the EDC PI for given gains.

    Attributes
    ----------
    kp, ki : float
        gains of EDC eq. 10.
    alpha, beta : float
        ``C(z) = alpha (z - beta)/(z - 1)``.
    poles : numpy.ndarray
        closed-loop poles (z-plane, per event).
    spectral_radius : float
        ``max |pole|``.
    stable : bool
        ``spectral_radius < 1``.
    loop : control.TransferFunction
        ``C(z) (-P(z))``.
    q_ref : float
        reference queue, packets.
    n_event : int
        event threshold, packet arrivals per controller run.
    """

    kp: float
    ki: float
    alpha: float
    beta: float
    poles: np.ndarray
    spectral_radius: float
    stable: bool
    loop: control.TransferFunction = field(repr=False)
    q_ref: float = 200.0
    n_event: int = 30

    def to_aqm(self) -> dict:
        """The AQM configuration of this design for the simulator's ``edc`` AQM.

        ``{"type": "edc", "kp": K_P, "ki": K_I, "q_ref": q_ref, "n_event": n}``: EDC eq. 10's
        gains (dimensionless, per packet of queue error), the reference queue (packets) and the
        event threshold (packet arrivals per controller run); the simulator's ``edc`` AQM
        (``docs/aqm/edc.md``).

        Returns
        -------
        dict

        Examples
        --------
        >>> edc_design(60, 187.5, 200.0, 0.1).to_aqm()["n_event"]
        30
        """
        return {
            "type": "edc",
            "kp": float(self.kp),
            "ki": float(self.ki),
            "q_ref": float(self.q_ref),
            "n_event": int(self.n_event),
        }

    def to_dict(self) -> dict:
        """JSON-ready dictionary.

        Returns
        -------
        dict
        """
        return {
            "kp": self.kp,
            "ki": self.ki,
            "alpha": self.alpha,
            "beta": self.beta,
            "spectral_radius": self.spectral_radius,
            "stable": self.stable,
            "poles_re": [float(p.real) for p in self.poles],
            "poles_im": [float(p.imag) for p in self.poles],
        }

    def _figures(self) -> dict:
        return {
            "kp": self.kp,
            "ki": self.ki,
            "alpha": self.alpha,
            "beta": self.beta,
            "spectral_radius": self.spectral_radius,
            "stable": bool(self.stable),
            "q_ref": self.q_ref,
            "n_event": self.n_event,
        }

    def to_pandas(self):
        """The closed-loop poles: ``re``, ``im`` and ``abs`` (z-plane, per event).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        return pd.DataFrame(
            {"re": self.poles.real, "im": self.poles.imag, "abs": np.abs(self.poles)}
        )

    def plot(self, ax=None):
        """Root locus over ``alpha`` (K_I, hence beta, fixed) with the design poles marked.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; without it, a new Figure.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        fig, ax = new_axes(given := ax)
        base = self.loop / self.alpha
        gains = self.alpha * np.logspace(-3, 2, 600)
        rl = control.root_locus_map(base, gains)
        loci = np.asarray(rl.loci)
        for j in range(loci.shape[1]):
            ax.plot(loci[:, j].real, loci[:, j].imag, lw=1)
        t = np.linspace(0, 2 * np.pi, 400)
        ax.plot(np.cos(t), np.sin(t), "k:", lw=0.8)
        ax.plot(self.poles.real, self.poles.imag, "kx", ms=9, label="design")
        ax.set_aspect("equal")
        ax.set_xlabel("Re z")
        ax.set_ylabel("Im z")
        ax.set_title(f"EDC root locus in alpha (K_I = {self.ki:g})")
        ax.legend()
        return plotted(fig, given)


def edc_design(
    n_flows: float,
    capacity: float,
    q0: float,
    prop_rtt: float,
    n_event: int = 30,
    kp: float = 0.03,
    ki: float = 0.01,
) -> EDCDesign:
    """Closed-loop poles of EDC's discrete PI on the discretised spatial plant.

    Parameters
    ----------
    n_flows : float
        N.
    capacity : float
        C, packets/s.
    q0 : float
        operating (reference) queue, packets.
    prop_rtt : float
        propagation RTT Tp, s.
    n_event : int
        event threshold, packets per controller run.
    kp, ki : float
        gains of EDC eq. 10.

    Returns
    -------
    EDCDesign

    Examples
    --------
    >>> d = edc_design(60, 187.5, 200.0, 0.1)
    >>> 0.98 < d.spectral_radius < 1.0
    True
    """
    kp = check_real("kp", kp, positive=True)
    ki = check_real("ki", ki)
    if ki <= -1:
        raise ValueError(f"ki must be > -1, got {ki!r}")
    P = edc_discrete_plant(n_flows, capacity, q0, prop_rtt, n_event)
    C = _pi(kp, ki)
    L = control.tf(C * (-P))
    L = control.minreal(L, verbose=False)
    cl = control.feedback(L, 1)
    poles = np.asarray(cl.poles())
    rho = float(np.max(np.abs(poles)))
    return EDCDesign(
        float(kp),
        float(ki),
        kp * (ki + 1),
        1 / (ki + 1),
        poles,
        rho,
        rho < 1.0,
        L,
        float(q0),
        int(n_event),
    )


@dataclass(repr=False)
class EDCRegion(Result):
    """Stable (K_P, K_I) region (result of :func:`edc_stable_region`).

    Attributes
    ----------
    kp, ki : numpy.ndarray
        grid axes.
    spectral_radius : numpy.ndarray, shape (len(ki), len(kp))
    """

    kp: np.ndarray
    ki: np.ndarray
    spectral_radius: np.ndarray

    @property
    def stable(self) -> np.ndarray:
        """Boolean mask, same shape as ``spectral_radius``."""
        return self.spectral_radius < 1.0

    def kp_max(self) -> np.ndarray:
        """Largest stable K_P on the grid for each K_I (``nan`` if none).

        Returns
        -------
        numpy.ndarray, shape (len(ki),)
        """
        out = np.full(self.ki.size, np.nan)
        for i in range(self.ki.size):
            ok = np.nonzero(self.stable[i])[0]
            if ok.size:
                out[i] = self.kp[ok.max()]
        return out

    def _figures(self) -> dict:
        return {
            "kp": f"{self.kp.min():g}..{self.kp.max():g} ({self.kp.size})",
            "ki": f"{self.ki.min():g}..{self.ki.max():g} ({self.ki.size})",
            "stable_fraction": float(self.stable.mean()),
            "min_spectral_radius": float(np.nanmin(self.spectral_radius)),
        }

    def to_pandas(self):
        """One row per grid point: ``kp``, ``ki``, ``spectral_radius``, ``stable``.

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        ki, kp = np.meshgrid(self.ki, self.kp, indexing="ij")
        return pd.DataFrame(
            {
                "kp": kp.ravel(),
                "ki": ki.ravel(),
                "spectral_radius": self.spectral_radius.ravel(),
                "stable": self.stable.ravel(),
            }
        )

    def plot(self, ax=None):
        """Spectral radius over the grid with the unit contour.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; without it, a new Figure.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        fig, ax = new_axes(given := ax)
        m = ax.pcolormesh(self.kp, self.ki, self.spectral_radius, shading="nearest", vmax=1.2)
        ax.contour(self.kp, self.ki, self.spectral_radius, levels=[1.0], colors="k")
        ax.figure.colorbar(m, ax=ax, label="spectral radius")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("K_P")
        ax.set_ylabel("K_I")
        ax.set_title("EDC stable gain region (inside the black contour)")
        return plotted(fig, given)


def edc_stable_region(
    n_flows: float,
    capacity: float,
    q0: float,
    prop_rtt: float,
    n_event: int = 30,
    kp=None,
    ki=None,
) -> EDCRegion:
    """Spectral radius of the closed loop over a (K_P, K_I) grid.

    Uses the characteristic polynomial ``den_L + num_L`` directly (vectorised over gains).

    Parameters
    ----------
    n_flows, capacity, q0, prop_rtt, n_event : float, float, float, float, int
        as in :func:`edc_design`.
    kp : array_like, optional
        K_P grid (default 60 log-spaced values in [1e-4, 10]).
    ki : array_like, optional
        K_I grid (default 40 log-spaced values in [1e-4, 10]).

    Returns
    -------
    EDCRegion

    Examples
    --------
    >>> r = edc_stable_region(60, 187.5, 200.0, 0.1, kp=[0.03, 10.0], ki=[0.01])
    >>> r.stable.tolist()
    [[True, False]]
    """
    kp = np.logspace(-4, 1, 60) if kp is None else np.asarray(kp, dtype=float)
    ki = np.logspace(-4, 1, 40) if ki is None else np.asarray(ki, dtype=float)
    P = control.tf(edc_discrete_plant(n_flows, capacity, q0, prop_rtt, n_event))
    num = -np.atleast_1d(np.squeeze(P.num[0][0]))
    den = np.atleast_1d(np.squeeze(P.den[0][0]))
    rho = np.empty((ki.size, kp.size))
    for i, k_i in enumerate(ki):
        for j, k_p in enumerate(kp):
            a, b = k_p * (k_i + 1), 1 / (k_i + 1)
            char = np.polyadd(np.polymul(den, [1.0, -1.0]), np.polymul(num, [a, -a * b]))
            rho[i, j] = np.max(np.abs(np.roots(char)))
    return EDCRegion(kp, ki, rho)
