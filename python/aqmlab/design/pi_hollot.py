"""Hollot et al.'s PI design rule for AQM and its Tustin discretisation (docs/design/pi_hollot.md).

Continuous controller ``C_PI(s) = K (s/z + 1)/s`` on Hollot's linearisation of the
Misra-Gong-Towsley fluid model (docs/fluid.md) taken at the
worst case: fewest flows ``N-`` and largest RTT ``R+``.

* zero on the TCP pole: ``z = 2 N- / (R+^2 C)``;
* gain for a crossover ``w_g`` well below ``1/R+``.
* Tustin at ``T = 1/fs``: ``a = K (1/z + T/2)``, ``b = K (1/z - T/2)``, the law
  ``p(k) = p(k-1) + a (q(k) - q_ref) - b (q(k-1) - q_ref)``.

Decisions on ambiguities
------------------------
* Gain rule.  The published example (N- = 60, C = 3750, R+ = 0.246 s, 160 Hz) prints
  ``K = 9.64e-6``.  Exact unity loop gain at ``w_g = 0.53`` would give 9.80e-6; the printed value
  is ``w_g (2N-)^2 / ((R+ C)^3 |j w_g R+ + 1|)`` with ``w_g = 0.53`` (the queue-pole factor
  divides rather than multiplies), which puts the true crossover at ~0.521 rad/s, PM ~75 deg.
  ``gain_rule="hollot"`` (default) uses that printed formula so the published design is
  reproduced; ``gain_rule="unity"`` gives exact unity gain at ``w_g``.  The actual crossover,
  phase margin and delay margin of the delayed loop are always reported.
* ``w_g`` defaults to ``z`` (the paper's crossover 0.53 rad/s is its rounded TCP pole 0.529).
  The paper rounds ``z`` and ``w_g`` to 0.53 before computing K, a and b; with the exact
  ``z = 0.52903`` the default gives a = 1.822e-5, b = 1.816e-5 (as published) and K = 9.62e-6
  (0.2 % below the printed 9.64e-6).  Passing ``z=0.53, omega_g=0.53`` reproduces all four
  printed numbers.
* Sampling frequency: the caller chooses (160 Hz in Hollot et al. and in the EDC paper's §4.2,
  170 Hz in ns-2's default ``w_``); a scenario uses its own paper's value.

Examples
--------
>>> d = hollot_pi(60, 3750.0, 0.246, fs=160.0)
>>> f"{d.a:.4g} {d.b:.4g} {d.z:.3g}"
'1.822e-05 1.816e-05 0.529'
"""

from __future__ import annotations

from dataclasses import dataclass, field

import control

from aqmlab.design.margins import (
    DelayedMargins,
    StabilityMap,
    delayed_margins,
    is_closed_loop_stable,
    loop_stability_map,
)
from aqmlab.design.plants import check_real, misra_plant
from aqmlab.protocol import Result

__all__ = ["PIDesign", "hollot_pi", "pi_loop", "tustin_pi"]


def tustin_pi(K: float, z: float, fs: float) -> tuple[float, float]:
    """Tustin discretisation of ``K (s/z + 1)/s`` at ``fs`` Hz -> ``(a, b)``.

    ``a = K (1/z + T/2)``, ``b = K (1/z - T/2)``, ``T = 1/fs``   # docs/design/pi_hollot.md

    Parameters
    ----------
    K : float
        PI gain, 1/(packet s).
    z : float
        PI zero, rad/s.
    fs : float
        sampling frequency, Hz.

    Returns
    -------
    tuple of (float, float)
        ``(a, b)``, 1/packet.

    Examples
    --------
    >>> a, b = tustin_pi(9.64e-6, 0.53, 160.0)
    >>> f"{a:.4g} {b:.4g}"
    '1.822e-05 1.816e-05'
    """
    K = check_real("K", K)
    z = check_real("z", z, positive=True)
    fs = check_real("fs", fs, positive=True)
    T = 1.0 / fs
    return K * (1.0 / z + T / 2.0), K * (1.0 / z - T / 2.0)


