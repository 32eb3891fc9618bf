# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pair labels split one concurrent run in the report, for real, on the local lab (``lab/esxilab_lab.py``).

One lab for the module: prefix ``lblpt``, 4 hosts on 198.19.170.0/24, 100 Mbit/s links except h4's, which is
30 Mbit/s (``--host-rate h4=30mbit``), so the pair whose client is h4 runs at about 30 x 1448/1514 Mbit/s
and the other at about 100 x 1448/1514 Mbit/s - the split is visible. 100 Mbit/s, not 1 Gbit/s: on a busy
2-core machine a 1 Gbit/s flow through veth, bridge and tbf is CPU-bound (10 % under the goodput measured
under load), so the link, not the CPU, must set the rate for a 5 % tolerance to hold. Its finalizer runs
``down --purge`` and checks that nothing of the lab is left.

* the role ``esxilab.iperf.paired_test``: two pairs at once (h1 <- h2 labelled ``os: a``, h3 <- h4 labelled
  ``os: b``), 2 s runs, repeat 2, ``report_compare_by: os``: ``results.json`` and ``summary.md`` show per-OS
  rows whose figures are each pair's own iperf figure, and the parts of a run add up to the run;
* ``playbooks/vswitch-forwarding.yml`` with guest labels from the inventory (``esxilab_guest_labels``) and
  ``esxilab_vswitch_compare_by=os``: the per-OS means are printed.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.collection_path import REPO, ensure_collection_path
from tests.integration.labkit import (
    ANSIBLE_PLAYBOOK,
    PAIRED_TEST_PLAYBOOK,
    Lab,
    ansible_env,
    lab_unavailable,
    paired_test_vars,
    run_playbook,
    skip_if,
)

ensure_collection_path()
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.base import UNITS, format_rate  # noqa: E402

pytestmark = [pytest.mark.lab, pytest.mark.slow]

PLAYBOOK = PAIRED_TEST_PLAYBOOK
OVERLAY = REPO / "inventories" / "lab"
PREFIX = os.environ.get("ESXILAB_LABELS_PREFIX", "lblpt")
SUBNET = os.environ.get("ESXILAB_LABELS_SUBNET", "198.19.170")
HOSTS = ("h1", "h2", "h3", "h4")
FAST = 100_000_000 * 1448 / 1514  # goodput of a 100 Mbit/s tbf link at MTU 1500: 95.64 Mbit/s
SLOW = 30_000_000 * 1448 / 1514  # h4's 30 Mbit/s link: 28.69 Mbit/s
PORT_BASE = 25501
PLAY_TIMEOUT = 180


def _iperf_left() -> list[str]:
    found = []
    for host in HOSTS:
        pids = subprocess.run(
            ["ip", "netns", "pids", f"{PREFIX}-{host}"], capture_output=True, text=True, timeout=10, check=False
        ).stdout.split()
        for pid in pids:
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if "iperf" in cmdline.split(" ", 1)[0]:
                found.append(f"{host} pid {pid}: {cmdline}")
    return found


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    skip_if(lab_unavailable(("ip", "tc", "ssh", "iperf3")))
    the_lab = Lab(PREFIX, tmp_path_factory.mktemp(PREFIX) / "state")
    with the_lab.session("--hosts", "4", "--subnet", f"{SUBNET}.0/24", "--rate", "100mbit", "--host-rate", "h4=30mbit"):
        yield the_lab


def _run(*args: str | Path) -> tuple[int, str]:
    """ansible-playbook ARGS; its exit status and output."""
    proc = run_playbook(*args, timeout=PLAY_TIMEOUT, env=ansible_env(ANSIBLE_FORKS="10"))
    return proc.returncode, proc.stdout + proc.stderr


def _report_dir(base: Path) -> Path:
    found = list(base.rglob("results.json"))
    assert len(found) == 1, found
    return found[0].parent


def _by_run(doc: dict[str, Any]) -> dict[int, list[dict[str, Any]]]:
    by_run: dict[int, list[dict[str, Any]]] = {}
    for result in doc["results"]:
        by_run.setdefault(result["run"], []).append(result)
    return by_run


