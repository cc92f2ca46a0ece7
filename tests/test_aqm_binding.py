"""The Rust AQM library through the Python bindings (aqmlab.aqm)."""

import math

import pytest
from aqmlab.aqm import AqmConfigError, Queue, aqm_config, list_aqms


def test_every_parameter_is_documented_with_unit_and_default():
    table = list_aqms()
    assert {
        "droptail",
        "red",
        "ared",
        "pi",
        "pie",
        "codel",
        "blue",
        "sred",
        "rem",
        "avq",
        "sfc",
        "pdlq",
        "edc",
    } <= set(table)
    for name, params in table.items():
        assert any(p["name"] == "ecn" for p in params), name
        for p in params:
            assert p["doc"], f"{name}.{p['name']} has no doc"
            assert p["unit"], f"{name}.{p['name']} has no unit"
            if p["unit"] == "file":  # a required table (PAQMAN's policy): no default
                assert p["default"] is None, f"{name}.{p['name']}"
            elif p["unit"] == "bool":
                assert isinstance(p["default"], bool), f"{name}.{p['name']}"
            elif "|" in p["unit"]:  # a choice: its default is one of the names
                assert p["default"] in p["unit"].split("|"), f"{name}.{p['name']}"
            else:
                assert math.isfinite(p["default"]), f"{name}.{p['name']}"


def test_defaults_from_their_specifications():
    # RFC 8289 §4.2-4.3: TARGET 5 ms, INTERVAL 100 ms; RFC 8033 §4.1: QDELAY_REF 15 ms, T_UPDATE 15 ms.
    d = {k: {p["name"]: p["default"] for p in v} for k, v in list_aqms().items()}
    assert d["codel"]["target"] == pytest.approx(0.005)
    assert d["codel"]["interval"] == pytest.approx(0.1)
    assert d["pie"]["target"] == pytest.approx(0.015)
    assert d["pie"]["t_update"] == pytest.approx(0.015)
    assert d["pie"]["alpha"] == pytest.approx(0.125)
    assert d["pie"]["beta"] == pytest.approx(1.25)
    # SFC Examples 1-2: k1 = 0.0005, k2 = 0.2; target 50 packets (§VII).
    assert d["sfc"]["k1"] == pytest.approx(0.0005)
    assert d["sfc"]["k2"] == pytest.approx(0.2)
    assert d["sfc"]["q_ref"] == pytest.approx(50.0)
    # KTL §III: T_s = 2 ms, b* = 200; the lambda = -3.75 gains (docs/design/pd_lq.md).
    assert d["pdlq"]["t_update"] == pytest.approx(0.002)
    assert d["pdlq"]["q_ref"] == pytest.approx(200.0)
    assert d["pdlq"]["h1"] == pytest.approx(5.657e-4)
    # EDC §4.2: q_ref 200, event threshold 30, K_P = 0.03, K_I = 0.01.
    assert d["edc"]["n_event"] == 30
    assert d["edc"]["kp"] == pytest.approx(0.03)
    assert d["edc"]["ki"] == pytest.approx(0.01)


def _accepted(cfg):
    params = {k: v for k, v in cfg.items() if k != "type"}
    out = aqm_config(cfg["type"], params)
    for k, v in params.items():
        if isinstance(v, bool):
            assert out[k] is v, k
        elif k in ("t_update", "tau"):
            assert out[k] == round(v * 1e9), k  # seconds -> integer ns
        else:
            assert out[k] == pytest.approx(v), k
    return out


def test_design_results_configure_the_seed_aqms():
    """The design side's ``to_aqm()`` dictionaries are valid configurations of the simulator's
    ``sfc``, ``pdlq`` and ``edc`` AQMs: same names, same units (docs/aqm/{sfc,pdlq,edc}.md)."""
    from aqmlab.design.edc import edc_design
    from aqmlab.design.pd_lq import pd_lq_design
    from aqmlab.design.sfc import sfc_design

    _accepted(sfc_design(1250.0, 300, 0.6, k2=0.2, k1=0.0005).to_aqm())
    _accepted(pd_lq_design(4000.0, 100, 0.15, 200.0).to_aqm())
    _accepted(edc_design(60, 187.5, 200.0, 0.1).to_aqm())
    mem = pd_lq_design(4000.0, 100, 0.35, 200.0, memory=True).to_aqm()
    # the memory law's predictor needs the model's capacity and N: to_aqm() carries them
    assert (mem["capacity"], mem["n_flows"]) == (4000.0, 100.0)
    _accepted(mem)