def pi_loop(
    K: float, z: float, n_flows: float, capacity: float, rtt: float
) -> tuple[control.TransferFunction, float]:
    """Open loop ``C_PI(s) P(s)`` of the continuous PI on the Misra plant: ``(G, delay)``.

    Parameters
    ----------
    K : float
        PI gain, 1/(packet s).
    z : float
        PI zero, rad/s.
    n_flows : float
        N.
    capacity : float
        C, packets/s.
    rtt : float
        RTT R0, s.

    Returns
    -------
    tuple of (control.TransferFunction, float)
        ``(G, delay)``: the rational part of the open loop and its delay (s).

    Examples
    --------
    >>> G, d = pi_loop(9.64e-6, 0.529, 60, 3750.0, 0.246)
    >>> d
    0.246
    """
    P, delay = misra_plant(n_flows, capacity, rtt)
    return control.tf([K / z, K], [1.0, 0.0]) * P, delay


@dataclass(repr=False)
class PIDesign(Result):
    """Result of :func:`hollot_pi`.

    Attributes
    ----------
    K : float
        continuous PI gain ``K_PI`` (1/(packet s)).
    z : float
        PI zero, rad/s.
    omega_g : float
        design crossover used in the gain rule, rad/s.
    a, b : float
        Tustin coefficients of the discrete law (1/packet).
    fs : float
        sampling frequency, Hz.
    margins : DelayedMargins
        exact margins of the continuous delayed loop at (N-, R+).
    n_min, capacity, rtt_max : float
        design inputs.
    q_ref : float
        reference queue of the discrete law, packets (does not change the gains).
    """

    K: float
    z: float
    omega_g: float
    a: float
    b: float
    fs: float
    margins: DelayedMargins = field(repr=False)
    n_min: float = 0.0
    capacity: float = 0.0
    rtt_max: float = 0.0
    q_ref: float = 200.0

    def loop(self, n_flows: float | None = None, rtt: float | None = None):
        """Open loop ``(G, delay)`` at another operating point (default: the design point).

        Parameters
        ----------
        n_flows : float, optional
            N (default: the design's ``n_min``).
        rtt : float, optional
            RTT, s (default: the design's ``rtt_max``).

        Returns
        -------
        tuple of (control.TransferFunction, float)
            ``(G, delay)``: the rational part of the open loop and its delay (s).
        """
        return pi_loop(
            self.K,
            self.z,
            self.n_min if n_flows is None else n_flows,
            self.capacity,
            self.rtt_max if rtt is None else rtt,
        )

    def is_stable(self, n_flows: float | None = None, rtt: float | None = None) -> bool:
        """Closed-loop stability of the continuous delayed loop (argument principle).

        Parameters
        ----------
        n_flows : float, optional
            N (default: the design's ``n_min``).
        rtt : float, optional
            RTT, s (default: the design's ``rtt_max``).

        Returns
        -------
        bool
        """
        return is_closed_loop_stable(*self.loop(n_flows, rtt))

    def stability_map(self, flows, rtts) -> StabilityMap:
        """Stability and delay margin (s) of this design over an (N, RTT) grid.

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
        >>> d = hollot_pi(60, 3750.0, 0.246)
        >>> bool(d.stability_map([60, 120], [0.1, 0.246]).stable.all())
        True
        """
        return loop_stability_map(self.loop, flows, rtts)

    def to_dict(self) -> dict:
        """JSON-ready dictionary; keys ``a``, ``b``, ``K``, ``z`` are part of the CLI contract.

        Returns
        -------
        dict
        """
        return {
            "a": self.a,
            "b": self.b,
            "K": self.K,
            "z": self.z,
            "omega_g": self.omega_g,
            "fs": self.fs,
            **self.margins.to_dict(),
        }

    def _figures(self) -> dict:
        return {
            "K": self.K,
            "z": self.z,
            "a": self.a,
            "b": self.b,
            "fs": self.fs,
            "phase_margin_deg": self.margins.phase_margin,
            "delay_margin": self.margins.delay_margin,
        }

    def to_pandas(self):
        """The design as a one-row DataFrame (the columns of :meth:`to_dict`).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        return pd.DataFrame([self.to_dict()])

    def plot(self, ax=None, kind: str = "bode"):
        """Bode or Nyquist plot of the exact delayed loop at the design point.

        Parameters
        ----------
        ax : matplotlib Axes (Nyquist) or pair of Axes (Bode), optional
            Where to draw; without it, a new Figure.
        kind : str
            ``"bode"`` or ``"nyquist"``.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        return self.margins.plot(ax, kind=kind)

    def to_aqm(self) -> dict:
        """The simulator's AQM configuration of this design: ``scenario["aqm"] = d.to_aqm()``.

        ``{"type": "pi", "a": a, "b": b, "w": fs, "q_ref": q_ref}`` -- the simulator's PI names
        its sampling frequency ``w`` (Hz, ns-2's ``w_``), the design ``fs``.

        Returns
        -------
        dict

        Examples
        --------
        >>> hollot_pi(60, 3750.0, 0.246, fs=160.0, q_ref=200).to_aqm()["w"]
        160.0
        """
        return {
            "type": "pi",
            "a": float(self.a),
            "b": float(self.b),
            "w": float(self.fs),
            "q_ref": float(self.q_ref),
        }