def test_one_concurrent_run_splits_by_the_pairs_os_label(lab: Lab, tmp_path: Path) -> None:
    (tmp_path / "remote").mkdir()
    tests = [
        {
            "name": "split",
            "duration": 2,
            "repeat": 2,
            "pairs": [
                {"server": "h1", "client": "h2", "labels": {"os": "a", "line_rate_bps": 1e8}},
                {"server": "h3", "client": "h4", "labels": {"os": "b", "line_rate_bps": 3e7}},
            ],
        }
    ]
    settings = {"paired_test_port_base": PORT_BASE, "report_compare_by": "os", "report_history": "none"}
    variables = paired_test_vars(tmp_path, tests, **settings)
    started = time.monotonic()
    rc, output = _run("-i", lab.inventory, PLAYBOOK, "-e", f"@{variables}")
    assert rc == 0, output[-4000:]
    assert time.monotonic() - started < PLAY_TIMEOUT
    assert _iperf_left() == []
    directory = _report_dir(tmp_path / "reports")
    doc = json.loads((directory / "results.json").read_text())

    # two runs of two concurrent pairs; the runs' totals are the sums of their pairs, parts are not runs
    assert [(r["run"], r["pairs"], r["compare"], r["parts"]) for r in doc["runs"]] == [
        (1, 2, None, ["a", "b"]),
        (2, 2, None, ["a", "b"]),
    ]
    assert len(doc["results"]) == 4
    by_run = _by_run(doc)
    figures: dict[str, list[float]] = {"a": [], "b": []}
    for run in doc["runs"]:
        pairs = by_run[run["run"]]
        # every pair record and result carries its pair's labels
        assert [(p["labels"]["os"], p["record"]["labels"]["os"]) for p in pairs] == [("a", "a"), ("b", "b")]
        own = [p["result"]["bits_per_second"] for p in pairs]  # each pair's figure, parsed from its iperf3 output
        for pair in pairs:
            received = pair["result"]["received"]
            assert pair["result"]["bits_per_second"] == received["bits_per_second"]
            assert received["bits_per_second"] == pytest.approx(received["bytes"] * 8 / received["seconds"], rel=0.01)
        assert run["bits_per_second"] == math.fsum(own)
        parts = [p for p in doc["parts"] if p["part_of"] == run["run"]]
        assert [(p["compare"], p["pairs"]) for p in parts] == [("a", [1]), ("b", [2])]
        assert [p["bits_per_second"] for p in parts] == own  # a part of one pair is that pair's own figure
        assert math.isclose(math.fsum(p["bits_per_second"] for p in parts), run["bits_per_second"], rel_tol=1e-15)
        # % of line rate of a part: against its own pairs' line rates (the pairs' labels)
        assert [p["line_rate_bps"] for p in parts] == [1e8, 3e7]
        assert run["line_rate_bps"] == 1.3e8
        for part in parts:
            figures[part["compare"]].append(part["bits_per_second"])
    # the split is real: the tc limits of the pairs' hosts show in their parts
    for value in figures["a"]:
        assert abs(value / FAST - 1) < 0.05, figures
    for value in figures["b"]:
        assert abs(value / SLOW - 1) < 0.05, figures

    summary = {(s["compare"], s["part"]): s for s in doc["summary"]}
    assert list(summary) == [(None, False), ("a", True), ("b", True)]
    whole, part_a, part_b = summary.values()
    assert whole["stats"]["count"] == part_a["stats"]["count"] == part_b["stats"]["count"] == 2
    assert part_a["stats"]["mean"] == pytest.approx(math.fsum(figures["a"]) / 2, rel=1e-12)
    assert part_b["stats"]["mean"] == pytest.approx(math.fsum(figures["b"]) / 2, rel=1e-12)
    assert whole["stats"]["mean"] == pytest.approx(part_a["stats"]["mean"] + part_b["stats"]["mean"], rel=1e-12)
    assert part_b["percent_of_line_rate"] == pytest.approx(100 * part_b["stats"]["mean"] / 3e7)
    assert doc["comparison"]["values"] == ["a", "b"] and doc["comparison"]["left_out_runs"] == 0

    markdown = (directory / "summary.md").read_text()
    (unit,) = (u for u in UNITS if u.name == doc["unit"])
    assert "### Parts of the runs by `os`" in markdown
    for run in doc["runs"]:
        for part in (p for p in doc["parts"] if p["part_of"] == run["run"]):
            cell = format_rate(part["bits_per_second"], unit)
            assert f"| {run['run']} | split | " in markdown
            assert f"| {part['compare']} | {part['pairs'][0]} | {cell} |" in markdown, (part, markdown)
    assert "| (all pairs) |" in markdown
    summary_csv = (directory / "summary.csv").read_text().splitlines()
    assert summary_csv[0].endswith(",part") and len(summary_csv) == 4
    assert "label.os" in (directory / "results.csv").read_text().splitlines()[0].split(",")