def test_edc_runs_its_law_every_n_arrivals():
    """EDC's activation counter counts runs of the law: one per ``n_event`` arrivals."""
    q = Queue("edc", {"n_event": 7, "q_ref": 5}, limit_pkts=1000, link_rate_bps=1e7)
    for i in range(70):
        q.enqueue(i * 1e-4, 1000)
    assert q.stats()["activations"] == 10


@pytest.mark.parametrize(
    "name, params, needle",
    [
        ("nope", {}, "'nope'"),
        ("red", {"bogus": 1}, "'bogus'"),
        ("codel", {"target": "-5ms"}, "'target'"),
        ("pie", {"alpha": "abc"}, "'alpha'"),
    ],
)
def test_bad_aqm_input_names_key_and_value(name, params, needle):
    with pytest.raises(AqmConfigError, match=needle):
        aqm_config(name, params)
    assert issubclass(AqmConfigError, ValueError)


def test_units_are_converted():
    cfg = aqm_config("codel", {"target": "20ms", "interval": 0.2})
    assert cfg["type"] == "codel"
    assert cfg["target"] == 20_000_000  # serde form: integer nanoseconds
    assert cfg["interval"] == 200_000_000


# Drop spacing after drops 1..4 under Linux's arithmetic (include/net/codel_impl.h): the 16-bit
# rec_inv_sqrt goes 0xffff, 32769, 36864, 31968 (one codel_Newton_step per count), and the
# spacing is reciprocal_scale(100 ms, rec << 16) in ns; RFC 8289 §5.5: 100 ms / sqrt(count).
LINUX_GAPS = [0.099998474, 0.050001525, 0.056250000, 0.048779296]
RFC_GAPS = [0.1 / math.sqrt(n) for n in range(1, 5)]


@pytest.mark.parametrize(
    "params,gaps", [({}, LINUX_GAPS), ({"control_law": "rfc"}, RFC_GAPS)], ids=["linux", "rfc"]
)
def test_codel_drop_spacing_follows_the_control_law(params, gaps):
    """A standing queue of 10 ms sojourn: CoDel first drops one INTERVAL after the sojourn rose
    above TARGET, then at the control law's spacing: Linux's by default, RFC 8289 §5.5's
    INTERVAL/sqrt(count) with ``control_law = "rfc"``. Times are compared to 20 us: the core
    works in integer ns, our dequeue grid is 10 us."""
    q = Queue("codel", params, limit_pkts=10_000, link_rate_bps=1e9)
    step = 1e-5
    drops_at = []
    last = 0
    # one arrival per 10 us tick; from t = 10 ms on, one dequeue per tick, so the head has
    # always waited 10 ms (> TARGET); each drop shortens that by one tick only
    for k in range(100_001):
        t = k * step
        q.enqueue(t, 1500)
        if t >= 0.01 - 1e-12:
            q.dequeue(t)
            s = q.stats()["dropped_dequeue"]
            if s > last:
                drops_at.append(t)
                last = s
    assert len(drops_at) >= 5
    first = drops_at[0]
    # first_above_time = first dequeue with sojourn >= target (t = 0.01) + INTERVAL
    assert first == pytest.approx(0.01 + 0.1, abs=2e-5)
    for n in range(1, 5):
        gap = drops_at[n] - drops_at[n - 1]
        assert gap == pytest.approx(gaps[n - 1], abs=2e-5), n


def test_time_must_not_run_backwards():
    q = Queue("droptail", limit_pkts=10)
    q.enqueue(1.0, 100)
    with pytest.raises(ValueError, match="backwards"):
        q.enqueue(0.5, 100)


def test_counters_conserve_packets_under_pie():
    q = Queue("pie", {}, limit_pkts=50, link_rate_bps=10e6, seed=3)
    t = 0.0
    for i in range(20000):
        t = i * 0.0005  # 2000 pkt/s offered to a 1250 pkt/s link (1000 B)
        q.enqueue(t, 1000)
        if i % 8 < 5:
            q.dequeue(t)
        p = q.poll_at()
        while p is not None and p <= t:
            q.on_timer(p)
            p = q.poll_at()
        assert 0.0 <= q.probability <= 1.0
        assert q.len_pkts <= 50
    s = q.stats()
    assert s["received"] == s["dropped_enqueue"] + s["enqueued"]
    assert s["enqueued"] == s["dequeued"] + s["dropped_dequeue"] + q.len_pkts
    assert s["dropped_early"] > 0


