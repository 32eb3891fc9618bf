# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Schedules of host pairs for many-host tests: rounds in which no host is in two pairs.

Backend of the filter ``esxilab.iperf.mesh_schedule``. Plain data in, plain data out: no
Ansible import, no I/O. Each round is returned as a test of the role
``esxilab.iperf.paired_test`` (``name``, ``pairs`` of ``{server, client}``, ``labels``), so the
list feeds ``paired_test_tests`` as it is; the role runs the tests one after the other and the
pairs of one test at the same time.

Topologies:

* ``mesh`` -- every unordered pair of hosts once, by the circle method (round-robin
  tournament): host 1 stays, the others rotate one place per round; n-1 rounds of n/2 pairs for
  an even n, n rounds of (n-1)/2 pairs (one host idle) for an odd n. The pair of the fixed host
  changes orientation every round, the other pairs keep theirs, which makes every host server
  and client equally often (odd n) or within one (even n). ``directed`` adds the mirrored
  rounds, so every ordered pair is measured once (for the other direction without ``-R``).
* ``ring`` -- one round: each host sends to the next (host i is the client of the pair whose
  server is host i+1, the last sends to the first), as the vSAN network performance test does.
  Each host is client once and server once in it, which paired_test allows.
* ``halves`` -- one round: the first half of the hosts are servers, the second half clients,
  paired in order (h1<-h3, h2<-h4 for h1..h4). Needs an even number of hosts.

