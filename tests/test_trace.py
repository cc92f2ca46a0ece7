"""Per-packet traces ([trace], --trace, aqmlab.trace) and the queue-delay histogram of the summary.

References: the link's own counters (conservation: every arrival is enqueued or dropped at
arrival, every enqueued packet leaves by dequeue, victim drop or dequeue drop, or is still
queued); the exact order statistics of the traced sojourn times (the histogram promises 1/64
relative error at bin midpoints and exact counts per bin).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from aqmlab.sim import Simulation, simulate

ROOT = Path(__file__).resolve().parents[1]

# FQ-CoDel with a small shared limit, ECN-capable TCP and an overloading UDP flow: every event
# kind occurs (victims from the fattest flow, CE marks, drops at dequeue are CoDel's; see below).
FQ = {
    "name": "trace-fq",
    "duration": "8s",
    "warmup": "2s",
    "dumbbell": {"rate": "10Mbps", "rtt": "40ms", "buffer": 60},
    "aqm": {"type": "fq_codel", "limit": 60},
    "flows": [
        {"count": 4, "ecn": True},
        {"kind": "udp_cbr", "rate": "6Mbps"},
        {"count": 2},
    ],
    "trace": {"links": ["bottleneck"], "batch": 3000},
}
CODEL = {
    "name": "trace-codel",
    "duration": "10s",
    "warmup": "2s",
    "dumbbell": {"rate": "10Mbps", "rtt": "60ms", "buffer": 80},
    "aqm": {"type": "codel"},
    "flows": [{"count": 8}],
    "trace": {"links": ["bottleneck"], "batch": 4000},
}


def _traced(sc: dict, path: Path):
    sim = Simulation(sc)
    sim.start_trace(path)
    sim.run()
    res = sim.result()
    sim.close_trace()
    return sim, res


@pytest.fixture(scope="module")
def fq_run(tmp_path_factory):
    path = tmp_path_factory.mktemp("fq") / "trace.parquet"
    sim, res = _traced(FQ, path)
    return sim, res, path


@pytest.fixture(scope="module")
def codel_run(tmp_path_factory):
    path = tmp_path_factory.mktemp("codel") / "trace.parquet"
    sim, res = _traced(CODEL, path)
    return sim, res, path


@pytest.mark.parametrize("which", ["fq_run", "codel_run"])
def test_trace_rows_match_the_link_counters(request, which):
    sim, _, path = request.getfixturevalue(which)
    t = pq.read_table(path).to_pandas()
    kinds = t["kind"].astype(str).value_counts().to_dict()
    n = {k: kinds.get(k, 0) for k in ("enqueue", "dequeue", "mark", "drop_arrival",
                                      "drop_victim", "drop_dequeue")}  # fmt: skip
    st = sim.link_status("bottleneck")
    assert n["enqueue"] + n["drop_arrival"] == st["arrivals"]
    # the packet in transmission has been dequeued but not yet counted as transmitted
    assert n["dequeue"] - st["tx_pkts"] in (0, 1)
    assert n["enqueue"] == n["dequeue"] + n["drop_victim"] + n["drop_dequeue"] + st["queue_pkts"]
    # link_status's "drops" counts every drop (enqueue, victims, dequeue), as the qdisc's own
    assert n["drop_arrival"] + n["drop_victim"] + n["drop_dequeue"] == st["drops"]
    assert n["drop_victim"] == st["drops_victim"]
    assert st["drops"] == st["aqm_dropped"]
    assert n["mark"] == st["marks"]
    assert set(t["link"].astype(str)) == {"bottleneck"}
    assert t["time_ns"].is_monotonic_increasing
    # sojourn only where it is defined; a CE mark is on the packet leaving
    nulls = t["sojourn_ns"].isna()
    assert nulls.equals(t["kind"].astype(str).isin(["enqueue", "drop_arrival"]))
    assert (t.loc[t["kind"].astype(str) == "mark", "ecn"] == 3).all()
    if which == "fq_run":
        # the scenario is built so that every kind occurs
        assert min(n["drop_victim"], n["mark"], n["drop_arrival"] + n["drop_victim"]) > 0, n
    else:
        assert n["drop_dequeue"] > 0, n


def test_trace_memory_is_bounded_by_the_batch(codel_run):
    sim, _, path = codel_run
    f = pq.ParquetFile(path)
    sizes = [f.metadata.row_group(i).num_rows for i in range(f.metadata.num_row_groups)]
    batch = CODEL["trace"]["batch"]
    # a 10 s run writes several batches; none is larger than one batch plus one event's rows
    assert len(sizes) >= 5 and sum(sizes) == f.metadata.num_rows
    assert max(sizes) <= batch + 64, sizes
    # the preallocated buffer never grew
    (buf,) = sim.trace_buffers()
    assert buf["batch"] == batch
    assert buf["capacity"] == batch + 4096


def test_tracing_does_not_change_the_run(fq_run):
    _, res, _ = fq_run
    plain = simulate({k: v for k, v in FQ.items() if k != "trace"})
    assert res.summary["links"] == plain.summary["links"]
    assert res.summary["events"] == plain.summary["events"]


def _hist_quantile(h: dict, q: float) -> float:
    """The q-quantile by the core's rule: the midpoint of the bin holding rank ceil(q n)."""
    counts = np.asarray(h["counts"])
    rank = max(int(np.ceil(q * counts.sum())), 1)
    i = int(np.searchsorted(np.cumsum(counts), rank))
    lo, hi = h["lo_ms"][i], h["hi_ms"][i]
    # integer-ns bins: below 32 ns a bin is one value, reported exactly
    return lo if hi - lo <= 1e-6 + 1e-12 else (lo + hi) / 2


