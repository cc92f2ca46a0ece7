"""Shared machinery of the fluid models: the generic ``simulate()`` and the single-bottleneck
window-model skeleton (state ``[W, q, law states]``) that Misra-Hollot, Gao-Hou and Kim-Tang-Low
specialise by their window equation only.
"""

from __future__ import annotations

import time

import numpy as np

from aqmlab.fluid.laws import FluidLaw
from aqmlab.fluid.result import Equilibrium, FluidResult, LinearizedModel
from aqmlab.fluid.solver import project_rate, solve_dde

__all__ = ["FluidCostError", "FluidModel", "WindowModel", "as_param", "batch_size"]

#: Largest number of RK4 steps one :meth:`FluidModel.simulate` call may take (about 20 minutes
#: at the ~0.5 ms a step of a small model measured on a laptop core). Raise it to run longer.
MAX_STEPS = 2_000_000
#: Largest memory (bytes) the solver's history ring and the recorded trajectory may need.
MAX_BYTES = 2 * 2**30
#: Rough wall time of one RK4 step of a small model (s); only used to explain a refusal.
_SECONDS_PER_STEP = 5e-4


class FluidCostError(ValueError):
    """A simulation would take too long or need too much memory; the message names the
    argument, its value, the estimate and the limit."""


def _human_time(seconds: float) -> str:
    for unit, size in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.2g} s"


def _human_bytes(n: float) -> str:
    for unit, size in (("TiB", 2.0**40), ("GiB", 2.0**30), ("MiB", 2.0**20)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.3g} bytes"


def _real_arg(name: str, value) -> float:
    if isinstance(value, bool | str | bytes) or value is None:
        raise ValueError(f"{name} must be a number (got {value!r})")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number (got {value!r})") from None


def as_param(value, name: str, *, positive=False, nonneg=False) -> np.ndarray:
    """Float array of a parameter, validated; the error names the parameter and the value.

    Parameters
    ----------
    value : float or array_like
        The parameter.
    name : str
        Its name, for the error.
    positive, nonneg : bool
        Require every value ``> 0`` (``>= 0``).

    Returns
    -------
    numpy.ndarray
    """
    if isinstance(value, str | bytes) or value is None:
        raise ValueError(f"{name} must be a number or an array of numbers (got {value!r})")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a number or an array of numbers (got {value!r})"
        ) from None
    if arr.size == 0:
        raise ValueError(f"{name} is empty (got {value!r})")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (got {value})")
    if positive and np.any(arr <= 0):
        raise ValueError(f"{name} must be > 0 (got {value})")
    if nonneg and np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0 (got {value})")
    return arr


def batch_size(*arrays) -> int:
    """Batch size ``B`` implied by parameters of shape ``()`` or ``(B,)`` (first axis).

    Parameters
    ----------
    *arrays : array_like
        The parameters.

    Returns
    -------
    int
    """
    shape = np.broadcast_shapes(*[np.shape(a)[:1] for a in arrays])
    return int(shape[0]) if shape else 1