@pytest.mark.parametrize(
    "name", ["fq_codel", "fq_pie", "sfq", "sfq_codel", "drr", "wfq", "dualpi2", "sqm"]
)
def test_queue_builds_every_qdisc_and_conserves_packets(name):
    """Every qdisc runs in ``Queue`` with a flow key and ECN codepoint per packet; its counters
    add up: received = dropped_aqm + dropped_forced + dequeued + queued, the two drop causes
    being the counters' parts (early = at enqueue by the AQM + at dequeue; forced = the limit
    + a scheduler's victims)."""
    q = Queue(name, limit_pkts=40, link_rate_bps=1e6, seed=5)
    assert q.aqm == name
    t = 0.0
    for k in range(400):
        t += 0.001
        q.enqueue(t, 1000, flow=k % 4, ecn=["not-ect", "ect0", "ect1", True][k % 4])
        if k % 3 == 0:
            q.dequeue_packet(t)
        while (p := q.poll_at()) is not None and p <= t:
            q.on_timer(p)
    s = q.stats()
    assert s["dropped_aqm"] == s["dropped_early"] + s["dropped_dequeue"]
    assert s["dropped_forced"] == s["dropped_limit"] + s["dropped_victim"]
    assert s["received"] == s["dropped_aqm"] + s["dropped_forced"] + s["dequeued"] + q.len_pkts
    assert s["dropped_forced"] > 0, "the offered load is three times what leaves"


def test_stats_separate_early_from_forced_drops():
    """CoDel on a 5-packet FIFO: 10 arrivals at once lose 5 at the limit (forced), then the
    standing queue loses packets to CoDel at dequeue (early); fq_codel's overflow batch drops
    queued packets of the fattest flow: forced too (Linux fq_codel_drop)."""
    q = Queue("codel", limit_pkts=5)
    for _ in range(10):
        q.enqueue(0.0, 1000)
    assert q.stats()["dropped_forced"] == 5 and q.stats()["dropped_aqm"] == 0
    t = 0.0
    for _ in range(400):
        t += 0.002
        q.enqueue(t, 1000)
        q.enqueue(t, 1000)
        q.dequeue(t + 0.2)
        t += 0.2
    s = q.stats()
    assert s["dropped_aqm"] == s["dropped_dequeue"] > 0
    fq = Queue("fq_codel", limit_pkts=4, link_rate_bps=1e6)
    for _ in range(3):
        assert fq.enqueue(0.0, 120, flow=1) == "queued"
    fq.enqueue(0.0, 120, flow=2)
    assert fq.enqueue(0.0, 120, flow=2) == "queued"
    s = fq.stats()
    assert (s["dropped_victim"], s["dropped_forced"], s["dropped_aqm"]) == (2, 2, 0)
    assert fq.active_flows == 2


def test_flow_keys_and_ecn_codepoints_reach_the_qdisc():
    """fq_codel serves two backlogged flows in turn (quantum 1000 B = one packet); dualpi2 puts
    ECT(1) in its L queue, whose step marks at 1 ms, and leaves ECT(0) to the classic queue."""
    fq = Queue("fq_codel", {"quantum": 1000})
    for f in (1, 1, 1, 2, 2, 2):
        fq.enqueue(0.0, 1000, flow=f)
    order = [fq.dequeue_packet(0.0001)["flow"] for _ in range(6)]
    assert order == [1, 2, 1, 2, 1, 2]
    dq = Queue("dualpi2")
    for _ in range(3):
        dq.enqueue(0.0, 1000, ecn="ect1")
    p = dq.dequeue_packet(0.005)
    assert p["ecn"] == "ce", "an L packet waiting 5 ms > step_thresh 1 ms is marked"
    dq2 = Queue("dualpi2")
    dq2.enqueue(0.0, 1000, ecn="ect0")
    assert dq2.dequeue_packet(0.005)["ecn"] == "ect0"
    c = Queue("codel", {"ecn": True})
    c.enqueue(0.0, 1000, ecn="ce")
    assert c.dequeue_packet(0.001)["ecn"] == "ce"