@pytest.mark.parametrize("which", ["fq_run", "codel_run"])
def test_histogram_against_exact_sojourns(request, which):
    _, res, path = request.getfixturevalue(which)
    link = res.summary["links"]["bottleneck"]
    h = link["queue_delay_hist"]
    t = pq.read_table(path, columns=["time_ns", "sojourn_ns", "kind"]).to_pandas()
    warm_ns = round(res.summary["warmup_s"] * 1e9)
    deq = t[(t["kind"].astype(str) == "dequeue") & (t["time_ns"] >= warm_ns)]
    exact = np.sort(deq["sojourn_ns"].to_numpy(dtype=np.int64))
    assert sum(h["counts"]) == len(exact) > 1000
    # per bin, the counts are exact: the packets whose sojourn lies in [lo, hi)
    lo_ns = np.rint(np.asarray(h["lo_ms"]) * 1e6).astype(np.int64)
    hi_ns = np.rint(np.asarray(h["hi_ms"]) * 1e6).astype(np.int64)
    inside = np.searchsorted(exact, hi_ns, "left") - np.searchsorted(exact, lo_ns, "left")
    assert inside.tolist() == h["counts"]
    assert np.all(lo_ns[1:] >= hi_ns[:-1])
    assert np.all((hi_ns - lo_ns) * 32 <= np.maximum(lo_ns, 32))
    # the stated error of the quantiles, against the exact order statistics
    for q, key in ((0.5, "p50"), (0.95, "p95"), (0.99, "p99")):
        x = exact[int(np.ceil(q * len(exact))) - 1] / 1e6
        est = _hist_quantile(h, q)
        assert est == pytest.approx(link["queue_delay_ms"][key], rel=1e-12, abs=1e-12)
        assert abs(est - x) <= x / 64 + 1e-9, (q, est, x)
    assert link["queue_delay_ms"]["mean"] == pytest.approx(exact.mean() / 1e6, rel=1e-9)
    # SimResult's view of the same histogram: the CDF at each upper edge is exact
    df = res.queue_delay_histogram("bottleneck")
    assert df["count"].tolist() == h["counts"]
    below = np.searchsorted(exact, hi_ns, "left") / len(exact)
    assert np.allclose(df["cdf"].to_numpy(), below, rtol=0, atol=1e-12)


def test_dumbbell_trace_option_writes_trace_parquet(tmp_path):
    out = tmp_path / "res"
    p = subprocess.run(
        [sys.executable, "-m", "aqmlab", "dumbbell", "--flows", "3", "--duration", "3s",
         "--aqm", "pie", "--trace", "--quiet", "--no-plots", "--out", str(out)],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    t = pq.read_table(out / "trace.parquet")
    assert t.column_names == ["time_ns", "link", "flow", "size", "sojourn_ns", "ecn", "kind"]
    manifest = json.loads((out / ".aqmlab").read_text())
    assert "trace.parquet" in manifest["files"]
    summary = json.loads((out / "summary.json").read_text())
    link = summary["links"]["bottleneck"]
    kinds = t.column("kind").to_pylist()
    # conservation over the post-warm-up window is not what the trace covers (it covers the
    # whole run): compare the whole-run dequeues with the transmitted packets instead
    assert kinds.count("dequeue") >= link["tx_packets"] > 0
    assert not [q for q in tmp_path.iterdir() if q.name.startswith(".")], "no temporaries left"


def test_python_trace_file_is_renamed_into_place_and_refuses_to_overwrite(tmp_path):
    path = tmp_path / "t.parquet"
    sc = {**CODEL, "duration": "1s", "warmup": "0s"}
    simulate(sc, trace=path)
    assert pq.ParquetFile(path).metadata.num_rows > 0
    assert sorted(q.name for q in tmp_path.iterdir()) == ["t.parquet"]
    with pytest.raises(ValueError, match="exists"):
        simulate(sc, trace=path)
    simulate(sc, trace=path, force=True)


def test_two_traced_links_of_an_explicit_topology(tmp_path):
    sc = {
        "duration": "3s",
        "nodes": [{"name": n} for n in ("a", "b", "c")],
        "links": [
            {"src": "a", "dst": "b", "rate": "20Mbps", "delay": "5ms", "buffer": 50},
            {"src": "b", "dst": "c", "rate": "5Mbps", "delay": "5ms", "buffer": 30,
             "aqm": {"type": "red"}},
        ],
        "flows": [{"src": "a", "dst": "c", "count": 3}],
        "trace": {"links": ["b->c", "c->b", "a->b"], "batch": 500},
    }  # fmt: skip
    sim, _ = _traced(sc, tmp_path / "t.parquet")
    t = pq.read_table(tmp_path / "t.parquet").to_pandas()
    assert set(t["link"].astype(str)) == {"a->b", "b->c", "c->b"}
    for name, part in t.groupby(t["link"].astype(str)):
        st = sim.link_status(name)
        kinds = part["kind"].astype(str)
        assert (kinds == "enqueue").sum() + (kinds == "drop_arrival").sum() == st["arrivals"]
        assert part["time_ns"].is_monotonic_increasing
    # ACKs travel c->b: 40-byte packets
    assert (t.loc[t["link"].astype(str) == "c->b", "size"] == 40).all()