class FluidModel:
    """Base of all fluid models.

    Subclasses define ``name``, ``state_names``, ``B`` and the methods ``rhs(t, y, lag)``,
    ``initial_state()``, ``bounds()``, ``max_delay()``, ``default_dt()``, ``equilibrium()``,
    ``linearize()``; optionally ``hook``/``hook_every`` for sampled-data parts.
    """

    name = "model"
    t_label = "t [s]"
    hook = None
    hook_every = 0

    # --- what a model defines (documented here once) ---------------------------------------
    def rhs(self, t, y, lag):
        """The vector field ``dy/dt`` of the batch.

        Parameters
        ----------
        t : float
            Time (s; packets for the EDC spatial model).
        y : numpy.ndarray, shape (B, n)
            The states.
        lag : aqmlab.fluid.solver.Lag
            The delayed states (``lag(delay, comps)``, ``lag.rows(delay)``).

        Returns
        -------
        numpy.ndarray, shape (B, n)
        """
        raise NotImplementedError

    def initial_state(self):
        """The default initial state.

        Returns
        -------
        numpy.ndarray, shape (B, n)
        """
        raise NotImplementedError

    def bounds(self):
        """The box the solver projects the states onto.

        Returns
        -------
        tuple of numpy.ndarray
            ``(lower, upper)``, each of shape (n,).
        """
        raise NotImplementedError

    def max_delay(self):
        """The longest delay the right-hand side reads (the solver keeps that much history).

        Returns
        -------
        float
        """
        raise NotImplementedError

    def default_dt(self):
        """The RK4 step used when :meth:`simulate` is given none.

        Returns
        -------
        float
        """
        raise NotImplementedError

    def equilibrium(self) -> Equilibrium:
        """The model's operating point for each parameter set.

        Returns
        -------
        Equilibrium
        """
        raise NotImplementedError

    def linearize(self) -> LinearizedModel:
        """The linearisation around :meth:`equilibrium`.

        Returns
        -------
        LinearizedModel
        """
        raise NotImplementedError

    def cost(self, duration, dt=None, record_dt=None) -> dict:
        """Estimated cost of :meth:`simulate` without running it.

        Parameters
        ----------
        duration : float
            Horizon (s; packets for the EDC spatial model).
        dt : float, optional
            RK4 step; default :meth:`default_dt`.
        record_dt : float, optional
            Recording interval (see :meth:`simulate`).

        Returns
        -------
        dict
            ``steps`` (RK4 steps), ``ring_bytes`` (history ring), ``record_bytes`` (recorded
            trajectory), ``bytes`` (their sum) and ``seconds`` (a rough wall-time estimate).
        """
        duration = float(duration)
        dt = float(self.default_dt() if dt is None else dt)
        steps = duration / dt
        n = len(self.state_names)
        cap = max(self.max_delay(), dt) / dt + 3
        if record_dt is None:
            records = min(steps, 5000.0) + 2
        else:
            records = steps / max(1.0, round(float(record_dt) / dt)) + 2
        ring = 2.0 * cap * self.B * n * 8
        rec = records * (self.B * n * 8 + 40)  # states + the solver's index list
        per_step = _SECONDS_PER_STEP * (1.0 + self.B * n / 2000.0)
        return {
            "steps": steps,
            "ring_bytes": ring,
            "record_bytes": rec,
            "bytes": ring + rec,
            "seconds": steps * per_step,
        }

    def check_cost(self, duration, dt=None, record_dt=None, names=None) -> dict:
        """Raise :class:`FluidCostError` if :meth:`simulate` would exceed ``MAX_STEPS`` steps or
        ``MAX_BYTES`` of memory; return :meth:`cost` otherwise.

        Parameters
        ----------
        duration, dt, record_dt : float
            As in :meth:`simulate`.
        names : dict, optional
            How the message names the culprit: ``{"duration": "--duration = 1e7s", "dt": ...,
            "delay": ...}`` (default: the argument names and values of this call).

        Returns
        -------
        dict
            :meth:`cost`.
        """
        names = {
            "duration": f"duration = {duration!r}",
            "dt": f"dt = {dt!r}",
            "delay": f"max delay = {self.max_delay():.3g}",
            **(names or {}),
        }
        c = self.cost(duration, dt, record_dt)
        step = float(self.default_dt() if dt is None else dt)
        if c["bytes"] > MAX_BYTES:
            if c["ring_bytes"] >= c["record_bytes"]:
                who = names["dt"] if dt is not None else names["delay"]
                why = f"a history of {self.max_delay():.3g} / {step:.3g} steps"
            else:
                who = names["duration"] if dt is None else names["dt"]
                why = f"recording {c['steps']:.3g} steps"
            raise FluidCostError(
                f"{who}: {why} would need ~{_human_bytes(c['bytes'])} of memory "
                f"(limit {_human_bytes(MAX_BYTES)})"
            )
        if c["steps"] > MAX_STEPS:
            who = names["duration"] if dt is None or step >= self.default_dt() else names["dt"]
            raise FluidCostError(
                f"{who}: {c['steps']:.3g} RK4 steps of dt = {step:.3g} would take "
                f"~{_human_time(c['seconds'])} (limit {MAX_STEPS:.3g} steps, "
                f"~{_human_time(MAX_STEPS * _SECONDS_PER_STEP)})"
            )
        return c

    def simulate(self, duration, *, dt=None, y0=None, history=None, record_dt=None):
        """Integrate the nonlinear model over ``[0, duration]``.

        Parameters
        ----------
        duration : float
            Horizon (s; packets for the EDC spatial model).
        dt : float, optional
            RK4 step; default :meth:`default_dt`.
        y0 : array, shape (B, n) or (n,), optional
            Initial state; default :meth:`initial_state`. With no ``history`` the history is
            constant and equal to ``y0``.
        history : callable, optional
            ``history(s, comps) -> (B, k)`` for ``s <= 0`` (see :func:`solve_dde`).
        record_dt : float, optional
            Recording interval; default ``dt`` or coarser so that at most ~5000 samples are kept.

        Returns
        -------
        FluidResult

        Raises
        ------
        FluidCostError
            The run would exceed ``MAX_STEPS`` RK4 steps or ``MAX_BYTES`` of memory
            (:meth:`check_cost`); checked before anything is computed.
        """
        duration = _real_arg("duration", duration)
        if not (np.isfinite(duration) and duration > 0):
            raise ValueError(f"duration must be a finite number > 0 (got {duration})")
        if dt is not None:
            dt = _real_arg("dt", dt)
            if not (np.isfinite(dt) and dt > 0):
                raise ValueError(f"dt must be a finite number > 0 (got {dt})")
        if record_dt is not None:
            record_dt = _real_arg("record_dt", record_dt)
            if not (np.isfinite(record_dt) and record_dt > 0):
                raise ValueError(f"record_dt must be a finite number > 0 (got {record_dt})")
        self.check_cost(duration, dt, record_dt)
        dt = float(dt or self.default_dt())
        if y0 is None:
            y0 = self.initial_state()
        y0 = np.broadcast_to(np.asarray(y0, float), (self.B, len(self.state_names))).copy()
        if record_dt is None:
            record_every = max(1, int(np.ceil(duration / dt / 5000)))
        else:
            record_every = max(1, int(round(record_dt / dt)))
        lo, hi = self.bounds()
        t0 = time.perf_counter()
        sol = solve_dde(
            self.rhs,
            (0.0, duration),
            y0,
            dt=dt,
            max_delay=self.max_delay(),
            history=history,
            lower=lo,
            upper=hi,
            record_every=record_every,
            hook=self.hook,
            hook_every=self.hook_every,
        )
        info = {
            "dt": dt,
            "wall_seconds": time.perf_counter() - t0,
            "clamped_queries": sol.clamped,
            "extrapolated_queries": sol.extrapolated,
        }
        try:
            eq = self.equilibrium()
        except ValueError:
            eq = None
        return FluidResult(
            self.name, sol.t, sol.y, list(self.state_names), eq, info, t_label=self.t_label
        )


