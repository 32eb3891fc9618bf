# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Ping outputs read into per-packet RTTs and counts, and nearest-rank percentiles (``latency/samples.py``).

Every output is a recording under ``tests/fixtures/esxi`` (provenance in its ``SOURCES.md``); every expected figure
is copied from the fixture text by hand.
"""

from __future__ import annotations

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.latency.samples import (
    enough_for,
    nearest_rank,
    parse_samples,
)
from tests.collection_path import ESXI_RECORDINGS


def fx(name: str) -> str:
    return (ESXI_RECORDINGS / name).read_text(encoding="utf-8")


def unwrap(text: str, prefix: str) -> str:
    """The page's per-line comment prefix removed (as SOURCES.md says for the file)."""
    return "\n".join(line[len(prefix) :] if line.startswith(prefix) else "" for line in text.splitlines())


# name -> (rtts, transmitted, received, duplicates, lost)
CASES = {
    "linux-iputils20221126__ping-i__ok.txt": ((0.044, 0.049, 0.038, 0.037, 0.040), 5, 5, 0, 0),
    "linux-iputils20221126__ping-i__partial-loss.txt": ((0.030, 0.022, 0.031, 0.037, 0.032), 9, 5, 0, 4),
    "linux-iputils20221126__ping-i__unreachable.txt": ((), 3, 0, 0, 3),
    "linux-iputils20221126__ping-i__term-cut.txt": ((0.020, 0.026, 0.040, 0.038, 0.031, 0.028), None, 6, 0, None),
    # another host's reply to the same probe: a duplicate although iputils prints no (DUP!) for it
    "linux-iputils20221126__ping-b__dup.txt": ((0.017, 0.021, 0.026), 3, 3, 2, 0),
    "linux-iputils-unknown__ping__dup-vlab.txt": ((9.58, 6.99, 9.59), 3, 3, 3, 0),
    "linux-busybox__ping__ok.txt": ((0.196, 0.036, 0.042), 3, 3, 0, 0),
    "linux-busybox__ping__no-reply.txt": ((), 2, 0, 0, 2),
    "linux-busybox-unknown__ping__dup-slirp-cut.txt": ((2395159.646,), None, 1, 1, None),
    "unknown__vmkping__jumbo-ok-9008-vsan-doc.txt": ((0.554, 0.638, 0.533), 3, 3, 0, 0),
    "unknown__vmkping__message-too-long.txt": ((), 3, 0, 0, 3),
    # vmkping -i 0.05 on a HyperFlex host: the first call lost every probe (ARP not yet resolved), the next one not
    "unknown__vmkping-i__arp-first-loss.txt": ((), 3, 0, 0, 3),
    "unknown__vmkping-i__ok.txt": ((0.303, 0.190, 0.228), 3, 3, 0, 0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_recorded_outputs(name: str) -> None:
    rtts, transmitted, received, duplicates, lost = CASES[name]
    found = parse_samples(fx(name))
    assert found.rtts_ms == rtts
    assert (found.transmitted, found.received, found.duplicates, found.lost) == (
        transmitted,
        received,
        duplicates,
        lost,
    )
    assert found.cut is (transmitted is None)


def test_the_vmkping_page_prefix_is_removed_not_parsed() -> None:
    raw = fx("unknown__vmkping__jumbo-ok-8980.txt")
    assert parse_samples(raw).received == 0  # "# 8980 bytes from": not a reply line as recorded by the page
    found = parse_samples(unwrap(raw, "# "))
    assert found.rtts_ms == (0.695, 0.341, 0.339) and (found.transmitted, found.lost) == (3, 0)


def test_no_output_has_no_samples_and_no_summary() -> None:
    found = parse_samples("sh: vmkping: not found\n")
    assert (found.rtts_ms, found.transmitted, found.received, found.lost, found.cut) == ((), None, 0, None, True)


def test_nearest_rank_is_a_measured_sample() -> None:
    samples = [float(x) for x in range(1, 101)]  # 1..100, shuffled order does not matter
    assert nearest_rank(list(reversed(samples)), 50) == 50.0
    assert nearest_rank(samples, 90) == 90.0
    assert nearest_rank(samples, 99) == 99.0
    assert nearest_rank(samples, 100) == 100.0
    assert nearest_rank([3.0, 1.0, 2.0], 50) == 2.0  # ceil(0.5 * 3) = 2nd smallest
    assert nearest_rank([1.0, 2.0, 3.0, 4.0], 50) == 2.0  # ceil(0.5 * 4) = 2nd: never an average of 2 and 3


@pytest.mark.parametrize(("percent", "enough"), [(50, 2), (90, 10), (99, 100), (100, 1)])
def test_a_percentile_needs_enough_samples_to_differ_from_the_maximum(percent: float, enough: int) -> None:
    assert not enough_for(percent, enough - 1) and enough_for(percent, enough)
    assert nearest_rank([1.0] * (enough - 1), percent) is None
    assert nearest_rank([1.0] * enough, percent) == 1.0


def test_a_percentile_outside_0_to_100_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="percentile 0"):
        nearest_rank([1.0], 0)
