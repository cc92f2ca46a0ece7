"""SQM's online tuning (docs/online.md): Algorithm 1, Algorithm 2, the alpha-fair NUM optimum
and a period controller over the steppable :class:`aqmlab.sim.Simulation`.

Public API
----------
Algorithm 1 (:mod:`aqmlab.online.ogd`)
    ``online_gradient(present, routing, capacity, alpha, epsilon) -> OGDResult``,
    ``ogd_step``, ``project(y, routing, capacity, epsilon) -> Projection`` (exact, KKT-certified),
    ``kkt_residuals``, ``ogd_bounds`` (D, G), ``regret``, ``alpha_fair_utility``,
    ``alpha_fair_gradient``.
NUM optimum (:mod:`aqmlab.online.num`)
    ``num_optimum(routing, capacity, alpha, weights, lower) -> NUMResult``.
Algorithm 2 (:mod:`aqmlab.online.tuning`)
    ``link_tuning(rates, rtts, capacity, alpha, sigma_rule, ...) -> LinkTuning``.
Controller (:mod:`aqmlab.online.controller`)
    ``run_controller(sim, flows, ...) -> ControllerResult``, ``ParamMapping`` (where a flow's
    weight and sigma are written: DRR class weights), ``SqmMapping`` (the sqm qdisc's
    elephant slots, ``queues.N.weight``).
"""

from aqmlab.online.controller import ControllerResult, ParamMapping, SqmMapping, run_controller
from aqmlab.online.num import NUMResult, num_optimum
from aqmlab.online.ogd import (
    OGDResult,
    Projection,
    alpha_fair_gradient,
    alpha_fair_utility,
    kkt_residuals,
    ogd_bounds,
    ogd_step,
    online_gradient,
    project,
    regret,
)
from aqmlab.online.tuning import SIGMA_RULES, LinkTuning, link_tuning

__all__ = [
    "SIGMA_RULES",
    "ControllerResult",
    "LinkTuning",
    "NUMResult",
    "ParamMapping",
    "SqmMapping",
    "link_tuning",
    "run_controller",
    "OGDResult",
    "Projection",
    "alpha_fair_gradient",
    "alpha_fair_utility",
    "kkt_residuals",
    "num_optimum",
    "ogd_bounds",
    "ogd_step",
    "online_gradient",
    "project",
    "regret",
]
