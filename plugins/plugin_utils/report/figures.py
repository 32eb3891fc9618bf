# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The figures beside throughput -- CPU, retransmits, RTT, UDP loss and jitter, the reverse direction of
bidirectional runs -- of one result, one run (its pairs combined) and one summary group (its runs combined).

How figures combine (a figure is never guessed: ``None`` when it cannot be given honestly):

* a result: read from the normalized result -- ``cpu.local_percent`` / ``cpu.remote_percent``,
  ``sent.retransmits``, ``rtt.min_us`` / ``mean_us`` / ``max_us`` (absent in results made before the
  RTT fields: ``None``), ``udp.lost_percent`` / ``jitter_ms`` / ``lost_packets`` / ``packets``, and
  for ``--bidir`` / dual runs ``reverse_received`` (else ``reverse_sent``) and ``bidir_sum``. A result
  without a usable headline has no figures.
* a run (its pairs ran at the same time): a figure only when *every* pair has it -- CPU and mean RTT
  are the mean over the pairs, retransmits, lost and total datagrams, reverse and bidir rates the
  sum, the RTT minimum the smallest and the maximum the largest, jitter the largest; the loss is
  ``lost / packets`` of the sums (with one pair and no counts: its printed ``lost_percent``).
* a group (repetitions of the same conditions): over the runs that have the figure -- CPU,
  retransmits (per run), mean RTT, jitter, reverse and bidir rates the mean; RTT minimum the
  smallest, maximum the largest; lost and total datagrams the sum, the loss ``lost / packets`` of
  the sums when every such run has counts, else the mean of the runs' loss.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.base import as_number, field_of

__all__ = ["FIGURE_NAMES", "NO_FIGURES", "Figures", "group_figures", "result_figures", "run_figures"]


