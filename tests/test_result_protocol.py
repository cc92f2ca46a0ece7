"""Every result object has the one protocol of aqmlab.protocol (docs/design.md, "Result
objects"): to_pandas, to_dict (JSON-ready), plot(ax=None) returning the Figure it made or the
Axes it was given, a one-line repr and a notebook view that is well-formed HTML with a table;
the old method names are aliases that warn."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")

import aqmlab  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from aqmlab.protocol import Result, html_result, html_table, json_ready, one_line  # noqa: E402

SIM = {
    "duration": "1s",
    "seed": 3,
    "dumbbell": {"rate": "10Mbps", "rtt": "40ms", "buffer": 100},
    "aqm": {"type": "codel"},
    "flows": [{"count": 2}],
}


def _sim_result(aqm="codel"):
    from aqmlab.sim import simulate

    return simulate({**SIM, "aqm": {"type": aqm}})


def _fluid():
    from aqmlab.fluid import PI, Misra

    return Misra(n_flows=60, capacity=3750, rtt=0.2, law=PI(qref=200))


def _dde():
    from aqmlab.fluid import solve_dde

    return solve_dde(
        lambda t, y, lag: -lag(1.0, [0]), (0.0, 2.0), np.ones((1, 1)), dt=0.01, max_delay=1.0
    )


def _policy():
    from aqmlab.mdp import negligible_rtt_model, solve

    return solve(negligible_rtt_model(833.3, 0.005, buffer=20, grid=5))


def _evaluation():
    from aqmlab.mdp.evaluate import evaluate

    return evaluate(_policy(), runs=2, arrivals=400)


def _gamma_fit():
    from aqmlab.mdp.inference import fit_gamma_aimd, simulate_gamma_aimd

    x, act, _ = simulate_gamma_aimd(400, 1.0, 30.0, rng=np.random.default_rng(0))
    return fit_gamma_aimd(x, act)


def _poly_fit():
    from aqmlab.mdp.inference import fit_polynomial_cc, simulate_gamma_aimd

    x, act, _ = simulate_gamma_aimd(400, 1.0, 30.0, rng=np.random.default_rng(0))
    return fit_polynomial_cc(x, act, deg_f=1, deg_g=1)


def _mf_cfg():
    from aqmlab.mdp.multiflow import MultiflowConfig

    return MultiflowConfig(service_pps=10e6 / 12000, target_s=0.005, rtts_s=(0.001, 0.005))


def _trajectory():
    from aqmlab.mdp.multiflow import simulate, threshold_policy

    return simulate(_mf_cfg(), threshold_policy(5), 300, np.random.default_rng(1))


def _mf_policy():
    from aqmlab.mdp.multiflow import fit_q_policy

    return fit_q_policy(_mf_cfg(), n_decisions=600, rounds=1, fqi_iters=3, seed=1)


def _dqn_policy():
    from aqmlab.mdp.dqn import fit_dqn_policy

    return fit_dqn_policy(_mf_cfg(), n_decisions=1200, rounds=1, iters=2, seed=4)


def _lp():
    from aqmlab.mdp import negligible_rtt_model, solve_lp

    return solve_lp(negligible_rtt_model(833.3, 0.005, buffer=10, grid=4))


def _controller():
    from aqmlab.online import run_controller
    from aqmlab.sim import Simulation

    classes = [{"name": n, "aqm": {"type": "codel"}} for n in ("a", "b")]
    sim = Simulation(
        {
            "duration": 2.0,
            "dumbbell": {"rate": "10Mbps", "rtt": "60ms", "buffer": 200},
            "aqm": {"type": "drr", "classes": classes},
            "flows": [{"count": 1, "class": "a"}, {"count": 1, "class": "b"}],
        }
    )
    return run_controller(sim, period=0.5)


@pytest.fixture(scope="module")
def sweep_result(tmp_path_factory):
    from aqmlab import sweep

    spec = {"base": SIM, "seeds": [1, 2], "grid": {"aqm.type": ["codel", "pie"]}}
    return sweep.run(spec, tmp_path_factory.mktemp("sw") / "sw", workers=1)


def _suite(sw):
    from aqmlab.rfc7928 import SuiteResult
    from aqmlab.stats import across_seeds

    df = sw.to_pandas()
    return SuiteResult(sw.out, {"sec": df}, {"sec": across_seeds(df)})


def _repro():
    from aqmlab.repro._common import Repro, check

    return Repro(
        "demo",
        "A paper",
        True,
        {"a": {"delay_ms": 1.0, "util": 0.9}, "b": {"delay_ms": 2.0, "util": float("nan")}},
        [
            check(
                "delay falls",
                "1 ms",
                "1.0 ms",
                "reproduced",
                "as printed",
                id="c1",
                source={"where": "§1", "value": "1 ms"},
            )
        ],
        {"a": SIM},
    )


def _design(name):
    from aqmlab import design as d

    pi = d.hollot_pi(60, 3750.0, 0.246)
    return {
        "PIDesign": lambda: pi,
        "DelayedMargins": lambda: pi.margins,
        "StabilityMap": lambda: pi.stability_map([60, 120], [0.1, 0.246]),
        "PDLQDesign": lambda: d.pd_lq_design(4000.0, 100, 0.15, 200.0),
        "SFCDesign": lambda: d.sfc_design(1250.0, 300, 0.6, k2=0.2, k1=0.0005),
        "EDCDesign": lambda: d.edc_design(60, 187.5, 200.0, 0.1),
        "EDCRegion": lambda: d.edc_stable_region(
            60, 187.5, 200.0, 0.1, kp=[0.01, 0.1], ki=[0.01, 0.1]
        ),
        "SQMSigma": lambda: d.sqm_sigma([100.0, 100.0], [0.1, 0.2]),
    }[name]()


def _online(name):
    from aqmlab import online

    R, C = [[1, 0], [1, 1], [0, 1]], [100.0, 60.0]
    return {
        "NUMResult": lambda: online.num_optimum(R, C),
        "OGDResult": lambda: online.online_gradient([[0, 1, 2]] * 5, R, C),
        "Projection": lambda: online.project([80.0, 50.0, 40.0], R, C),
        "LinkTuning": lambda: online.link_tuning([120.0, 80.0], [0.1, 0.15], capacity=200.0),
    }[name]()


# class name -> how to make a small instance (the sweep fixture for the sweep-based ones)
FACTORIES = {
    "SimResult": lambda sw: _sim_result(),
    "Comparison": lambda sw: __import__("aqmlab.compare").compare.Comparison(
        {"codel": _sim_result("codel"), "pie": _sim_result("pie")}
    ),
    "FluidResult": lambda sw: _fluid().simulate(5.0),
    "Equilibrium": lambda sw: _fluid().equilibrium(),
    "LinearizedModel": lambda sw: _fluid().linearize(),
    "DDESolution": lambda sw: _dde(),
    **{
        n: (lambda sw, n=n: _design(n))
        for n in (
            "PIDesign",
            "DelayedMargins",
            "StabilityMap",
            "PDLQDesign",
            "SFCDesign",
            "EDCDesign",
            "EDCRegion",
            "SQMSigma",
        )
    },
    "PaqmanPolicy": lambda sw: _policy(),
    "Evaluation": lambda sw: _evaluation(),
    "RunResult": lambda sw: _evaluation().runs["paqman"][0],
    "GammaAimdFit": lambda sw: _gamma_fit(),
    "PolynomialFit": lambda sw: _poly_fit(),
    "Trajectory": lambda sw: _trajectory(),
    "MultiflowPolicy": lambda sw: _mf_policy(),
    "DqnPolicy": lambda sw: _dqn_policy(),
    "LpResult": lambda sw: _lp(),
    "ControllerResult": lambda sw: _controller(),
    **{
        n: (lambda sw, n=n: _online(n))
        for n in ("NUMResult", "OGDResult", "Projection", "LinkTuning")
    },
    "SweepResult": lambda sw: sw,
    "SuiteResult": lambda sw: _suite(sw),
    "Repro": lambda sw: _repro(),
}


def _all_result_classes() -> set[str]:
    """Every Result subclass defined in the aqmlab package (all modules imported)."""
    for m in pkgutil.walk_packages(aqmlab.__path__, "aqmlab."):
        if m.name.startswith(("aqmlab.cli", "aqmlab.__main__")):
            continue
        importlib.import_module(m.name)
    out, todo = set(), [Result]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("aqmlab."):
                out.add(sub.__name__)
            todo.append(sub)
    return out


def test_every_result_class_is_tested_here():
    missing = _all_result_classes() - set(FACTORIES)
    assert not missing, f"result classes without an instance in FACTORIES: {sorted(missing)}"


def _panels(fig) -> int:
    """Axes of a figure that are not colour bars."""
    return len([a for a in fig.axes if a.get_label() != "<colorbar>"])


def _drawn(axes) -> int:
    return sum(len(a.lines) + len(a.collections) + len(a.patches) + len(a.images) for a in axes)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_result_has_the_protocol(name, sweep_result):
    obj = FACTORIES[name](sweep_result)
    assert type(obj).__name__ == name and isinstance(obj, Result)

    tables = obj.to_pandas()
    frames = tables.values() if isinstance(tables, dict) else [tables]
    assert frames and all(isinstance(df, pd.DataFrame) and len(df.columns) for df in frames)

    d = obj.to_dict()
    assert isinstance(d, dict) and d
    assert json.loads(json.dumps(d)) is not None  # JSON-ready: plain types only

    text = repr(obj)
    assert "\n" not in text and text.startswith(f"{name}(") and text.endswith(")")
    assert len(text) < 400, text

    page = obj._repr_html_()
    root = ET.fromstring(page)  # well-formed: every tag closed, every text escaped
    assert root.tag == "div" and root.find(".//table") is not None and name in page

    fig = obj.plot()
    assert isinstance(fig, matplotlib.figure.Figure) and _drawn(fig.axes) > 0
    n = _panels(fig)
    plt.close(fig)
    # the same drawing on Axes the caller gives: returned as given, drawn on, no new figure
    mine, axes = plt.subplots(n, 1, squeeze=False)
    given = axes[:, 0] if n > 1 else axes[0, 0]
    before = plt.get_fignums()
    assert obj.plot(ax=given) is given
    assert plt.get_fignums() == before
    assert _drawn(np.atleast_1d(given)) > 0
    plt.close("all")


def test_simulation_shows_time_links_and_flows():
    from aqmlab.sim import Simulation

    sim = Simulation({**SIM, "flows": [{"count": 10}]})
    sim.run_until(0.5)
    text = repr(sim)
    assert text.startswith("Simulation(") and "\n" not in text
    assert "now_s=0.5" in text and "duration_s=1" in text and "flows=10" in text
    page = sim._repr_html_()
    root = ET.fromstring(page)
    heads = [th.text for th in root.iter("th")]
    assert "now_s" in heads and "link" in heads and "flow" in heads
    assert "bottleneck" in page and "flows (the first 8 of 10)" in page


def test_html_escapes_and_shows_the_table_head():
    df = pd.DataFrame({"a<b": ["x&y"] * 20, "v": np.arange(20.0)})
    page = html_result("R", {"k": "<script>"}, {"t": df})
    root = ET.fromstring(page)
    assert "<script>" not in page and "&lt;script&gt;" in page
    rows = root.findall(".//table")[1].findall(".//tbody/tr")
    assert len(rows) == 8 and "first 8 of 20 rows" in page
    indexed = html_table(pd.DataFrame({"x": [1]}, index=pd.Index(["r1"], name="name")))
    assert "<th>name</th>" in indexed and "<th>r1</th>" in indexed


def test_json_ready_and_one_line():
    assert json_ready({"a": np.array([[1, 2]]), "b": np.float32(0.5), 3: (None,)}) == {
        "a": [[1, 2]],
        "b": 0.5,
        "3": [None],
    }
    assert (
        one_line("X", {"s": "a\nb", "v": np.arange(6)}) == "X(s='a\\nb', v=[0, 1, 2, 3, ... (6)])"
    )


# -- the old names: thin aliases that warn, kept for one release --------------------------------
def test_simresult_old_table_methods_warn_and_agree():
    res = _sim_result()
    for name in ("timeseries", "flows", "cwnd", "class_timeseries"):
        with pytest.warns(DeprecationWarning, match=f"SimResult.{name}"):
            old = getattr(res, name)()
        pd.testing.assert_frame_equal(old, res.to_pandas(name))
    with pytest.raises(KeyError, match="table = 'nope'"):
        res.to_pandas("nope")
    with pytest.warns(DeprecationWarning):
        fig = res.plot("bottleneck")  # the old positional link
    assert isinstance(fig, matplotlib.figure.Figure)
    plt.close("all")


def test_simresult_round_trips_through_save_and_load(tmp_path):
    from aqmlab.results import SimResult

    res = _sim_result()
    back = SimResult.load(res.save(tmp_path / "run", plots=False))
    assert back.to_dict() == res.to_dict()
    pd.testing.assert_frame_equal(back.to_pandas("flows"), res.to_pandas("flows"))


def test_controller_array_is_an_alias_of_indexing():
    r = _controller()
    with pytest.warns(DeprecationWarning, match="array"):
        old = r.array("ogd_pps")
    assert np.array_equal(old, r["ogd_pps"]) and old.shape == (len(r.periods), len(r.flows))
    with pytest.raises(KeyError, match="key = 'x'"):
        r["x"]
    df = r.to_pandas()
    assert len(df) == len(r.periods) * len(r.flows)
    assert np.allclose(df["ogd_pps"].to_numpy().reshape(old.shape), old)


def test_plot_fig_and_positional_kind_still_work_with_a_warning():
    fig = plt.figure()
    with pytest.warns(DeprecationWarning, match="fig="):
        assert _fluid().simulate(2.0).plot(fig=fig) is fig
    m = _design("DelayedMargins")
    with pytest.warns(DeprecationWarning, match="kind"):
        out = m.plot("nyquist")
    assert isinstance(out, matplotlib.figure.Figure) and _panels(out) == 1
    plt.close("all")


def test_sweep_result_is_the_old_table_too(sweep_result):
    from aqmlab.sweep import SweepResult

    df = sweep_result.to_pandas()
    assert len(sweep_result) == len(df) == 4
    with pytest.warns(DeprecationWarning, match="to_pandas"):
        assert list(sweep_result["seed"]) == list(df["seed"])
    with pytest.warns(DeprecationWarning, match="columns"):
        assert list(sweep_result.columns) == list(df.columns)
    with pytest.raises(AttributeError):
        sweep_result.no_such_attribute  # noqa: B018
    assert sweep_result.wall_s > 0 and df.attrs["wall_s"] == sweep_result.wall_s
    back = SweepResult.load(sweep_result.out)
    pd.testing.assert_frame_equal(back.to_pandas(), df)
    st = back.stats(["links.bottleneck.utilization"])
    assert list(st["aqm.type"]) == ["codel", "pie"] and list(st["n"]) == [2, 2]
    fig = back.plot()
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["AQM = codel", "AQM = pie"]
    plt.close("all")
    with pytest.raises(ValueError, match="not a sweep folder"):
        SweepResult.load(sweep_result.out / "runs")


def test_results_are_documented_as_such():
    # every result class says what it holds (its docstring), and the methods of the protocol
    # that it defines say what they return
    _all_result_classes()
    for cls in _walk(Result):
        if not cls.__module__.startswith("aqmlab."):
            continue
        name = cls.__name__
        assert inspect.getdoc(cls), name
        for meth in ("to_pandas", "to_dict", "plot"):
            assert inspect.getdoc(getattr(cls, meth)), f"{name}.{meth}"


def _walk(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _walk(sub)