def test_vswitch_forwarding_prints_per_os_means_from_guest_labels(lab: Lab, tmp_path: Path) -> None:
    overlay = tmp_path / "guest-labels.yml"
    overlay.write_text(
        "all:\n  hosts:\n"
        "    h3: {esxilab_guest_labels: {os: a}}\n"  # the clients of the halves: h1 <- h3, h2 <- h4
        "    h4: {esxilab_guest_labels: {os: b}}\n"
    )
    variables = {
        "esxilab_reports_dir": str(tmp_path / "reports"),
        "esxilab_vswitch_compare_by": "os",
        "esxilab_vswitch_duration": 2,
        "esxilab_vswitch_repeat": 1,
        "report_history": "none",
        "paired_test_port_base": PORT_BASE + 10,
    }
    (tmp_path / "vars.json").write_text(json.dumps(variables))
    playbook = REPO / "playbooks" / "vswitch-forwarding.yml"
    rc, output = _run("-i", lab.inventory, "-i", OVERLAY, "-i", overlay, playbook, "-e", f"@{tmp_path / 'vars.json'}")
    assert rc == 0, output[-4000:]
    assert _iperf_left() == []
    doc = json.loads((_report_dir(tmp_path / "reports") / "results.json").read_text())
    assert doc["compare_by"] == "os"
    by_run = _by_run(doc)
    for run in doc["runs"]:
        # a pair keeps its client guest's labels in both role orders
        guests = [(r["server"] if run["swapped"] else r["client"], r["labels"]["os"]) for r in by_run[run["run"]]]
        assert guests == [("h3", "a"), ("h4", "b")]
        assert run["parts"] == ["a", "b"]
    for item in doc["summary"]:
        who = "second half" if item["swapped"] else "first half"
        if not item["part"]:  # the whole runs: the sum over all pairs
            assert f"vswitch-forwarding, {who} serving, all pairs: {item['stats']['mean'] / 1e6:.4g} Mbit/s" in output
            continue
        mean = item["stats"]["mean"] / 1e6
        line = f"vswitch-forwarding, {who} serving, os={item['compare']} pairs: {mean:.4g} Mbit/s mean"
        assert line in output, (line, output[-3000:])
    b_means = [s["stats"]["mean"] for s in doc["summary"] if s["compare"] == "b" and not s["combined"]]
    assert b_means and all(abs(m / SLOW - 1) < 0.05 for m in b_means), b_means  # h4's 30 Mbit/s link


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        (
            {"os": {"name": "centos"}},
            "paired_test_tests[0].pairs[1].labels (test 't' pair 2).os must be a string, number or boolean, got dict "
            "{'name': 'centos'}; give a dictionary of scalar values, for example labels: {os: centos, nic: vmxnet3}",
        ),
        (
            {"pair": 3},
            "paired_test_tests[0].pairs[1].labels (test 't' pair 2): pair is one of the labels the plan sets",
        ),
        # the preflight, not the argument spec, reads the tests' items: one line with the fix
        (
            ["os"],
            "paired_test_tests[0].pairs[1].labels (test 't' pair 2) must be a dictionary, got list ['os']; give a "
            "dictionary of scalar values",
        ),
    ],
    ids=["nested", "reserved", "list"],
)
def test_bad_pair_labels_fail_before_any_host_is_contacted(tmp_path: Path, labels: Any, message: str) -> None:
    """No lab: two hosts with the local connection; the play must stop in the preflight."""
    if not ANSIBLE_PLAYBOOK.exists():
        pytest.skip(f"{ANSIBLE_PLAYBOOK} does not exist (run the tests with the venv's python)")
    (tmp_path / "hosts.ini").write_text(
        "[lab]\nh1 ansible_connection=local lab_address=198.19.178.11\n"
        "h2 ansible_connection=local lab_address=198.19.178.12\n"
    )
    test = {
        "name": "t",
        "pairs": [{"server": "h1", "client": "h2"}, {"server": "h2", "client": "h1", "labels": labels}],
    }
    variables = {
        "paired_test_tests": [test],
        "paired_test_address_var": "lab_address",
        "paired_test_state_dir": str(tmp_path / "remote"),
        "paired_test_report_dir": str(tmp_path / "reports"),
    }
    (tmp_path / "vars.json").write_text(json.dumps(variables))
    rc, output = _run("-i", tmp_path / "hosts.ini", PLAYBOOK, "-e", f"@{tmp_path / 'vars.json'}")
    flat = " ".join(output.split())
    assert rc != 0
    assert message in flat, flat[-3000:]
    assert "nothing was run" in flat  # stopped at the checks: the probe comes only once every check passed
    assert "Start the iperf servers" not in flat
    assert not (tmp_path / "reports").exists()
