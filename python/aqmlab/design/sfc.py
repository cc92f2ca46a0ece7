"""Gao-Hou state-feedback AQM (SFC): stability region of ``delta p = k1 dq + k2 dw``.

Seen from ``dw`` the law is a PI controller ``k2 + (k1 N / tau)/s`` on the stable first-order
plant with delay ``W/P = -k e^{-tau s}/(1 + T s)`` (docs/design/sfc.md), so the Silva-Datta-
Bhattacharyya PI conditions for first-order-plus-delay plants give the exact region.

Functions
---------
k2_max
    proportional bound K2max and theta (SFC §IV).
k1_max_printed
    the k1 bound from SFC eqs. 17-18 exactly as printed.
k1_max_exact
    the k1 bound from the exact PI-on-FOPDT conditions applied to model (14).
sfc_design
    robust design at (N_min, tau_max) -> :class:`SFCDesign` with ``.plot()``.
sfc_loop
    the open loop ``(G, delay)`` for margins and Nyquist checks.

Decisions on ambiguities
------------------------
* Eq. 14 (``A12 = N/tau``) is used, not the ``N/(2 b tau)`` printed in eq. 15.
* Both k1 bounds are computed (eqs. 17-18 as printed, and the exact Silva-Datta-Bhattacharyya
  conditions the paper cites as [24]); the printed one reproduces the paper's 0.0007,
  the exact one is what the linear delayed model really tolerates (checked by the argument
  principle in the tests).  The exact version of eq. 17 doubles its cos and sin terms and
  eq. 18 gains a ``z`` in its cos term (its prefactor is the same once ``k_i = k1 N / tau``).
* The exact proportional bound equals K2max (0.523 in the example), not the 0.576 quoted in
  an earlier derivation; see :func:`kp_max_exact` and ``docs/design/sfc.md``.
* The minimum in ``min_{j odd} a(z_j)`` is taken over all odd roots in ``(0, z_max]`` with
  ``z_max`` = 40 pi (more than the paper's "stop at the first odd root with cos z > 0").
* The equilibrium must be meaningful (``0 < p0 <= 1``); otherwise a ``ValueError``.
* Robust design: at the smallest load ``N_min`` and the largest RTT ``tau_max`` (the paper once
  writes tau >= tau_max, a typo).

Examples
--------
>>> d = sfc_design(1250.0, 300, 0.6, b=2, k2=0.2)
>>> f"{d.alpha:.3g} {d.p0:.3g} {d.theta:.4g} {d.k2_max:.3g}"
'2.5 0.143 1.787 0.523'
"""

from __future__ import annotations

from dataclasses import dataclass, field

import control
import numpy as np
from scipy.optimize import brentq

from aqmlab.design.margins import (
    StabilityMap,
    delayed_margins,
    loop_stability_map,
)
from aqmlab.design.plants import GaoHouPlant, check_real, gao_hou_plant
from aqmlab.protocol import Result, new_axes, plotted

__all__ = [
    "SFCDesign",
    "k1_max_exact",
    "k1_max_printed",
    "k2_max",
    "kp_max_exact",
    "sfc_design",
    "sfc_loop",
]

_ZMAX = 40 * np.pi


def _roots(f, zmax: float = _ZMAX, n: int = 20000) -> list[float]:
    z = np.linspace(1e-9, zmax, n)
    v = f(z)
    idx = np.nonzero(np.sign(v[:-1]) * np.sign(v[1:]) < 0)[0]
    return [brentq(f, z[i], z[i + 1], xtol=1e-14) for i in idx]


def k2_max(plant: GaoHouPlant) -> tuple[float, float]:
    """``(K2max, theta)`` of SFC §IV.

    ``tan theta = -b D/(2 alpha b + 1) theta`` on (pi/2, pi), ``D = b alpha^2 + alpha - 1``,
    ``K2max = 2b/D sqrt(theta^2 + ((2 alpha b + 1)/(b D))^2)``   # SFC §IV

    Parameters
    ----------
    plant : GaoHouPlant
        from :func:`~aqmlab.design.gao_hou_plant`.

    Returns
    -------
    tuple of (float, float)
        ``(K2max, theta)``, theta in rad.

    Examples
    --------
    >>> K, th = k2_max(gao_hou_plant(300, 1250.0, 0.6, b=2))
    >>> f"{K:.3f} {th:.3f}"
    '0.523 1.787'
    """
    a, b = plant.alpha, plant.b
    D = b * a**2 + a - 1.0
    r = b * D / (2 * a * b + 1)
    # tan(th) + r th = 0  <=>  sin(th) + r th cos(th) = 0 (no pole on (pi/2, pi))
    theta = brentq(lambda t: np.sin(t) + r * t * np.cos(t), np.pi / 2 + 1e-12, np.pi)
    K = 2 * b / D * np.sqrt(theta**2 + ((2 * a * b + 1) / (b * D)) ** 2)
    return float(K), float(theta)


