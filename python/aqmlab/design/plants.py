"""Linearised plants used by the design methods (docs/fluid.md).

Each function takes the linearisation from :mod:`aqmlab.fluid` (``Model.linearize()``, with the
delayed and current states identified as the papers do) and returns it in the form a design
method needs.  Units: capacities in packets/s, times in seconds, queues in packets.

misra_plant
    Hollot's delta-p -> delta-q transfer function of the Misra model (section 1.1).
gao_hou_plant
    Gao-Hou enhanced model: operating point and the state-space matrices (section 1.3).
ktl_constants
    Kim-Tang-Low A1, A2, B1 and p* (section 1.4).
edc_spatial_plant
    EDC's packet-arrival-indexed model (section 1.6).
"""

from __future__ import annotations

from dataclasses import dataclass

import control
import numpy as np

from aqmlab import fluid

__all__ = [
    "GaoHouPlant",
    "KTLConstants",
    "edc_spatial_plant",
    "gao_hou_plant",
    "ktl_constants",
    "misra_plant",
]


def check_real(name: str, value, *, positive: bool = False, nonneg: bool = False) -> float:
    """``value`` as a finite float, or a ``ValueError`` naming ``name`` and the value.

    Parameters
    ----------
    name : str
        The argument's name, used in the message.
    value : object
        What the caller passed (a string, None or a bool is rejected, not coerced).
    positive : bool
        Require ``value > 0``.
    nonneg : bool
        Require ``value >= 0``.
    """
    if isinstance(value, bool | str | bytes) or value is None:
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if positive and v <= 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    if nonneg and v < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return v


def _positive(**kw: float) -> None:
    for k, v in kw.items():
        check_real(k, v, positive=True)


def misra_plant(
    n_flows: float, capacity: float, rtt: float, q0: float = 0.0
) -> tuple[control.TransferFunction, float]:
    """Hollot's linearisation of the Misra model: ``-delta q / delta p`` and its delay.

    ``P(s) = (C^2/(2N)) / ((s + 2N/(R^2 C)) (s + 1/R)) * exp(-s R)``   # docs/fluid.md
    (returned with positive gain: marking more lowers the queue, the sign is put in the loop).

    Parameters
    ----------
    n_flows : float
        Number of long-lived TCP flows N.
    capacity : float
        Bottleneck capacity C, packets/s.
    rtt : float
        Operating-point round-trip time R0 = q0/C + Tp, s.
    q0 : float
        Operating queue (packets); only splits R0 into queueing and propagation delay.

    Returns
    -------
    (control.TransferFunction, float)
        Rational part (packets per unit probability) and the delay R0 (s).

    Examples
    --------
    >>> G, d = misra_plant(60, 3750.0, 0.246)
    >>> round(float(G.dcgain()), 1)   # (R C)^3 / (2N)^2
    54517.6
    """
    _positive(n_flows=n_flows, capacity=capacity, rtt=rtt)
    check_real("q0", q0, nonneg=True)
    if not 0 <= q0 < rtt * capacity:
        raise ValueError(f"q0 must be in [0, rtt*capacity), got {q0}")
    model = fluid.Misra(n_flows, capacity, rtt - q0 / capacity, fluid.PI(qref=q0))
    lin = model.linearize()
    A, B = lin.A_identified[0], lin.B[0]
    G = -control.tf(control.ss(A, B, [[0.0, 1.0]], 0))  # output dq, states [dW, dq]
    num = np.atleast_1d(np.squeeze(G.num[0][0])).astype(float)
    num[np.abs(num) < 1e-12 * np.abs(num).max()] = 0.0  # round-off of the ss -> tf conversion
    return control.tf(np.trim_zeros(num, "f"), G.den[0][0]), float(lin.delay[0])


@dataclass
class GaoHouPlant:
    """Gao-Hou enhanced TCP model at its operating point (docs/fluid.md).

    Attributes
    ----------
    alpha : float
        ``tau C / N`` = equilibrium window w0 (packets).
    p0 : float
        equilibrium marking probability, SFC eq. 11.
    k, T : float
        gain and time constant of the window plant ``W/P = -k e^{-tau s}/(1 + T s)``.
    A, D : numpy.ndarray
        state matrices of ``x' = A x + D delta p(t - tau)``, ``x = [dq, dw]``, SFC eq. 14.
    n_flows, capacity, tau, b : float
        model inputs.
    """

    alpha: float
    p0: float
    k: float
    T: float
    A: np.ndarray
    D: np.ndarray
    n_flows: float
    capacity: float
    tau: float
    b: float