``host_labels`` maps hosts to their labels (for example the guests' ``esxilab_guest_labels``):
each pair takes the labels of its **client** host as its pair labels (``pairs[].labels``; the
client is the host that sends and prints the result, unless reversed), so a round of guests of
several operating systems splits by ``os`` in the report (``report_compare_by``). A pair keeps its
labels in every round and role order; a host without labels gives its pairs none.

``max_pairs`` limits the pairs of a round (the concurrency, for example to what one uplink
carries): the pairs are packed, in schedule order, first-fit into rounds of at most that many
disjoint pairs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["TOPOLOGIES", "MeshError", "schedule"]

TOPOLOGIES = ("mesh", "ring", "halves")


class MeshError(ValueError):
    """The hosts or options cannot make a schedule; the message says why and what to do."""


Pair = tuple[str, str]  # (server, client)


def _check_hosts(hosts: Any) -> list[str]:
    if isinstance(hosts, str | bytes | Mapping) or not isinstance(hosts, Sequence):
        raise MeshError(
            f"hosts must be a list of inventory host names (for example groups['mesh']), got {type(hosts).__name__}"
        )
    names: list[str] = []
    for index, host in enumerate(hosts):
        if not isinstance(host, str) or not host.strip():
            raise MeshError(f"hosts[{index}] must be a non-empty host name, got {host!r}")
        names.append(host)
    duplicates = sorted({h for h in names if names.count(h) > 1})
    if duplicates:
        raise MeshError(f"hosts must be unique; listed more than once: {', '.join(duplicates)}")
    if len(names) < 2:
        raise MeshError(f"a schedule needs at least 2 hosts, got {len(names)} ({', '.join(names) or 'none'})")
    return names


def _check_host_labels(host_labels: Any) -> dict[str, dict[str, Any]]:
    """``host_labels``: host name -> a dictionary of labels (``None`` or ``{}``: no labels)."""
    if host_labels is None:
        return {}
    if not isinstance(host_labels, Mapping):
        raise MeshError(
            "host_labels must be a dictionary of host name -> labels (for example {'vm1': {'os': 'centos'}}), got "
            f"{type(host_labels).__name__}"
        )
    checked: dict[str, dict[str, Any]] = {}
    for host, labels in host_labels.items():
        if labels is None:
            continue
        if not isinstance(labels, Mapping):
            raise MeshError(
                f"host_labels[{host!r}] must be a dictionary of labels (for example {{'os': 'centos'}}), got "
                f"{type(labels).__name__} {labels!r}"
            )
        checked[str(host)] = dict(labels)
    return checked


def _circle(hosts: Sequence[str]) -> list[list[Pair]]:
    """Round-robin rounds by the circle method; every unordered pair exactly once."""
    players: list[str | None] = [*hosts, *([None] if len(hosts) % 2 else [])]
    size = len(players)
    fixed, rest = players[0], players[1:]
    rounds: list[list[Pair]] = []
    for number in range(size - 1):
        row = [fixed, *rest]
        pairs: list[Pair] = []
        for index in range(size // 2):
            first, second = row[index], row[size - 1 - index]
            if first is None or second is None:  # the idle host of an odd count
                continue
            if index == 0 and number % 2 == 1:
                first, second = second, first
            pairs.append((first, second))
        rounds.append(pairs)
        rest = [rest[-1], *rest[:-1]]
    return rounds


def _rounds(hosts: Sequence[str], topology: str, directed: bool) -> list[list[Pair]]:
    if topology == "mesh":
        rounds = _circle(hosts)
        if directed:
            rounds += [[(client, server) for server, client in pairs] for pairs in rounds]
        return rounds
    if directed:
        raise MeshError(f"directed=true applies to topology=mesh only (topology={topology} has one round)")
    if topology == "ring":
        count = len(hosts)
        return [[(hosts[(index + 1) % count], hosts[index]) for index in range(count)]]
    if len(hosts) % 2:
        raise MeshError(
            f"topology=halves needs an even number of hosts (half servers, half clients), got {len(hosts)}: "
            f"{', '.join(hosts)}; add or remove a host, or use topology=mesh"
        )
    half = len(hosts) // 2
    return [[(hosts[index], hosts[index + half]) for index in range(half)]]


def _limit(rounds: list[list[Pair]], max_pairs: int | None) -> list[list[Pair]]:
    """At most ``max_pairs`` pairs per round: the pairs, in schedule order, packed first-fit.

    Each pair goes into the first round that has room and none of its hosts, else into a new
    round at the end - so the rounds stay disjoint and are often fewer than by cutting every
    round into pieces (6 hosts, 2 pairs at a time: 8 rounds instead of 10).
    """
    if max_pairs is None or all(len(pairs) <= max_pairs for pairs in rounds):
        return rounds
    packed: list[list[Pair]] = []
    busy: list[set[str]] = []
    for pair in (pair for pairs in rounds for pair in pairs):
        for index, members in enumerate(packed):
            if len(members) < max_pairs and not busy[index] & set(pair):
                members.append(pair)
                busy[index] |= set(pair)
                break
        else:
            packed.append([pair])
            busy.append(set(pair))
    return packed


def schedule(
    hosts: Any,
    *,
    topology: str = "mesh",
    name: str = "mesh",
    directed: bool = False,
    max_pairs: int | None = None,
    labels: Mapping[str, Any] | None = None,
    host_labels: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Rounds of disjoint pairs as paired_test tests; see the module docstring."""
    names = _check_hosts(hosts)
    if topology not in TOPOLOGIES:
        raise MeshError(f"topology must be one of {', '.join(TOPOLOGIES)}, got {topology!r}")
    if not isinstance(name, str) or not name.strip():
        raise MeshError(f"name must be a non-empty test name, got {name!r}")
    if max_pairs is not None and (isinstance(max_pairs, bool) or not isinstance(max_pairs, int) or max_pairs < 1):
        raise MeshError(f"max_pairs must be a whole number of at least 1, got {max_pairs!r}")
    if labels is not None and not isinstance(labels, Mapping):
        raise MeshError(f"labels must be a dictionary, got {type(labels).__name__}")
    if not isinstance(directed, bool):
        raise MeshError(f"directed must be true or false, got {directed!r}")
    by_host = _check_host_labels(host_labels)
    rounds = _limit(_rounds(names, topology, directed), max_pairs)
    total = len(rounds)
    tests: list[dict[str, Any]] = []
    for number, pairs in enumerate(rounds, start=1):
        round_labels: dict[str, Any] = {**dict(labels or {}), "topology": topology, "round": number, "rounds": total}
        tests.append(
            {
                "name": name if total == 1 else f"{name}-round-{number}",
                "pairs": [
                    {"server": server, "client": client, **({"labels": by_host[client]} if by_host.get(client) else {})}
                    for server, client in pairs
                ],
                "labels": round_labels,
            }
        )
    return tests