def k1_max_printed(plant: GaoHouPlant, k2: float) -> float:
    """k1 bound from SFC eqs. 17-18 as printed (``inf`` if eq. 17 has no odd root).

    (17) ``k2 + (2ab+1) cos z / D^2 - b z sin z / D = 0``,
    (18) ``a(z) = (4ab+2)/(N D^2) z [sin z + b D/(1+2ab) cos z]``,
    ``k1 < min_{j odd} a(z_j)``.

    Parameters
    ----------
    plant : GaoHouPlant
        from :func:`~aqmlab.design.gao_hou_plant`.
    k2 : float
        window gain.

    Returns
    -------
    float
        1/packet.

    Examples
    --------
    >>> f"{k1_max_printed(gao_hou_plant(300, 1250.0, 0.6, b=2), 0.2):.5f}"
    '0.00070'
    """
    a, b, N = plant.alpha, plant.b, plant.n_flows
    D = b * a**2 + a - 1.0
    roots = _roots(
        lambda z: k2 + (2 * a * b + 1) * np.cos(z) / D**2 - b * z * np.sin(z) / D
    )  # eq. 17

    def a_of(z):  # SFC eq. 18
        return (4 * a * b + 2) / (N * D**2) * z * (np.sin(z) + b * D / (1 + 2 * a * b) * np.cos(z))

    odd = roots[0::2]  # z_1, z_3, ... (z_0 = 0 is not a root in the list)
    # a negative bound means no k1 > 0 stabilises: report 0
    return max(0.0, float(min(a_of(z) for z in odd))) if odd else float("inf")


def k1_max_exact(plant: GaoHouPlant, k2: float) -> float:
    """k1 bound from the exact PI-on-first-order-plus-delay conditions (Silva et al.).

    With ``L = tau``, ``kp = k2``, ``ki = k1 N / tau``:
    ``kp + cos z / k - (T/L) z sin z / k = 0`` (roots ``z_j``),
    ``ki < z/(k L) [sin z + (T/L) z cos z]`` at odd ``j``.  Returns ``0`` if ``k2`` is outside
    the proportional range (``-1/k < kp < kp_max``).

    Parameters
    ----------
    plant : GaoHouPlant
        from :func:`~aqmlab.design.gao_hou_plant`.
    k2 : float
        window gain.

    Returns
    -------
    float
        1/packet.

    Examples
    --------
    >>> f"{k1_max_exact(gao_hou_plant(300, 1250.0, 0.6, b=2), 0.2):.5f}"
    '0.00086'
    """
    k, T, L, N = plant.k, plant.T, plant.tau, plant.n_flows
    if not (-1.0 / k < k2 < kp_max_exact(plant)):
        return 0.0
    roots = _roots(lambda z: k2 + np.cos(z) / k - (T / L) * z * np.sin(z) / k)
    odd = roots[0::2]
    ki = min(z / (k * L) * (np.sin(z) + (T / L) * z * np.cos(z)) for z in odd)
    return max(0.0, float(ki * L / N))


def kp_max_exact(plant: GaoHouPlant) -> float:
    """Upper bound on ``k2 = kp`` for which some ``k1 > 0`` stabilises (PI on FOPDT).

    The k1 range closes when ``a(z_1) = 0``, i.e. ``tan z = -(T/L) z``; substituting into the
    root equation gives ``kp < (1/k) [(T/L) z sin z - cos z]`` with that ``z`` in (pi/2, pi),
    which equals the proportional-only bound, so this coincides with :func:`k2_max` (computed
    here from ``k``, ``T``, ``L`` independently of the printed formula).

    An earlier derivation quoted ``kp < 0.576`` (``tan z = -(T/(T+L)) z``); the argument principle
    and a Pade(12) model both show instability at ``k2 = 0.53`` for small ``k1`` (see tests),
    so the bound used here is 0.523 for the paper's example.

    Parameters
    ----------
    plant : GaoHouPlant
        from :func:`~aqmlab.design.gao_hou_plant`.

    Returns
    -------
    float

    Examples
    --------
    >>> f"{kp_max_exact(gao_hou_plant(300, 1250.0, 0.6, b=2)):.3f}"
    '0.523'
    """
    k, T, L = plant.k, plant.T, plant.tau
    r = T / L
    z = brentq(lambda t: np.sin(t) + r * t * np.cos(t), np.pi / 2 + 1e-12, np.pi)
    return float((r * z * np.sin(z) - np.cos(z)) / k)