def hollot_pi(
    n_min: float,
    capacity: float,
    rtt_max: float,
    fs: float = 160.0,
    *,
    omega_g: float | None = None,
    z: float | None = None,
    gain_rule: str = "hollot",
    q_ref: float = 200.0,
) -> PIDesign:
    """Hollot's PI design at (N-, R+) and its Tustin discretisation.

    Parameters
    ----------
    n_min : float
        smallest number of flows N-.
    capacity : float
        C, packets/s.
    rtt_max : float
        largest RTT R+, s.
    fs : float
        sampling frequency of the discrete law, Hz.
    omega_g : float, optional
        design crossover, rad/s (default: ``z``).
    z : float, optional
        PI zero, rad/s (default: the TCP pole ``2N-/(R+^2 C)``).
    gain_rule : {"hollot", "unity"}
        ``"hollot"``: ``K = w_g (2N-)^2 / ((R+ C)^3 |j w_g R+ + 1|)`` (reproduces the printed
        design); ``"unity"``: ``|C(j w_g) P(j w_g)| = 1`` exactly.
    q_ref : float
        reference queue, packets, carried into :meth:`PIDesign.to_aqm` (200 in the paper; it
        does not change the gains).

    Returns
    -------
    PIDesign

    Examples
    --------
    >>> d = hollot_pi(60, 3750.0, 0.246, 160.0, z=0.53, omega_g=0.53)
    >>> f"{d.K:.3g}"
    '9.64e-06'
    """
    N = check_real("n_min", n_min, positive=True)
    C = check_real("capacity", capacity, positive=True)
    R = check_real("rtt_max", rtt_max, positive=True)
    fs = check_real("fs", fs, positive=True)
    q_ref = check_real("q_ref", q_ref, nonneg=True)
    if omega_g is not None:
        check_real("omega_g", omega_g, positive=True)
    if z is not None:
        check_real("z", z, positive=True)
    P, _ = misra_plant(N, C, R)
    z_tcp = 2 * N / (R**2 * C)  # TCP pole, docs/design/pi_hollot.md
    z = z_tcp if z is None else float(z)
    w = z if omega_g is None else float(omega_g)
    if z <= 0 or w <= 0:
        raise ValueError(f"z and omega_g must be positive, got z={z}, omega_g={w}")
    if gain_rule == "hollot":
        K = w * (2 * N) ** 2 / ((R * C) ** 3 * abs(1j * w * R + 1))
    elif gain_rule == "unity":
        Cpi = control.tf([1.0 / z, 1.0], [1.0, 0.0])
        K = 1.0 / abs(Cpi(1j * w) * P(1j * w))
    else:
        raise ValueError(f"gain_rule must be 'hollot' or 'unity', got {gain_rule!r}")
    a, b = tustin_pi(K, z, fs)
    G, delay = pi_loop(K, z, N, C, R)
    return PIDesign(K, z, w, a, b, float(fs), delayed_margins(G, delay), N, C, R, q_ref)
