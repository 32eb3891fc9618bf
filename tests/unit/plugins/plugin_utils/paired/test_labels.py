# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Per-pair labels of the paired_test role: declared once, checked before anything runs, merged over the test's
labels (the pair wins), shared ones lifted to the run, carried into every pair record; and mesh_schedule's
``host_labels`` (each pair takes its client host's labels)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.filter.mesh_schedule import mesh_schedule
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.checks import PAIR_KEYS, PairedTestError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.line_rate import with_line_rates
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.mesh import MeshError, schedule
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.record import build_record
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.settings import PAIR_OPTIONS
from tests.collection_path import FIXTURES, REPO

ROLE_SPEC = REPO / "roles" / "paired_test" / "meta" / "argument_specs.yml"
RESULT_A = "iperf3-3.1.3-json-client-tcp-pscheduler.json"  # receiver 388736097.120548 bit/s
ADDRESSES = {f"vm{i}": f"198.18.1.{i}" for i in range(1, 5)}


def _test(**extra: Any) -> dict[str, Any]:
    return {
        "name": "fwd",
        "labels": {"os": "linux", "site": "lab"},
        "pairs": [
            {"server": "vm1", "client": "vm3", "labels": {"os": "centos", "nic": "vmxnet3"}},
            {"server": "vm2", "client": "vm4", "labels": {"os": "ubuntu", "nic": "vmxnet3"}},
        ],
        **extra,
    }


def test_pair_keys_are_the_declared_pair_options_and_the_role_spec_documents_them() -> None:
    assert tuple(PAIR_OPTIONS) == PAIR_KEYS
    assert "labels" in PAIR_KEYS
    spec = yaml.safe_load(ROLE_SPEC.read_text())
    pairs = spec["argument_specs"]["main"]["options"]["paired_test_tests"]["options"]["pairs"]["options"]
    assert list(pairs) == list(PAIR_OPTIONS)
    assert pairs["labels"]["type"] == "dict"
    # neither end is required by the spec: client not with external clients, server not with external.server
    assert {k for k, v in pairs.items() if v.get("required")} == set()
    assert pairs["external"]["type"] == "dict"


def test_pair_labels_are_merged_over_the_test_labels_and_the_pair_wins() -> None:
    plan = build_plan([_test(streams=[1, 2])], addresses=ADDRESSES)
    assert plan["tests"][0]["pairs"][0]["labels"] == {"os": "centos", "nic": "vmxnet3"}  # the pair's own
    first = plan["runs"][0]
    assert [p["labels"] for p in first["pairs"]] == [
        {"os": "centos", "site": "lab", "nic": "vmxnet3", "test": "fwd", "run": 1, "pair": 1, "streams": 1,
         "direction": "forward", "swapped": False, "repetition": 1},
        {"os": "ubuntu", "site": "lab", "nic": "vmxnet3", "test": "fwd", "run": 1, "pair": 2, "streams": 1,
         "direction": "forward", "swapped": False, "repetition": 1},
    ]  # fmt: skip
    # the run's labels: what every pair has alike - the test's site, the shared nic; os differs: not a run label
    assert first["labels"] == {"site": "lab", "nic": "vmxnet3"}


def test_pair_labels_the_same_for_every_pair_are_run_labels_as_test_labels_are() -> None:
    same = _test()
    for pair in same["pairs"]:
        pair["labels"] = {"os": "centos"}
    as_pairs = build_plan([same], addresses=ADDRESSES)["runs"][0]
    plain = [{"server": "vm1", "client": "vm3"}, {"server": "vm2", "client": "vm4"}]
    as_test = build_plan([_test(labels={"os": "centos", "site": "lab"}, pairs=plain)], addresses=ADDRESSES)["runs"][0]
    assert as_pairs["labels"] == as_test["labels"] == {"os": "centos", "site": "lab"}
    assert [p["labels"] for p in as_pairs["pairs"]] == [p["labels"] for p in as_test["pairs"]]


def test_without_pair_labels_the_run_labels_are_the_test_labels() -> None:
    test = {"name": "t", "labels": {"nic": "e1000"}, "pairs": [{"server": "vm1", "client": "vm3"}]}
    run = build_plan([test], addresses=ADDRESSES)["runs"][0]
    assert run["labels"] == {"nic": "e1000"}
    assert run["pairs"][0]["labels"]["nic"] == "e1000"


def test_a_pair_keeps_its_labels_when_the_roles_are_swapped() -> None:
    runs = build_plan([_test(swap_roles=True)], addresses=ADDRESSES)["runs"]
    swapped = next(r for r in runs if r["swapped"])
    assert [(p["server"], p["client"], p["labels"]["os"]) for p in swapped["pairs"]] == [
        ("vm3", "vm1", "centos"),
        ("vm4", "vm2", "ubuntu"),
    ]


SCALARS = "give a dictionary of scalar values, for example labels: {os: centos, nic: vmxnet3}"
RENAME = "choose another label name"


@pytest.mark.parametrize(
    ("labels", "message", "fix"),
    [
        (["os", "centos"], "paired_test_tests[0].pairs[1].labels (test 'fwd' pair 2) must be a dictionary, got list",
         SCALARS),
        ("os=centos", "paired_test_tests[0].pairs[1].labels (test 'fwd' pair 2) must be a dictionary, got str",
         SCALARS),
        ({"os": ["centos"]}, "paired_test_tests[0].pairs[1].labels (test 'fwd' pair 2).os must be a string, number",
         SCALARS),
        ({"os": {"name": "centos"}}, ".os must be a string, number or boolean, got dict", SCALARS),
        ({"os": None}, ".os must be a string, number or boolean, got null", SCALARS),
        ({"rate": float("nan")}, ".rate must be a string, number or boolean, got float nan", SCALARS),
        ({"": "x"}, "a label name must be a non-empty string", SCALARS),
        ({1: "x"}, "a label name must be a non-empty string without control characters, got 1", SCALARS),
        ({"pair": 7}, "pair is one of the labels the plan sets for every run and pair", RENAME),
        ({"test": "x"}, "test is one of the labels the plan sets", RENAME),
        ({"os\nnic": "x"}, "a label name must be a non-empty string without control characters", SCALARS),
        ({"os": "linux\u202e"}, ".os must not contain control characters", "give one line of plain text"),
    ],
)  # fmt: skip
def test_bad_pair_labels_are_refused_naming_the_pair_and_the_fix(labels: Any, message: str, fix: str) -> None:
    test = _test()
    test["pairs"][1]["labels"] = labels
    with pytest.raises(PairedTestError) as caught:
        build_plan([test], addresses=ADDRESSES)
    assert message in str(caught.value)
    assert fix in str(caught.value)


def test_the_position_of_the_test_is_named_too() -> None:
    bad = _test(name="second")
    bad["pairs"][0]["labels"] = ["x"]
    with pytest.raises(PairedTestError, match=r"paired_test_tests\[1\]\.pairs\[0\]\.labels \(test 'second' pair 1\)"):
        build_plan([_test(), bad], addresses=ADDRESSES)


def test_labels_null_is_no_labels_and_booleans_and_numbers_are_kept() -> None:
    test = _test()
    test["pairs"][0]["labels"] = None
    test["pairs"][1]["labels"] = {"jumbo": True, "mtu": 9000, "ratio": 0.5}
    first, second = build_plan([test], addresses=ADDRESSES)["runs"][0]["pairs"]
    assert first["labels"]["os"] == "linux"  # the test's
    assert (second["labels"]["jumbo"], second["labels"]["mtu"], second["labels"]["ratio"]) == (True, 9000, 0.5)


def _reports(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What the hosts register: the clients' results carry the labels iperf_run was given (the pair's)."""
    reports: dict[str, dict[str, Any]] = {}
    for pair in run["pairs"]:
        server = reports.setdefault(pair["server"], {"host": pair["server"]})
        client = reports.setdefault(pair["client"], {"host": pair["client"]})
        server.setdefault("servers", {"results": []})["results"].append({"item": pair, "pid": 10 + pair["pair"]})
        server.setdefault("stops", {"results": []})["results"].append({"item": pair, "stopped": []})
        result = {**parse((FIXTURES / RESULT_A).read_text()), "labels": pair["labels"]}
        client.setdefault("clients", {"results": []})["results"].append(
            {"item": pair, "result": result, "started_at": 100.0}
        )
    return list(reports.values())


def test_every_pair_record_carries_its_labels() -> None:
    run = build_plan([_test()], addresses=ADDRESSES)["runs"][0]
    record = build_record(run, _reports(run))
    assert record["ok"]
    assert [p["labels"]["os"] for p in record["pairs"]] == ["centos", "ubuntu"]
    assert [p["labels"]["pair"] for p in record["pairs"]] == [1, 2]
    assert record["labels"] == {"site": "lab", "nic": "vmxnet3"}
    for pair in record["pairs"]:
        assert pair["result"] is not None and pair["result"].get("labels") == pair["labels"]


def test_a_pair_line_rate_label_is_kept_and_said_so() -> None:
    test = _test()
    test["pairs"][0]["labels"]["line_rate_bps"] = 1e9
    plan = with_line_rates(build_plan([test], addresses=ADDRESSES), {})
    first, second = plan["runs"][0]["pairs"]
    assert first["labels"]["line_rate_bps"] == 1e9
    assert first["labels"]["line_rate_source"] == "given: the pair's line_rate_bps label (inventory)"
    assert "line_rate_bps" not in second["labels"]  # nothing read from the hosts in this test: unknown
    run_source = plan["runs"][0]["labels"]["line_rate_source"]
    others = second["labels"]["line_rate_source"]
    assert run_source == f"given: the line_rate_bps / link_speed_mbps labels of pair 1; the other pairs: {others}"
    test["pairs"][1]["labels"]["link_speed_mbps"] = 300
    both = with_line_rates(build_plan([test], addresses=ADDRESSES), {})["runs"][0]
    assert both["labels"]["line_rate_source"] == "given: the line_rate_bps / link_speed_mbps labels of pair 1, 2"
    assert both["pairs"][1]["labels"]["line_rate_source"] == "given: the pair's link_speed_mbps label (inventory)"


# -- mesh_schedule host_labels ------------------------------------------------------------------


def test_mesh_pairs_take_their_client_hosts_labels() -> None:
    labels = {"vm1": {"os": "rhel"}, "vm3": {"os": "centos"}, "vm4": {"os": "ubuntu"}}
    (test,) = schedule(["vm1", "vm2", "vm3", "vm4"], topology="halves", name="fwd", host_labels=labels)
    assert test["pairs"] == [
        {"server": "vm1", "client": "vm3", "labels": {"os": "centos"}},
        {"server": "vm2", "client": "vm4", "labels": {"os": "ubuntu"}},
    ]
    plan = build_plan([test], addresses=ADDRESSES)
    assert [p["labels"]["os"] for p in plan["runs"][0]["pairs"]] == ["centos", "ubuntu"]


def test_mesh_host_without_labels_gives_its_pairs_none() -> None:
    (test,) = schedule(["vm1", "vm2", "vm3", "vm4"], topology="halves", host_labels={"vm3": {}, "vm4": None})
    assert test["pairs"] == [{"server": "vm1", "client": "vm3"}, {"server": "vm2", "client": "vm4"}]


@pytest.mark.parametrize(
    ("host_labels", "message"),
    [
        (["vm1"], "host_labels must be a dictionary of host name -> labels"),
        ({"vm3": "centos"}, "host_labels['vm3'] must be a dictionary of labels (for example {'os': 'centos'})"),
    ],
)
def test_mesh_bad_host_labels_are_refused(host_labels: Any, message: str) -> None:
    with pytest.raises(MeshError) as caught:
        schedule(["vm1", "vm2", "vm3", "vm4"], topology="halves", host_labels=host_labels)
    assert message in str(caught.value)
    with pytest.raises(AnsibleFilterError, match=r"esxilab\.iperf\.mesh_schedule: host_labels"):
        mesh_schedule(["vm1", "vm2", "vm3", "vm4"], topology="halves", host_labels=host_labels)


@pytest.mark.parametrize("where", ["test", "role"])
@pytest.mark.parametrize("label", ["run", "test", "repetition", "pair"])
def test_a_test_or_role_label_the_plan_sets_is_refused_not_dropped(where: str, label: str) -> None:
    """The plan sets these labels itself: a test's (or paired_test_labels') own value was silently dropped."""
    test = _test()
    defaults: dict[str, Any] = {}
    if where == "test":
        test["labels"] = {label: "mine"}
    else:
        test.pop("labels", None)
        defaults["labels"] = {label: "mine"}
    with pytest.raises(PairedTestError) as caught:
        build_plan([test], defaults, addresses=ADDRESSES)
    shown = "paired_test_tests[0]: test 'fwd'" if where == "test" else "role variable paired_test_labels"
    assert shown in str(caught.value)
    assert f"{label} is one of the labels the plan sets for every run and pair" in str(caught.value)
    assert RENAME in str(caught.value)


@pytest.mark.parametrize("name", ["fwd\nrev", "fw\td", "fwd\x1b[31m", "fwd\u202erev"])
def test_a_test_name_with_a_control_character_is_refused(name: str) -> None:
    with pytest.raises(PairedTestError) as caught:
        build_plan([_test(name=name)], addresses=ADDRESSES)
    assert "paired_test_tests[0].name (item 1) must be one line of plain text without control characters" in str(
        caught.value
    )
    assert "rename the test" in str(caught.value)