def sfc_loop(plant: GaoHouPlant, k1: float, k2: float) -> tuple[control.TransferFunction, float]:
    """Open loop of ``dp = k1 dq + k2 dw`` on model (14): ``(G, delay)``.

    ``G(s) = (k2 + k1 N/(tau s)) k/(T s + 1)``; closed loop ``1 + G e^{-tau s} = 0``
    (the characteristic quasi-polynomial of SFC eq. 16).

    Parameters
    ----------
    plant : GaoHouPlant
        from :func:`~aqmlab.design.gao_hou_plant`.
    k1 : float
        queue gain, 1/packet.
    k2 : float
        window gain.

    Returns
    -------
    tuple of (control.TransferFunction, float)
        ``(G, delay)``: the rational part of the open loop and its delay (s).

    Examples
    --------
    >>> G, d = sfc_loop(gao_hou_plant(300, 1250.0, 0.6, b=2), 0.0005, 0.2)
    >>> d
    0.6
    """
    ki = k1 * plant.n_flows / plant.tau
    G = control.tf([k2, ki], [1.0, 0.0]) * control.tf([plant.k], [plant.T, 1.0])
    return G, plant.tau


@dataclass(repr=False)
class SFCDesign(Result):
    """Result of :func:`sfc_design` (all at the design corner ``N_min``, ``tau_max``).

    Attributes
    ----------
    alpha : float
        ``tau C / N``.
    p0 : float
        equilibrium probability (SFC eq. 11).
    theta : float
        root of the K2max equation, rad.
    k2_max : float
        proportional bound (printed region).
    kp_max_exact : float
        exact proportional bound.
    k2 : float
        chosen k2.
    k1_max_printed, k1_max_exact : float
        k1 bounds for ``k2`` (1/packet).
    k1 : float or None
        chosen k1 (if given) and, then, ``margins`` of its loop.
    plant : GaoHouPlant
    q_ref : float
        target queue ``q0`` of the per-packet law, packets.
    """

    alpha: float
    p0: float
    theta: float
    k2_max: float
    kp_max_exact: float
    k2: float
    k1_max_printed: float
    k1_max_exact: float
    k1: float | None
    plant: GaoHouPlant = field(repr=False)
    q_ref: float = 50.0

    def to_aqm(self) -> dict:
        """The AQM configuration of this design for the simulator's ``sfc`` AQM.

        ``{"type": "sfc", "k1": k1, "k2": k2, "capacity": C, "q_ref": q_ref}``: the per-packet
        law ``p = k1 (q - q_ref) + (k2 / C) (R - C)`` of SFC Fig. 5 with ``k1`` in 1/packet,
        ``k2`` dimensionless, ``capacity`` C in packets/s and ``q_ref`` in packets; the
        simulator's ``sfc`` AQM (``docs/aqm/sfc.md``).

        Returns
        -------
        dict

        Raises
        ------
        ValueError
            The design has no ``k1`` (pass ``k1=`` to :func:`sfc_design`; the bounds are
            ``k1_max_printed`` and ``k1_max_exact``).

        Examples
        --------
        >>> sfc_design(1250.0, 300, 0.6, k2=0.2, k1=0.0005).to_aqm()["k1"]
        0.0005
        """
        if self.k1 is None:
            raise ValueError(
                f"k1 is not chosen: pass k1= to sfc_design (stable for k1 < "
                f"{min(self.k1_max_printed, self.k1_max_exact):.3g} at k2 = {self.k2:g})"
            )
        return {
            "type": "sfc",
            "k1": float(self.k1),
            "k2": float(self.k2),
            "capacity": float(self.plant.capacity),
            "q_ref": float(self.q_ref),
        }

    def to_dict(self) -> dict:
        """JSON-ready; ``alpha``, ``p0``, ``theta``, ``k2_max``, ``k1_max_printed``,
        ``k1_max_exact`` are the CLI contract.

        Returns
        -------
        dict
        """
        d = {
            "alpha": self.alpha,
            "p0": self.p0,
            "theta": self.theta,
            "k2_max": self.k2_max,
            "kp_max_exact": self.kp_max_exact,
            "k2": self.k2,
            "k1_max_printed": self.k1_max_printed,
            "k1_max_exact": self.k1_max_exact,
            "a": self.k2 / self.plant.capacity,
        }
        if self.k1 is not None:
            d["k1"] = self.k1
            d.update(delayed_margins(*sfc_loop(self.plant, self.k1, self.k2)).to_dict())
        return d

    def stability_map(self, flows, rtts) -> StabilityMap:
        """Stability of the chosen ``(k1, k2)`` over an (N, RTT) grid (value: delay margin, s).

        Grid points without a meaningful equilibrium are marked unstable with value ``nan``.

        Parameters
        ----------
        flows : sequence of float
            numbers of flows N.
        rtts : sequence of float
            round-trip times, s.

        Returns
        -------
        StabilityMap

        Examples
        --------
        >>> d = sfc_design(1250.0, 300, 0.6, b=2, k2=0.2, k1=0.0005)
        >>> bool(d.stability_map([300, 600], [0.5, 0.6]).stable.all())
        True
        """
        if self.k1 is None:
            raise ValueError("stability_map needs a design with k1")

        def loop(n, r):
            return sfc_loop(
                gao_hou_plant(n, self.plant.capacity, r, self.plant.b), self.k1, self.k2
            )

        return loop_stability_map(loop, flows, rtts)

    def region(self, n: int = 60) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(k2, k1_max_printed, k1_max_exact)`` on ``n`` points of ``[0, max(K2max, kp_max))``.

        Parameters
        ----------
        n : int
            Number of k2 points.

        Returns
        -------
        tuple of numpy.ndarray
            ``(k2, k1_max_printed, k1_max_exact)``, each of shape (n,).
        """
        k2 = np.linspace(0.0, max(self.k2_max, self.kp_max_exact), n, endpoint=False)
        pr = np.array([k1_max_printed(self.plant, x) if x <= self.k2_max else 0.0 for x in k2])
        ex = np.array([k1_max_exact(self.plant, x) for x in k2])
        return k2, pr, ex

    def _figures(self) -> dict:
        return {
            "alpha": self.alpha,
            "p0": self.p0,
            "k2_max": self.k2_max,
            "kp_max_exact": self.kp_max_exact,
            "k2": self.k2,
            "k1": self.k1,
            "k1_max_printed": self.k1_max_printed,
            "k1_max_exact": self.k1_max_exact,
        }

    def to_pandas(self):
        """The design as a one-row DataFrame (the columns of :meth:`to_dict`).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        return pd.DataFrame([self.to_dict()])

    def plot(self, ax=None):
        """Stability region in the (k2, k1) plane: printed and exact bounds, chosen point.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; without it, a new Figure.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        fig, axes = new_axes(ax)
        k2, pr, ex = self.region()
        axes.plot(k2, pr, label="eqs. 17-18 as printed")
        axes.plot(k2, ex, "--", label="exact (PI on FOPDT)")
        if self.k1 is not None:
            axes.plot([self.k2], [self.k1], "ko", label="design")
        axes.set_xlabel("k2")
        axes.set_ylabel("k1 (1/packet)")
        axes.set_title(f"SFC stability region, alpha={self.alpha:.3g}, b={self.plant.b:g}")
        axes.legend()
        return plotted(fig, ax)


def sfc_design(
    capacity: float,
    n_min: float,
    rtt_max: float,
    b: float = 2.0,
    k2: float = 0.2,
    k1: float | None = None,
    q_ref: float = 50.0,
) -> SFCDesign:
    """Robust SFC design at the corner (N_min, tau_max) of the operating range.

    Parameters
    ----------
    capacity : float
        C, packets/s.
    n_min : float
        smallest number of flows.
    rtt_max : float
        largest RTT, s.
    b : float
        packets per ACK used in the design (2 in the paper).
    k2 : float
        chosen proportional gain (dimensionless, probability per packet of window).
    k1 : float, optional
        chosen queue gain (1/packet); if given its loop margins are reported.
    q_ref : float
        target queue of the per-packet law, packets, carried into :meth:`SFCDesign.to_aqm`
        (50 in the paper's simulations; it does not change the bounds).

    Returns
    -------
    SFCDesign

    Examples
    --------
    >>> d = sfc_design(1250.0, 300, 0.6, b=2, k2=0.2)
    >>> f"{d.k1_max_printed:.5f} {d.k1_max_exact:.5f}"
    '0.00070 0.00086'
    """
    k2 = check_real("k2", k2, nonneg=True)
    if k1 is not None:
        k1 = check_real("k1", k1, positive=True)
    q_ref = check_real("q_ref", q_ref, nonneg=True)
    plant = gao_hou_plant(n_min, capacity, rtt_max, b)
    K2, theta = k2_max(plant)
    pr = k1_max_printed(plant, k2) if k2 <= K2 else 0.0
    return SFCDesign(
        alpha=plant.alpha,
        p0=plant.p0,
        theta=theta,
        k2_max=K2,
        kp_max_exact=kp_max_exact(plant),
        k2=float(k2),
        k1_max_printed=pr,
        k1_max_exact=k1_max_exact(plant, k2),
        k1=None if k1 is None else float(k1),
        plant=plant,
        q_ref=q_ref,
    )
