# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The line rate of each run, from the labels, ``report_line_rate_bps`` or the link speed read on the hosts.

Plain data in, plain data out; no Ansible import, no clock, no I/O.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.units import finite_float, positive_float

__all__ = [
    "run_line_rate",
    "with_line_rates",
]

# --------------------------------------------------------------------------------------------
# Line rate of the runs, from the hosts' link speeds
# --------------------------------------------------------------------------------------------


def run_line_rate(
    pairs: Sequence[Mapping[str, Any]],
    speeds: Mapping[str, Mapping[str, Any]],
    *,
    given_bps: float | None = None,
    given_source: str | None = None,
) -> tuple[float | None, str]:
    """``(line_rate_bps, line_rate_source)`` of one run.

    ``speeds`` maps ``"host address"`` to a link speed item (``speed_mbps``, ``source``, ``reason``) of that end.
    The run's line rate is the lowest link speed over every end (server and client) of its pairs - the slowest NIC
    the run crosses; when an end has no speed the rate is ``None`` and the source says why.
    """
    rate = positive_float(given_bps)
    if rate is not None:
        return rate, given_source or "given"
    found: list[tuple[float, str]] = []
    for pair in pairs:
        for host, address in ((pair.get("server"), pair.get("address")), (pair.get("client"), pair.get("client_bind"))):
            if not address or not host:  # an end outside the inventory (external): its speed cannot be read
                continue
            item = speeds.get(f"{host} {address}")
            speed = positive_float(item.get("speed_mbps")) if isinstance(item, Mapping) else None
            if speed is None:
                why = item.get("reason") if isinstance(item, Mapping) else None
                return None, f"unknown: {host} {address}: {why or 'its link speed was not read'}"
            found.append((speed * 1e6, f"{host} {address} {item.get('source')}"))  # type: ignore[union-attr]
    if not found:
        return None, "unknown: no address of the run's hosts to read a link speed for"
    lowest = min(found)
    return lowest[0], f"host: {int(lowest[0] / 1e6)} Mb/s, the slowest end of the run ({lowest[1]})"


def _pair_line_rate(pair: Mapping[str, Any], run: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """What ``with_line_rates`` adds to a pair's labels: the run's, unless the pair's own labels give a line rate
    the run's do not (a pair label): then the pair keeps it, and the source says so."""
    for key in ("line_rate_bps", "link_speed_mbps"):
        if (finite_float(pair.get(key)) or 0) > 0 and pair.get(key) != run.get(key):
            return {"line_rate_source": f"given: the pair's {key} label (inventory)"}
    return dict(extra)


def with_line_rates(
    plan: Mapping[str, Any],
    speeds: Mapping[str, Mapping[str, Any]],
    *,
    published: Mapping[str, Mapping[str, Any]] | None = None,
    report_line_rate_bps: Any = None,
) -> dict[str, Any]:
    """``plan`` with ``line_rate_bps`` and ``line_rate_source`` in the labels of every run and pair.

    ``speeds`` maps each host to ``{address: {speed_mbps, source, reason}}`` (``iperf_facts``'
    ``iperf_link_speeds``); ``published`` the same per host from ``esxi_network``
    (``esxi_network_link_speeds``: the vmknic's vSwitch uplinks), which wins where it has a speed.
    A host's ``paired_test_link_speed_mbps`` (``plan["given_link_speeds"]``, from the preflight) wins over both
    for every end of that host. A value given by the caller wins and is only named: the test's ``line_rate_bps`` /
    ``link_speed_mbps`` labels (the inventory), then ``report_line_rate_bps``; else
    ``run_line_rate()`` - the slowest end of the run.
    """
    by_end: dict[str, Mapping[str, Any]] = {}
    for given in (speeds, published or {}):
        for host, items in given.items():
            for address, item in (items or {}).items() if isinstance(items, Mapping) else ():
                known = by_end.get(f"{host} {address}")
                if isinstance(item, Mapping) and (known is None or item.get("speed_mbps") is not None):
                    by_end[f"{host} {address}"] = item
    # paired_test_link_speed_mbps of a host (the preflight put it in the plan): it wins over what was read there
    for host, speed in (plan.get("given_link_speeds") or {}).items():
        for run in plan["runs"]:
            for pair in run["pairs"]:
                for end, address in (
                    (pair.get("server"), pair.get("address")),
                    (pair.get("client"), pair.get("client_bind")),
                ):
                    if end == host and address:
                        by_end[f"{host} {address}"] = {
                            "speed_mbps": speed,
                            "source": f"given: paired_test_link_speed_mbps of {host} (inventory)",
                            "reason": None,
                        }
    given_report = finite_float(report_line_rate_bps)
    runs = []
    for run in plan["runs"]:
        labels = dict(run.get("labels") or {})
        extra: dict[str, Any]
        label_bps = finite_float(labels.get("line_rate_bps"))
        label_mbps = finite_float(labels.get("link_speed_mbps"))
        if (label_bps or 0) > 0 or (label_mbps or 0) > 0:
            key = "line_rate_bps" if (label_bps or 0) > 0 else "link_speed_mbps"
            extra = {"line_rate_source": f"given: the test's {key} label (inventory)"}
        elif given_report is not None and given_report > 0:
            extra = {"line_rate_source": "given: report_line_rate_bps"}
        else:
            rate, why = run_line_rate(run["pairs"], by_end)
            extra = {"line_rate_source": why}
            if rate is not None:
                extra["line_rate_bps"] = rate
        pairs = [{**pair, "labels": {**pair["labels"], **_pair_line_rate(pair["labels"], labels, extra)}}
                 for pair in run["pairs"]]  # fmt: skip
        own = [str(p["pair"]) for p in pairs if p["labels"]["line_rate_source"] != extra["line_rate_source"]]
        if own:  # the report sums the pairs' line rates: say that some (or all) are the pairs' own
            extra = {
                **extra,
                "line_rate_source": f"given: the line_rate_bps / link_speed_mbps labels of pair {', '.join(own)}"
                + ("" if len(own) == len(pairs) else f"; the other pairs: {extra['line_rate_source']}"),
            }
        runs.append({**run, "labels": {**labels, **extra}, "pairs": pairs})
    return {**plan, "runs": runs}
