"""The CLI's table of CAKE's per-tin statistics (``links.NAME.cake_tins`` of summary.json)."""

from __future__ import annotations


def cake_table(summary: dict):
    """CAKE's ``tc -s`` statistics per tin of every link that runs ``cake``.

    Parameters
    ----------
    summary : dict
        A run's ``summary.json`` content.

    Returns
    -------
    rich.table.Table or None
        One row per link and tin (threshold, packets, drops, marks, ACK drops, overlimit
        drops, sparse/bulk flows, average and peak delay); None if no link runs CAKE.
    """
    from rich.table import Table

    rows = [
        (name, tin, s)
        for name, link in summary["links"].items()
        for tin, s in link.get("cake_tins", {}).items()
    ]
    if not rows:
        return None
    t = Table(title="cake tins (tc -s, after the warm-up)")
    cols = ("link", "tin", "threshold [Mb/s]", "packets", "drops", "marks", "ack drops")
    cols += ("overlimit", "sparse", "bulk", "avg delay [ms]", "peak delay [ms]")
    for c in cols:
        t.add_column(c, justify="left" if c in ("link", "tin") else "right")
    for name, tin, s in rows:
        t.add_row(
            name,
            tin,
            f"{s['threshold_bps'] / 1e6:g}" if s["threshold_bps"] else "unlimited",
            str(s["packets"]),
            str(s["drops"]),
            str(s["marks"]),
            str(s["ack_drops"]),
            str(s["overlimit_drops"]),
            str(s["sparse_flows"]),
            str(s["bulk_flows"]),
            f"{s['avg_delay_ms']:.2f}",
            f"{s['peak_delay_ms']:.2f}",
        )
    return t
