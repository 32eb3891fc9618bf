# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The mesh scheduler (plugin_utils/paired/mesh.py) and the esxilab.iperf.mesh_schedule filter.

Exact schedules for small host lists, properties of every mesh up to 24 hosts (hypothesis), the
errors, and that every schedule is accepted by the paired_test plan (the role's own preflight
logic) without a single problem - no host runs two clients of a run, no address conflict.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from typing import Any

import pytest
import yaml
from ansible.errors import AnsibleFilterError
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.esxilab.iperf.plugins.filter import mesh_schedule as filter_plugin
from ansible_collections.esxilab.iperf.plugins.filter.mesh_schedule import mesh_schedule
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.mesh import MeshError, schedule
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan

FOUR = ["h1", "h2", "h3", "h4"]


def _pairs(tests: list[dict[str, Any]]) -> list[list[tuple[str, str]]]:
    """(server, client) per round."""
    return [[(p["server"], p["client"]) for p in test["pairs"]] for test in tests]


# --------------------------------------------------------------------------------------------
# Exact schedules
# --------------------------------------------------------------------------------------------


def test_mesh_of_four_hosts_is_three_rounds_of_two_disjoint_pairs() -> None:
    tests = schedule(FOUR)
    assert _pairs(tests) == [
        [("h1", "h4"), ("h2", "h3")],
        [("h3", "h1"), ("h4", "h2")],
        [("h1", "h2"), ("h3", "h4")],
    ]
    assert [t["name"] for t in tests] == ["mesh-round-1", "mesh-round-2", "mesh-round-3"]
    assert [t["labels"] for t in tests] == [
        {"topology": "mesh", "round": 1, "rounds": 3},
        {"topology": "mesh", "round": 2, "rounds": 3},
        {"topology": "mesh", "round": 3, "rounds": 3},
    ]


def test_mesh_of_five_hosts_leaves_one_host_idle_per_round() -> None:
    tests = schedule(["a", "b", "c", "d", "e"], name="lab")
    assert _pairs(tests) == [
        [("b", "e"), ("c", "d")],  # a idle
        [("e", "a"), ("b", "c")],  # d idle
        [("a", "d"), ("e", "c")],  # b idle
        [("c", "a"), ("d", "b")],  # e idle
        [("a", "b"), ("d", "e")],  # c idle
    ]
    assert [t["name"] for t in tests] == [f"lab-round-{n}" for n in range(1, 6)]


def test_two_hosts_make_one_test_named_as_given() -> None:
    assert schedule(["esxi01", "peer01"], name="56g") == [
        {
            "name": "56g",
            "pairs": [{"server": "esxi01", "client": "peer01"}],
            "labels": {"topology": "mesh", "round": 1, "rounds": 1},
        }
    ]


def test_directed_mesh_adds_the_mirrored_rounds() -> None:
    rounds = _pairs(schedule(FOUR, directed=True))
    assert len(rounds) == 6
    assert rounds[3:] == [[(c, s) for s, c in r] for r in rounds[:3]]
    ordered = [pair for r in rounds for pair in r]
    assert sorted(ordered) == sorted(itertools.permutations(FOUR, 2))


def test_ring_sends_each_host_to_the_next() -> None:
    (test,) = schedule(FOUR, topology="ring", name="vsan-ring", labels={"network": "vsan"})
    assert test["name"] == "vsan-ring"
    # the client sends: h1 -> h2 -> h3 -> h4 -> h1
    assert [(p["client"], p["server"]) for p in test["pairs"]] == [
        ("h1", "h2"),
        ("h2", "h3"),
        ("h3", "h4"),
        ("h4", "h1"),
    ]
    assert test["labels"] == {"network": "vsan", "topology": "ring", "round": 1, "rounds": 1}


def test_halves_pair_the_first_half_as_servers_with_the_second_half_in_order() -> None:
    (test,) = schedule(["vm1", "vm2", "vm3", "vm4", "vm5", "vm6"], topology="halves", name="vswitch")
    assert _pairs([test]) == [[("vm1", "vm4"), ("vm2", "vm5"), ("vm3", "vm6")]]


def test_max_pairs_splits_rounds_and_keeps_them_disjoint() -> None:
    hosts = [f"h{n}" for n in range(1, 9)]
    tests = schedule(hosts, topology="halves", name="fwd", max_pairs=3)
    assert _pairs(tests) == [[("h1", "h5"), ("h2", "h6"), ("h3", "h7")], [("h4", "h8")]]
    assert [t["name"] for t in tests] == ["fwd-round-1", "fwd-round-2"]
    mesh = schedule(hosts, max_pairs=1)
    assert len(mesh) == 28 and all(len(t["pairs"]) == 1 for t in mesh)  # every pair on its own, 8*7/2


# --------------------------------------------------------------------------------------------
# Properties of every mesh
# --------------------------------------------------------------------------------------------


@given(st.integers(min_value=2, max_value=24), st.booleans())
def test_every_mesh_covers_each_pair_once_in_disjoint_balanced_rounds(count: int, directed: bool) -> None:
    hosts = [f"esxi{n:02d}" for n in range(count)]
    rounds = _pairs(schedule(hosts, directed=directed))
    base_rounds = count - 1 if count % 2 == 0 else count
    assert len(rounds) == base_rounds * (2 if directed else 1)
    for pairs in rounds:
        members = [h for pair in pairs for h in pair]
        assert len(members) == len(set(members))  # no host twice in a round
        assert len(pairs) == count // 2
    measured = [pair for pairs in rounds for pair in pairs]
    if directed:
        assert sorted(measured) == sorted(itertools.permutations(hosts, 2))
    else:
        assert sorted(tuple(sorted(p)) for p in measured) == list(itertools.combinations(hosts, 2))
        serves = Counter(s for s, _c in measured)
        sends = Counter(c for _s, c in measured)
        spread = max(abs(serves[h] - sends[h]) for h in hosts)
        assert spread == (1 if count % 2 == 0 else 0)