def gao_hou_plant(n_flows: float, capacity: float, tau: float, b: float = 1.0) -> GaoHouPlant:
    """Operating point and linear model of the Gao-Hou model.

    Parameters
    ----------
    n_flows : float
        N, number of flows.
    capacity : float
        C, packets/s.
    tau : float
        round-trip time, s (treated as constant).
    b : float
        packets acknowledged per ACK (1, or 2 with delayed ACKs).

    Returns
    -------
    GaoHouPlant

    Raises
    ------
    ValueError
        if the equilibrium is not meaningful (``p0`` outside (0, 1]).

    Examples
    --------
    >>> pl = gao_hou_plant(300, 1250.0, 0.6, b=2)
    >>> round(pl.alpha, 3), round(pl.p0, 3)
    (2.5, 0.143)
    """
    _positive(n_flows=n_flows, capacity=capacity, tau=tau, b=b)
    alpha = tau * capacity / n_flows  # w0, SFC eq. 11
    model = fluid.GaoHou(n_flows, capacity, tau, fluid.PI(qref=0.0), b=b)
    try:
        lin = model.linearize()
    except ValueError as e:
        raise ValueError(f"N={n_flows}, C={capacity}, tau={tau}, b={b}: {e}") from None
    p0 = float(lin.extra["equilibrium"]["p"][0])
    if not (0 < p0 <= 1):
        raise ValueError(
            f"no meaningful equilibrium: p0 = {p0:.4g} for N={n_flows}, C={capacity}, tau={tau}, b={b}"
        )
    Af = lin.A_identified[0]  # states [dW, dq]
    pole = -Af[0, 0]  # p0 (1 + 2 b w0) / (2 b tau), SFC eq. 13
    Bw = float(lin.B[0][0, 0])  # -1/(b tau p0)
    A = np.array([[0.0, Af[1, 0]], [0.0, -pole]])  # SFC eq. 14, x = [dq, dw]
    D = np.array([[0.0], [Bw]])
    k, T = -Bw / pole, 1.0 / pole
    return GaoHouPlant(
        alpha, p0, float(k), float(T), A, D, float(n_flows), float(capacity), float(tau), float(b)
    )


@dataclass
class KTLConstants:
    """Kim-Tang-Low linearisation constants (docs/fluid.md, KTL eq. 2).

    Attributes
    ----------
    A1, A2, B1 : float
        ``delta b'' = A1 delta b + A2 delta b' + B1 delta p(t - tau)``.
    tau : float
        equilibrium RTT ``d + b*/c``, s.
    w_star, p_star : float
        equilibrium window (packets) and marking probability.
    """

    A1: float
    A2: float
    B1: float
    tau: float
    w_star: float
    p_star: float


def ktl_constants(capacity: float, n_flows: float, prop_rtt: float, q_ref: float) -> KTLConstants:
    """Constants of the Kim-Tang-Low AIMD model at queue ``q_ref``.

    Parameters
    ----------
    capacity : float
        c, packets/s.
    n_flows : float
        N identical sources.
    prop_rtt : float
        round-trip propagation delay d, s.
    q_ref : float
        target queue b*, packets (>= 0).

    Returns
    -------
    KTLConstants

    Examples
    --------
    >>> k = ktl_constants(4000.0, 100, 0.15, 200.0)
    >>> round(k.tau, 3), round(k.p_star, 4)
    (0.2, 0.0303)
    """
    _positive(capacity=capacity, n_flows=n_flows, prop_rtt=prop_rtt)
    check_real("q_ref", q_ref, nonneg=True)
    lin = fluid.KTL(n_flows, capacity, prop_rtt, fluid.PI(qref=q_ref)).linearize()
    eq, x = lin.extra["equilibrium"], lin.extra
    # KTL eq. 2 constants A1, A2, B1 (docs/fluid.md)
    return KTLConstants(
        float(x["A1"][0]),
        float(x["A2"][0]),
        float(x["B1"][0]),
        float(eq["R"][0]),
        float(eq["W"][0]),
        float(eq["p"][0]),
    )


def edc_spatial_plant(
    n_flows: float, capacity: float, q0: float, prop_rtt: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """EDC's linear plant in the packet-arrival domain (``theta`` = arrivals).

    ``d x/d theta = A x + B delta p``, ``delta q = Cq x``, ``x = [dW, dq]``  # EDC eqs. 7-9

    Parameters
    ----------
    n_flows : float
        N.
    capacity : float
        C, packets/s.
    q0 : float
        operating queue, packets.
    prop_rtt : float
        propagation RTT Tp, s (R0 = q0/C + Tp).

    Returns
    -------
    (A, B, Cq) : numpy arrays, per packet arrival

    Examples
    --------
    >>> A, B, Cq = edc_spatial_plant(60, 187.5, 200, 0.1)
    >>> bool((np.linalg.eigvals(A) < 0).all())
    True
    """
    _positive(n_flows=n_flows, capacity=capacity, prop_rtt=prop_rtt)
    check_real("q0", q0, nonneg=True)
    lin = fluid.EDC(n_flows, capacity, prop_rtt, qref=q0).linearize()
    return lin.A_identified[0], lin.B[0], np.array([[0.0, 1.0]])