@dataclass(frozen=True)
class Figures:
    """The figures beside throughput; ``None`` = no figure."""

    cpu_local_percent: float | None = None
    cpu_remote_percent: float | None = None
    retransmits: float | None = None  # a result or run: a count; a group: the mean per run
    rtt_min_us: float | None = None
    rtt_mean_us: float | None = None
    rtt_max_us: float | None = None
    lost_percent: float | None = None
    jitter_ms: float | None = None
    lost_packets: int | None = None
    packets: int | None = None
    reverse_bits_per_second: float | None = None
    bidir_sum_bits_per_second: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """The figures by name, as ``results.json`` and the CSV files name them."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def has_cpu(self) -> bool:
        return self.cpu_local_percent is not None or self.cpu_remote_percent is not None

    @property
    def has_udp(self) -> bool:
        return self.lost_percent is not None or self.jitter_ms is not None or self.packets is not None

    @property
    def has_reverse(self) -> bool:
        return self.reverse_bits_per_second is not None or self.bidir_sum_bits_per_second is not None


NO_FIGURES = Figures()
FIGURE_NAMES = tuple(f.name for f in fields(Figures))


def result_figures(result: Any, bits_per_second: float | None) -> Figures:
    """The figures of one normalized result as it printed them (none without a usable headline
    ``bits_per_second``)."""
    if bits_per_second is None:
        return NO_FIGURES

    def field(path: str) -> Any:
        return field_of(result, path)

    reverse = as_number(field("reverse_received.bits_per_second"))
    if reverse is None:
        reverse = as_number(field("reverse_sent.bits_per_second"))
    return Figures(
        cpu_local_percent=as_number(field("cpu.local_percent")),
        cpu_remote_percent=as_number(field("cpu.remote_percent")),
        retransmits=_count(field("sent.retransmits")),
        rtt_min_us=as_number(field("rtt.min_us")),
        rtt_mean_us=as_number(field("rtt.mean_us")),
        rtt_max_us=as_number(field("rtt.max_us")),
        lost_percent=as_number(field("udp.lost_percent")),
        jitter_ms=as_number(field("udp.jitter_ms")),
        lost_packets=_int(field("udp.lost_packets")),
        packets=_int(field("udp.packets")),
        reverse_bits_per_second=reverse,
        bidir_sum_bits_per_second=as_number(field("bidir_sum.bits_per_second")),
    )


def _count(value: Any) -> float | None:
    number = _int(value)
    return None if number is None else float(number)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _all(items: Sequence[Figures], name: str) -> list[float] | None:
    """The figure of every item, or ``None`` when one lacks it (or there is none)."""
    values = [getattr(item, name) for item in items]
    if not values or any(v is None for v in values):
        return None
    return [float(v) for v in values]


def _each(items: Sequence[Figures], name: str) -> list[float]:
    """The figure of the items that have it."""
    return [float(v) for v in (getattr(item, name) for item in items) if v is not None]


def _apply(values: list[float] | None, how: Callable[[Sequence[float]], float]) -> float | None:
    return how(values) if values else None


def _loss(lost: int | None, packets: int | None) -> float | None:
    if lost is None or packets is None or packets <= 0:
        return None
    return lost / packets * 100.0


def run_figures(pairs: Sequence[Figures]) -> Figures:
    """The figures of a run from those of its pairs (a figure only when every pair has it)."""
    if not pairs:
        return NO_FIGURES
    if len(pairs) == 1:
        return pairs[0]
    lost_values = _all(pairs, "lost_packets")
    packet_values = _all(pairs, "packets")
    lost = int(sum(lost_values)) if lost_values is not None else None
    packets = int(sum(packet_values)) if packet_values is not None else None
    return Figures(
        cpu_local_percent=_apply(_all(pairs, "cpu_local_percent"), _mean),
        cpu_remote_percent=_apply(_all(pairs, "cpu_remote_percent"), _mean),
        retransmits=_apply(_all(pairs, "retransmits"), sum),
        rtt_min_us=_apply(_all(pairs, "rtt_min_us"), min),
        rtt_mean_us=_apply(_all(pairs, "rtt_mean_us"), _mean),
        rtt_max_us=_apply(_all(pairs, "rtt_max_us"), max),
        lost_percent=_loss(lost, packets),
        jitter_ms=_apply(_all(pairs, "jitter_ms"), max),
        lost_packets=lost,
        packets=packets,
        reverse_bits_per_second=_apply(_all(pairs, "reverse_bits_per_second"), sum),
        bidir_sum_bits_per_second=_apply(_all(pairs, "bidir_sum_bits_per_second"), sum),
    )


def group_figures(runs: Sequence[Figures]) -> Figures:
    """The figures of a group from those of its runs (over the runs that have each figure)."""
    counted = [r for r in runs if r.packets is not None and r.lost_packets is not None]
    lost = sum(int(r.lost_packets or 0) for r in counted) if counted else None
    packets = sum(int(r.packets or 0) for r in counted) if counted else None
    with_loss = [r for r in runs if r.lost_percent is not None]
    loss = _loss(lost, packets) if counted and len(counted) == len(with_loss) else None
    if loss is None:
        loss = _apply(_each(runs, "lost_percent"), _mean)
    return Figures(
        cpu_local_percent=_apply(_each(runs, "cpu_local_percent"), _mean),
        cpu_remote_percent=_apply(_each(runs, "cpu_remote_percent"), _mean),
        retransmits=_apply(_each(runs, "retransmits"), _mean),
        rtt_min_us=_apply(_each(runs, "rtt_min_us"), min),
        rtt_mean_us=_apply(_each(runs, "rtt_mean_us"), _mean),
        rtt_max_us=_apply(_each(runs, "rtt_max_us"), max),
        lost_percent=loss,
        jitter_ms=_apply(_each(runs, "jitter_ms"), _mean),
        lost_packets=lost,
        packets=packets,
        reverse_bits_per_second=_apply(_each(runs, "reverse_bits_per_second"), _mean),
        bidir_sum_bits_per_second=_apply(_each(runs, "bidir_sum_bits_per_second"), _mean),
    )
