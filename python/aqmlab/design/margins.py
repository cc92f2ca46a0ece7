"""Margins and stability of loops with a pure time delay, from the exact frequency response.

A delayed loop is ``L(s) = G(s) * exp(-s * delay)`` with ``G`` a rational
:class:`control.TransferFunction` (strictly proper for the stability test).  Everything here
works on the exact ``L(j w)``; a Pade approximation is only produced on request
(:func:`pade_loop`) for tools that need a rational model (root locus, ``control.feedback``).

Functions
---------
delayed_freqresp
    ``L(j w)`` with the exact delay factor.
delayed_margins
    gain margin, phase margin, crossover frequencies and delay margin -> :class:`DelayedMargins`.
unstable_closed_loop_roots
    number of closed-loop roots of ``1 + L(s) = 0`` with ``Re s > 0`` (argument principle,
    no Pade); :func:`is_closed_loop_stable` is the boolean form.
stability_map
    evaluate a design function on an (N, RTT) grid -> :class:`StabilityMap` with ``.plot()``.
pade_loop
    rational approximation ``G(s) * pade(delay)``.

Examples
--------
>>> import control
>>> from aqmlab.design import delayed_margins
>>> m = delayed_margins(control.tf([2.0], [1.0, 1.0]), delay=0.1)
>>> round(m.crossover_frequency, 4)   # sqrt(K^2 - 1) / T
1.7321
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import control
import numpy as np
from scipy.optimize import brentq

from aqmlab.protocol import Result, deprecated, new_axes, plotted

__all__ = [
    "DelayedMargins",
    "StabilityMap",
    "delayed_freqresp",
    "delayed_margins",
    "is_closed_loop_stable",
    "loop_stability_map",
    "pade_loop",
    "stability_map",
    "unstable_closed_loop_roots",
]


def _zpk(G: control.TransferFunction) -> tuple[np.ndarray, np.ndarray, float]:
    num = np.atleast_1d(np.squeeze(G.num[0][0])).astype(float)
    den = np.atleast_1d(np.squeeze(G.den[0][0])).astype(float)
    num = np.trim_zeros(num, "f")
    den = np.trim_zeros(den, "f")
    return np.roots(num), np.roots(den), float(num[0] / den[0])


def delayed_freqresp(G: control.TransferFunction, delay: float, omega) -> np.ndarray:
    """Exact frequency response ``G(j w) exp(-j w delay)``.

    Parameters
    ----------
    G : control.TransferFunction
        Rational (delay-free) part of the loop, SISO, continuous time.
    delay : float
        Pure delay in seconds (>= 0).
    omega : array_like
        Frequencies in rad/s.

    Returns
    -------
    numpy.ndarray of complex

    Examples
    --------
    >>> import control, numpy as np
    >>> float(abs(delayed_freqresp(control.tf([1], [1, 0]), 0.5, [2.0])[0]))
    0.5
    """
    w = np.asarray(omega, dtype=float)
    return np.asarray(G(1j * w)) * np.exp(-1j * w * delay)


def _continuous_phase(G: control.TransferFunction, delay: float, w: np.ndarray) -> np.ndarray:
    """Phase of ``L(j w)`` (rad), continuous in w > 0, built factor by factor (no unwrapping)."""
    zeros, poles, k = _zpk(G)
    jw = 1j * np.asarray(w, dtype=float)[..., None]
    ph = np.sum(np.angle(jw - zeros), axis=-1) - np.sum(np.angle(jw - poles), axis=-1)
    return ph + (0.0 if k > 0 else np.pi) - np.asarray(w) * delay


def _frequency_span(G: control.TransferFunction, delay: float) -> tuple[float, float]:
    zeros, poles, _ = _zpk(G)
    corners = np.abs(np.concatenate([zeros, poles]))
    corners = corners[corners > 0]
    if delay > 0:
        corners = np.append(corners, 1.0 / delay)
    lo = (corners.min() if corners.size else 1.0) * 1e-4
    hi = (corners.max() if corners.size else 1.0) * 1e4
    # push the upper end until the loop magnitude is small (high-gain loops cross late)
    while abs(G(1j * hi)) > 1e-3 and hi < 1e12:
        hi *= 10.0
    return lo, hi


def _roots_on_grid(
    f: Callable[[float], float], grid: np.ndarray, vals: np.ndarray | None = None
) -> list[float]:
    vals = np.array([f(x) for x in grid]) if vals is None else vals
    out = []
    for i in np.nonzero(np.sign(vals[:-1]) * np.sign(vals[1:]) < 0)[0]:
        out.append(brentq(f, grid[i], grid[i + 1], xtol=1e-14, rtol=1e-12))
    return out


@dataclass(repr=False)
class DelayedMargins(Result):
    """Margins of ``L(s) = G(s) exp(-s delay)`` (result of :func:`delayed_margins`).

    Attributes
    ----------
    gain_margin : float
        ``1 / |L(j w_pc)|`` at the phase crossover with the largest ``|L|`` (``inf`` if none).
    phase_margin : float
        ``180 + arg L(j w_gc)`` in degrees at the (lowest-margin) gain crossover, wrapped to
        (-180, 180] (``inf`` if ``|L| < 1`` everywhere).
    crossover_frequency : float
        gain crossover ``w_gc`` (rad/s) where ``|L| = 1``.
    phase_crossover_frequency : float
        ``w_pc`` (rad/s) where ``arg L = -180 deg``.
    delay_margin : float
        extra delay (s) the loop tolerates: ``min_gc PM(w_gc) / w_gc`` with the phase margin
        wrapped to [-pi, pi); negative when a crossover has negative phase margin.
    G, delay
        the loop that was analysed.
    """

    gain_margin: float
    phase_margin: float
    crossover_frequency: float
    phase_crossover_frequency: float
    delay_margin: float
    G: control.TransferFunction = field(repr=False)
    delay: float = 0.0

    def _figures(self) -> dict:
        return {
            "gain_margin": self.gain_margin,
            "phase_margin_deg": self.phase_margin,
            "crossover_frequency": self.crossover_frequency,
            "delay_margin": self.delay_margin,
            "delay": self.delay,
        }

    def to_dict(self) -> dict:
        """Plain-float dictionary (for JSON).

        Returns
        -------
        dict
        """
        return {
            "gain_margin": self.gain_margin,
            "phase_margin_deg": self.phase_margin,
            "crossover_frequency": self.crossover_frequency,
            "phase_crossover_frequency": self.phase_crossover_frequency,
            "delay_margin": self.delay_margin,
        }

    def to_pandas(self):
        """The margins as a one-row DataFrame (the columns of :meth:`to_dict`).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        return pd.DataFrame([self.to_dict()])

    def plot(self, ax=None, kind: str = "bode"):
        """Bode (``kind="bode"``) or Nyquist (``kind="nyquist"``) plot of the exact delayed loop.

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
        if isinstance(ax, str):  # the old order plot(kind, ax), kept for one release
            deprecated("DelayedMargins.plot(kind)", "plot(kind=kind)")
            ax, kind = (None if kind == "bode" else kind), ax
        lo, hi = _frequency_span(self.G, self.delay)
        w = np.logspace(np.log10(lo), np.log10(hi), 2000)
        L = delayed_freqresp(self.G, self.delay, w)
        if kind == "nyquist":
            fig, axes = new_axes(ax)
            axes.plot(L.real, L.imag, "C0")
            axes.plot(L.real, -L.imag, "C0--", lw=0.8)
            axes.plot([-1], [0], "r+", ms=12)
            axes.set_xlabel("Re L(jw)")
            axes.set_ylabel("Im L(jw)")
            axes.set_title("Nyquist (exact delay)")
            return plotted(fig, ax)
        fig, axes = new_axes(ax, 2, 1, sharex=True)
        axes[0].loglog(w, np.abs(L))
        axes[0].axhline(1.0, color="gray", lw=0.8)
        axes[0].set_ylabel("|L(jw)|")
        axes[1].semilogx(w, np.degrees(_continuous_phase(self.G, self.delay, w)))
        axes[1].axhline(-180.0, color="gray", lw=0.8)
        axes[1].set_ylim(-540, 90)
        axes[1].set_ylabel("phase (deg)")
        axes[1].set_xlabel("w (rad/s)")
        axes[0].set_title(
            f"GM={self.gain_margin:.3g}, PM={self.phase_margin:.3g} deg, DM={self.delay_margin:.3g} s"
        )
        return plotted(fig, ax)


def delayed_margins(G: control.TransferFunction, delay: float = 0.0) -> DelayedMargins:
    """Gain, phase and delay margins of ``G(s) exp(-s delay)`` from the exact frequency response.

    Parameters
    ----------
    G : control.TransferFunction
        Rational part of the open loop (SISO, continuous time).
    delay : float
        Loop delay in seconds.

    Returns
    -------
    DelayedMargins

    Notes
    -----
    Gain crossovers are the roots of ``|G(j w)| = 1`` (the delay does not change the
    magnitude); phase crossovers the roots of ``arg L(j w) = -(2k+1) pi`` with the phase built
    continuously from the poles and zeros.  The delay margin is the classical
    ``(pi + arg L(j w_gc)) / w_gc`` minimised over gain crossovers.

    Examples
    --------
    First order plus delay ``K e^{-sL}/(Ts+1)``, closed form ``w_gc = sqrt(K^2-1)/T``:

    >>> import control
    >>> m = delayed_margins(control.tf([2.0], [0.5, 1.0]), delay=0.2)
    >>> round(m.crossover_frequency, 4)
    3.4641
    """
    if delay < 0:
        raise ValueError(f"delay must be >= 0, got {delay}")
    lo, hi = _frequency_span(G, delay)
    grid = np.logspace(np.log10(lo), np.log10(hi), 4000)

    def logmag(w: float) -> float:
        return float(np.log(abs(G(1j * w))))

    wgc = _roots_on_grid(logmag, grid, np.log(np.abs(G(1j * grid))))
    phase = lambda w: float(_continuous_phase(G, delay, np.array(w)))  # noqa: E731

    pm, wg, dm = np.inf, np.nan, np.inf
    for w in wgc:
        ph = phase(w)
        margin = (np.pi + ph + np.pi) % (2 * np.pi) - np.pi  # in [-pi, pi)
        dm_w = margin / w  # negative: this crossover already violates the phase condition
        wrapped = np.degrees(margin)
        if dm_w < dm:
            dm, wg, pm = dm_w, w, wrapped
    # phase crossovers: arg L = -(2k+1) pi
    ph_grid = _continuous_phase(G, delay, grid)
    gm, wp = np.inf, np.nan
    kmin = int(np.floor((-ph_grid.max() - np.pi) / (2 * np.pi)))
    kmax = int(np.ceil((-ph_grid.min() - np.pi) / (2 * np.pi)))
    for k in range(max(kmin, 0), min(kmax, 200) + 1):
        target = -(2 * k + 1) * np.pi
        for w in _roots_on_grid(lambda w, t=target: phase(w) - t, grid, ph_grid - target):
            g = 1.0 / abs(G(1j * w))
            if g < gm:
                gm, wp = g, w
    return DelayedMargins(float(gm), float(pm), float(wg), float(wp), float(dm), G, float(delay))


def unstable_closed_loop_roots(
    G: control.TransferFunction, delay: float = 0.0, shift: float | None = None
) -> int:
    """Number of roots of ``1 + G(s) exp(-s delay) = 0`` in the right half-plane.

    Argument principle on the line ``Re s = shift`` (a small positive shift steps round
    open-loop poles on the imaginary axis, e.g. a PI integrator): ``Z = P - Delta arg / pi``
    where ``P`` counts open-loop poles right of the line and ``Delta arg`` is the phase change
    of ``1 + L`` for ``w`` from 0 to infinity (real-coefficient symmetry gives the other half).
    ``G`` must be strictly proper so that ``L -> 0`` on the large semicircle.

    Parameters
    ----------
    G : control.TransferFunction
        Rational loop part (strictly proper).
    delay : float
        Loop delay, s.
    shift : float, optional
        Real part of the contour; default ``1e-7`` times the smallest non-zero pole/zero
        magnitude.  Roots with ``0 < Re s < shift`` are reported as stable.

    Returns
    -------
    int

    Examples
    --------
    Integrator plus delay ``k e^{-s tau}/s`` is stable iff ``k tau < pi/2``:

    >>> import control
    >>> unstable_closed_loop_roots(control.tf([1.0], [1.0, 0.0]), delay=1.5)
    0
    >>> unstable_closed_loop_roots(control.tf([1.0], [1.0, 0.0]), delay=1.7)
    2
    """
    zeros, poles, _ = _zpk(G)
    if len(zeros) >= len(poles):
        raise ValueError("G must be strictly proper")
    lo, hi = _frequency_span(G, delay)
    if shift is None:
        mags = np.abs(np.concatenate([zeros, poles]))
        mags = mags[mags > 0]
        shift = 1e-7 * (mags.min() if mags.size else 1.0)
    P = int(np.sum(poles.real > shift))
    # Beyond the last frequency with |G| >= 1/2, 1 + L stays in the disc |F - 1| < 1/2, which
    # excludes the origin: the rest of the path adds only the angle back to F = 1.
    coarse = np.logspace(np.log10(lo), np.log10(hi), 3000)
    big = np.nonzero(np.abs(G(shift + 1j * coarse)) >= 0.5)[0]
    w_top = coarse[min(big.max() + 1, coarse.size - 1)] if big.size else lo
    n = max(2000, int(w_top * delay / 0.2))
    while True:
        # the log part starts below the shift to resolve poles at the origin
        w = np.union1d(
            np.logspace(np.log10(min(lo, shift / 100)), np.log10(w_top), n),
            np.linspace(0.0, w_top, n),
        )
        s = shift + 1j * w
        F = 1.0 + np.asarray(G(s)) * np.exp(-s * delay)
        steps = np.angle(F[1:] / F[:-1])
        if np.max(np.abs(steps)) < 0.5 or n > 2_000_000:
            break
        n *= 4
    dphi = float(np.sum(steps)) + float(np.angle(1.0 / F[-1]))
    return int(round(P - dphi / np.pi))


def is_closed_loop_stable(G: control.TransferFunction, delay: float = 0.0) -> bool:
    """``True`` if ``1 + G(s) exp(-s delay)`` has no right-half-plane roots.

    See :func:`unstable_closed_loop_roots`.

    Parameters
    ----------
    G : control.TransferFunction
        rational loop part (strictly proper).
    delay : float
        loop delay, s.

    Returns
    -------
    bool

    Examples
    --------
    >>> import control
    >>> is_closed_loop_stable(control.tf([1.0], [1.0, 0.0]), delay=1.5)
    True
    """
    return unstable_closed_loop_roots(G, delay) == 0


def pade_loop(G: control.TransferFunction, delay: float, order: int = 6):
    """Rational model ``G(s) * Pade_order(delay)`` (only for tools that need one).

    Parameters
    ----------
    G : control.TransferFunction
        rational loop part.
    delay : float
        delay to approximate, s.
    order : int
        Pade order.

    Returns
    -------
    control.TransferFunction

    Examples
    --------
    >>> import control
    >>> L = pade_loop(control.tf([1.0], [1.0, 1.0]), 0.1, order=3)
    >>> L.poles().size
    4
    """
    num, den = control.pade(delay, order)
    return G * control.tf(num, den)


@dataclass(repr=False)
class StabilityMap(Result):
    """A function evaluated on an (N, RTT) grid (result of :func:`stability_map`).

    Attributes
    ----------
    flows : numpy.ndarray
        N values (rows).
    rtts : numpy.ndarray
        RTT values in seconds (columns).
    stable : numpy.ndarray of bool, shape (len(flows), len(rtts))
    value : numpy.ndarray of float
        the scalar returned with the verdict (e.g. delay margin in s), ``nan`` if none.
    """

    flows: np.ndarray
    rtts: np.ndarray
    stable: np.ndarray
    value: np.ndarray

    def _figures(self) -> dict:
        return {
            "flows": f"{self.flows.min():g}..{self.flows.max():g} ({self.flows.size})",
            "rtts": f"{self.rtts.min():g}..{self.rtts.max():g} s ({self.rtts.size})",
            "stable_fraction": float(self.stable.mean()),
            "min_value": float(np.nanmin(self.value)) if np.isfinite(self.value).any() else None,
        }

    def to_pandas(self):
        """One row per grid point: ``flows``, ``rtt``, ``stable``, ``value``.

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        n, r = np.meshgrid(self.flows, self.rtts, indexing="ij")
        return pd.DataFrame(
            {
                "flows": n.ravel(),
                "rtt": r.ravel(),
                "stable": self.stable.ravel(),
                "value": self.value.ravel(),
            }
        )

    def plot(self, ax=None, label: str = "value"):
        """Colour map of ``value`` with unstable cells hatched out.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; without it, a new Figure.
        label : str
            The colour bar's label.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        fig, axes = new_axes(ax)
        v = np.where(self.stable, self.value, np.nan)
        m = axes.pcolormesh(self.rtts, self.flows, v, shading="nearest")
        axes.contourf(
            self.rtts, self.flows, ~self.stable, levels=[0.5, 1.5], colors="none", hatches=["//"]
        )
        axes.figure.colorbar(m, ax=axes, label=label)
        axes.set_xlabel("RTT (s)")
        axes.set_ylabel("N (flows)")
        axes.set_title("stability map (hatched: unstable)")
        return plotted(fig, ax)


def stability_map(
    evaluate: Callable[[float, float], tuple[bool, float]],
    flows: Sequence[float],
    rtts: Sequence[float],
) -> StabilityMap:
    """Evaluate ``evaluate(N, rtt) -> (stable, value)`` on every grid point.

    Parameters
    ----------
    evaluate : callable
        Returns the verdict and a scalar (delay margin, spectral radius, ...).
    flows, rtts : sequence of float
        Grid axes (N in flows, RTT in seconds).

    Returns
    -------
    StabilityMap

    Examples
    --------
    >>> import control
    >>> from aqmlab.design import misra_plant
    >>> def ev(n, r):
    ...     G, d = misra_plant(n, 3750.0, r)
    ...     L = G * control.tf([1e-5 / 0.53, 1e-5], [1.0, 0.0])
    ...     return is_closed_loop_stable(L, d), delayed_margins(L, d).delay_margin
    >>> sm = stability_map(ev, [60, 120], [0.1, 0.246])
    >>> bool(sm.stable.all())
    True
    """
    flows = np.asarray(flows, dtype=float)
    rtts = np.asarray(rtts, dtype=float)
    stable = np.zeros((flows.size, rtts.size), dtype=bool)
    value = np.full((flows.size, rtts.size), np.nan)
    for i, n in enumerate(flows):
        for j, r in enumerate(rtts):
            ok, v = evaluate(float(n), float(r))
            stable[i, j] = bool(ok)
            value[i, j] = np.nan if v is None else float(v)
    return StabilityMap(flows, rtts, stable, value)


def loop_stability_map(
    loop: Callable[[float, float], tuple[control.TransferFunction, float]],
    flows: Sequence[float],
    rtts: Sequence[float],
) -> StabilityMap:
    """Stability and delay margin (s) of ``loop(N, rtt) -> (G, delay)`` over a grid.

    Points where ``loop`` raises ``ValueError`` (no meaningful equilibrium) are marked unstable
    with value ``nan``.

    Parameters
    ----------
    loop : callable
        returns the open loop ``(G, delay)`` at ``(N, rtt)``.
    flows, rtts : sequence of float
        grid axes (N in flows, RTT in seconds).

    Returns
    -------
    StabilityMap

    Examples
    --------
    >>> import control
    >>> sm = loop_stability_map(lambda n, r: (control.tf([n], [1.0, 0.0]), r), [1.0], [1.0, 2.0])
    >>> sm.stable.tolist()   # k tau < pi/2
    [[True, False]]
    """

    def ev(n: float, r: float):
        try:
            G, tau = loop(n, r)
        except ValueError:
            return False, None
        return is_closed_loop_stable(G, tau), delayed_margins(G, tau).delay_margin

    return stability_map(ev, flows, rtts)