class WindowModel(FluidModel):
    """Single bottleneck, ``N`` homogeneous window-based flows, any :mod:`~aqmlab.fluid.laws` law.

    State ``[W, q, law states...]``: ``W`` window (packets), ``q`` queue (packets). Common parts
    (docs/fluid.md):

    * arrival rate ``lambda = N W / R(q)`` (packets/s), with ``R(q) = q/C + T_p`` (s) or constant;
    * ``dq/dt = lambda - C`` projected onto ``[0, buffer]`` (``[.]^+`` at ``q = 0``); the
      buffer bound only stops the queue, drop-tail losses at the buffer are not fed back;
    * the window sees the delayed state at ``t - R(t)``: ``W(t-R)``, ``R(t-R) = R(q(t-R))`` and
      ``p(t-R)`` evaluated by the law from the delayed queue, law state and rate;
    * ``W`` is projected to ``W >= w_min`` (default 1 packet; decision: a TCP window never falls
      below one segment, which also keeps the ``1/W`` terms of the Gao-Hou and KTL models
      finite).

    Subclasses implement ``window_rhs(W, Wd, pd, R, Rd)``, ``window_partials(W0, p0, R0)``
    (analytic partial derivatives at the equilibrium), ``p_required(q)`` (the probability that
    makes ``dW/dt = 0`` at ``W = R(q) C / N``) and set ``queue_dependent_rtt``.

    Parameters
    ----------
    n_flows : float or array
        ``N``.
    capacity : float or array
        ``C`` (packets/s).
    rtt_prop : float or array
        Propagation RTT ``T_p`` (s).
    law : FluidLaw
        The AQM law.
    buffer : float or array
        Queue bound (packets; default none).
    w_min : float
        Smallest window (packets).
    """

    queue_dependent_rtt = True

    def window_rhs(self, W, Wd, pd, R, Rd):
        """``dW/dt`` of the model from the current and delayed window, probability and RTT.

        Parameters
        ----------
        W, Wd : numpy.ndarray, shape (B,)
            Window now and at ``t - R`` (packets).
        pd : numpy.ndarray, shape (B,)
            Probability at ``t - R``.
        R, Rd : numpy.ndarray, shape (B,)
            RTT now and at ``t - R`` (s).

        Returns
        -------
        numpy.ndarray, shape (B,)
        """
        raise NotImplementedError

    def window_partials(self, W0, p0, R0):
        """Partial derivatives of :meth:`window_rhs` at the operating point.

        Parameters
        ----------
        W0, p0, R0 : numpy.ndarray, shape (B,)
            Window (packets), probability and RTT (s) at the equilibrium.

        Returns
        -------
        dict
            ``{"W", "Wd", "R", "Rd", "p"}``: with respect to each argument of
            :meth:`window_rhs` (``p`` the delayed probability).
        """
        raise NotImplementedError

    def p_required(self, q):
        """The probability that makes ``dW/dt = 0`` at ``W = R(q) C / N``.

        Parameters
        ----------
        q : numpy.ndarray, shape (B,)
            Queue (packets).

        Returns
        -------
        numpy.ndarray, shape (B,)
        """
        raise NotImplementedError

    def __init__(self, n_flows, capacity, rtt_prop, law: FluidLaw, buffer=np.inf, w_min=1.0):
        self.N = as_param(n_flows, "n_flows", positive=True)
        self.C = as_param(capacity, "capacity", positive=True)
        self.Tp = as_param(rtt_prop, "rtt", positive=True)
        self.buffer = np.asarray(buffer, float)
        if np.any(self.buffer <= 0):
            raise ValueError(f"buffer must be > 0 (got {buffer})")
        if not isinstance(law, FluidLaw):
            raise ValueError(f"law must be a FluidLaw (got {law!r})")
        self.law = law
        self.w_min = float(w_min)
        self._qmax = self.buffer if np.any(np.isfinite(self.buffer)) else np.inf
        self.B = batch_size(self.N, self.C, self.Tp, self.buffer, *law.params().values())
        self.state_names = ("W", "q", *law.state_names)

    # --- model pieces -------------------------------------------------------------------
    def rtt(self, q):
        """Round-trip time (s): ``q/C + T_p`` (or ``T_p`` when not queue-dependent).

        Parameters
        ----------
        q : numpy.ndarray, shape (B,)
            Queue (packets).

        Returns
        -------
        numpy.ndarray, shape (B,)
        """
        return q / self.C + self.Tp if self.queue_dependent_rtt else self.Tp + 0.0 * q

    def rhs(self, t, y, lag):
        W, q, z = y[:, 0], y[:, 1], y[:, 2:]
        R = self.rtt(q)
        d = lag.rows(R)  # all states at t - R(t)
        Wd, qd, zd = d[:, 0], d[:, 1], d[:, 2:]
        Rd = self.rtt(qd)
        pd = self.law.prob(qd, zd, self.N * Wd / Rd, self.C)
        rate = self.N * W / R
        out = np.empty_like(y)
        out[:, 0] = project_rate(W, self.window_rhs(W, Wd, pd, R, Rd), self.w_min)
        out[:, 1] = project_rate(q, rate - self.C, 0.0, self._qmax)
        if z.shape[1]:
            out[:, 2:] = self.law.deriv(q, z, rate, self.C, out[:, 1])
        return out

    def initial_state(self):
        """Flows start with ``W = w_min`` and an empty queue; the law starts at rest.

        Returns
        -------
        numpy.ndarray, shape (B, n)
        """
        W = np.full(self.B, self.w_min)
        q = np.zeros(self.B)
        return np.column_stack([W, q, self.law.initial(q)])

    def bounds(self):
        lo = [self.w_min, 0.0, *self.law.lower]
        hi = [np.inf, float(np.max(self.buffer)), *self.law.upper]
        return np.array(lo), np.array(hi)

    def max_delay(self):
        qmax = self.buffer if np.all(np.isfinite(self.buffer)) else 10.0 * self.C * self.Tp
        return float(np.max(self.Tp + qmax / self.C))

    def default_dt(self):
        """``min(T_p)/10``, at most 10 ms (RK4 error well below plotting accuracy).

        Returns
        -------
        float
        """
        return float(min(0.01, np.min(self.Tp) / 10))

    # --- equilibrium and linearisation --------------------------------------------------
    def equilibrium(self) -> Equilibrium:
        """Closed-loop operating point: ``W' = q' = 0`` and the law at rest.

        Integral laws (PI, REM) fix ``q0`` at their set point; proportional laws (RED, PD-LQ,
        SFC) meet the plant where ``law.static_prob(q) = p_required(q)`` (vectorised bisection
        on ``[0, buffer]``). Raises ``ValueError`` when no meaningful point exists.

        Returns
        -------
        Equilibrium
            ``W``, ``q``, ``p``, ``R``.
        """
        law = self.law
        B = self.B
        if law.setpoint is not None:
            q0 = np.broadcast_to(np.asarray(law.setpoint, float), (B,)).copy()
        else:
            hi = np.broadcast_to(
                np.where(np.isfinite(self.buffer), self.buffer, 1e3 * self.C * self.Tp), (B,)
            ).copy()
            lo = np.zeros(B)
            for _ in range(200):
                mid = 0.5 * (lo + hi)
                g = law.static_prob(mid, self.C) - self.p_required(mid)
                lo, hi = np.where(g < 0, mid, lo), np.where(g < 0, hi, mid)
            q0 = 0.5 * (lo + hi)
        q0 = np.broadcast_to(q0, (B,)).astype(float)
        p0 = np.broadcast_to(self.p_required(q0), (B,)).astype(float)
        if np.any((p0 < 0) | (p0 > 1)):
            raise ValueError(f"no meaningful equilibrium: p0 = {p0} outside [0, 1]")
        R0 = np.broadcast_to(self.rtt(q0), (B,)).astype(float)
        W0 = np.broadcast_to(R0 * self.C / self.N, (B,)).astype(float)
        z0 = law.rest_state(q0, p0, np.broadcast_to(self.C, (B,)))
        state = np.column_stack([W0, q0, z0])
        return Equilibrium({"W": W0, "q": q0, "p": p0, "R": R0}, state)

    def linearize(self) -> LinearizedModel:
        """Open-loop plant linearisation at :meth:`equilibrium` (input ``dp(t - R0)``).

        States ``[dW, dq]``. ``A``/``Ad`` hold the partials with respect to the current/delayed
        state, including the queue dependence of ``R``; ``A_identified`` (``A + Ad``) is the
        papers' form (Hollot et al. 2001, SFC eq. 14, KTL eq. 2).

        Returns
        -------
        LinearizedModel
        """
        eq = self.equilibrium()
        W0, p0, R0 = eq["W"], eq["p"], eq["R"]
        dR = (1.0 / self.C if self.queue_dependent_rtt else 0.0) * np.ones(self.B)
        P = self.window_partials(W0, p0, R0)
        A = np.zeros((self.B, 2, 2))
        Ad = np.zeros((self.B, 2, 2))
        Bm = np.zeros((self.B, 2, 1))
        A[:, 0, 0] = P["W"]
        A[:, 0, 1] = P["R"] * dR
        Ad[:, 0, 0] = P["Wd"]
        Ad[:, 0, 1] = P["Rd"] * dR
        Bm[:, 0, 0] = P["p"]
        A[:, 1, 0] = self.N / R0  # d(N W / R)/dW
        A[:, 1, 1] = -self.N * W0 / R0**2 * dR  # d(N W / R)/dq = -1/R0 when R = q/C + Tp
        return LinearizedModel(A, Ad, Bm, R0, ["W", "q"], ["p"], {"equilibrium": eq})