@given(st.integers(min_value=2, max_value=16), st.integers(min_value=1, max_value=9))
def test_max_pairs_never_changes_what_is_measured(count: int, limit: int) -> None:
    hosts = [f"h{n}" for n in range(count)]
    whole = _pairs(schedule(hosts))
    packed = _pairs(schedule(hosts, max_pairs=limit))
    assert sorted(pair for pairs in packed for pair in pairs) == sorted(pair for pairs in whole for pair in pairs)
    for pairs in packed:
        members = [h for pair in pairs for h in pair]
        assert 1 <= len(pairs) <= limit and len(members) == len(set(members))
    total = count * (count - 1) // 2
    cut = sum(-(-len(pairs) // limit) for pairs in whole)  # every round cut into pieces
    assert -(-total // limit) <= len(packed) <= cut


def test_max_pairs_packs_pairs_of_later_rounds_into_free_places() -> None:
    hosts = [f"esx{n:02d}" for n in range(1, 7)]
    rounds = _pairs(schedule(hosts, max_pairs=2))
    assert len(rounds) == 8  # 15 pairs, 2 at a time: the fewest possible; cutting rounds would give 10
    assert rounds[:2] == [[("esx01", "esx06"), ("esx02", "esx05")], [("esx03", "esx04"), ("esx05", "esx01")]]


# --------------------------------------------------------------------------------------------
# The schedules are what paired_test accepts
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("topology", "count"), [("mesh", 2), ("mesh", 5), ("mesh", 8), ("ring", 2), ("ring", 5), ("halves", 6)]
)
def test_paired_test_plans_every_schedule_without_a_problem(topology: str, count: int) -> None:
    hosts = [f"h{n}" for n in range(1, count + 1)]
    addresses = {h: f"198.18.0.{10 + n}" for n, h in enumerate(hosts, start=1)}
    tests = schedule(hosts, topology=topology, name="m")
    plan = build_plan(
        tests,
        {"duration": 1, "direction": "both", "swap_roles": True},
        addresses=addresses,
        address_var="lab_address",
        inventory_hosts=hosts,
        play_hosts=hosts,
    )
    assert plan["problems"] == {key: [] for key in plan["problems"]}
    assert plan["run_count"] == len(tests) * 4  # forward/reverse x unswapped/swapped
    assert plan["hosts"] == sorted(hosts)
    for run in plan["runs"]:
        clients = [p["client"] for p in run["pairs"]]
        assert len(clients) == len(set(clients))


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hosts", "options", "message"),
    [
        ("h1,h2", {}, "hosts must be a list of inventory host names (for example groups['mesh']), got str"),
        (["h1"], {}, "a schedule needs at least 2 hosts, got 1 (h1)"),
        ([], {}, "a schedule needs at least 2 hosts, got 0 (none)"),
        (["h1", "h2", "h1"], {}, "hosts must be unique; listed more than once: h1"),
        (["h1", ""], {}, "hosts[1] must be a non-empty host name, got ''"),
        (["h1", 2], {}, "hosts[1] must be a non-empty host name, got 2"),
        (FOUR, {"topology": "star"}, "topology must be one of mesh, ring, halves, got 'star'"),
        (
            ["a", "b", "c"],
            {"topology": "halves"},
            "topology=halves needs an even number of hosts (half servers, half clients), got 3: a, b, c; "
            "add or remove a host, or use topology=mesh",
        ),
        (FOUR, {"topology": "ring", "directed": True}, "directed=true applies to topology=mesh only"),
        (FOUR, {"max_pairs": 0}, "max_pairs must be a whole number of at least 1, got 0"),
        (FOUR, {"max_pairs": True}, "max_pairs must be a whole number of at least 1, got True"),
        (FOUR, {"name": " "}, "name must be a non-empty test name, got ' '"),
        (FOUR, {"labels": ["x"]}, "labels must be a dictionary, got list"),
    ],
)
def test_errors_say_why(hosts: Any, options: dict[str, Any], message: str) -> None:
    with pytest.raises(MeshError) as caught:
        schedule(hosts, **options)
    assert str(caught.value).startswith(message)
    with pytest.raises(AnsibleFilterError) as filtered:
        mesh_schedule(hosts, **options)
    assert str(filtered.value).startswith(f"esxilab.iperf.mesh_schedule: {message}")


# --------------------------------------------------------------------------------------------
# The filter plugin
# --------------------------------------------------------------------------------------------


def test_filter_is_registered_and_documented() -> None:
    assert filter_plugin.FilterModule().filters() == {"mesh_schedule": mesh_schedule}
    doc = yaml.safe_load(filter_plugin.DOCUMENTATION)
    assert doc["name"] == "mesh_schedule"
    assert set(doc["options"]) == {"_input", "topology", "name", "directed", "max_pairs", "labels", "host_labels"}
    assert doc["options"]["topology"]["choices"] == ["mesh", "ring", "halves"]
    assert yaml.safe_load(filter_plugin.RETURN)["_value"]["elements"] == "dict"
    assert isinstance(yaml.safe_load(filter_plugin.EXAMPLES), list)


def test_the_preview_in_the_examples_is_what_the_filter_returns() -> None:
    printed = re.findall(r"# (mesh-round-\d): (\[.*\])", filter_plugin.EXAMPLES)
    assert len(printed) == 3
    tests = mesh_schedule(FOUR)
    assert printed == [(t["name"], str([f"{p['server']} <- {p['client']}" for p in t["pairs"]])) for t in tests]
