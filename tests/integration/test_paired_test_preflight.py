# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The paired_test preflight refuses bad settings before any run, by the real ansible-playbook.

No lab and no network: two inventory hosts with the local connection, addresses from the
benchmark range that nothing is ever sent to. Every case fails in the preflight, before the
role looks for iperf on the hosts, so no host is contacted and no report is written.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.labkit import PAIRED_TEST_PLAYBOOK, run_playbook

pytestmark = pytest.mark.slow

PLAYBOOK = PAIRED_TEST_PLAYBOOK
INVENTORY = """[lab]
h1 ansible_connection=local lab_address=198.19.236.11
h2 ansible_connection=local lab_address=198.19.236.12
"""
TEST = {"name": "t", "pairs": [{"server": "h1", "client": "h2"}], "duration": 1}


def _play(tmp: Path, test: dict[str, Any], *extra: str, **settings: Any) -> tuple[int, str, float]:
    (tmp / "hosts.ini").write_text(INVENTORY)
    variables = {
        "paired_test_tests": [test],
        "paired_test_address_var": "lab_address",
        "paired_test_state_dir": str(tmp / "remote"),
        "paired_test_report_dir": str(tmp / "reports"),
        "paired_test_report_name": "report",
        **settings,
    }
    (tmp / "vars.json").write_text(json.dumps(variables))
    started = time.monotonic()
    proc = run_playbook("-i", tmp / "hosts.ini", PLAYBOOK, "-e", f"@{tmp / 'vars.json'}", *extra, timeout=120)
    return proc.returncode, " ".join((proc.stdout + proc.stderr).split()), time.monotonic() - started


# The refusals the role makes in Jinja (knee tolerance, report name, state dir: issue 20 moves them into Python)
# are proven here, in make test; a refusal made by the Python plan is proven by its unit test
# (tests/unit/plugins/plugin_utils/test_paired.py) and here by one play (repeat), the rest in make test-full.
CASES = [
    (
        {**TEST, "repeat": 100000},
        {},
        "the tests would make 100000 runs (test 't': 1 streams value(s) x 1 direction(s) x 1 role order(s) x "
        "repeat 100000 = 100000), more than the 1000 allowed by paired_test_max_runs",
    ),
    (
        TEST,
        {"paired_test_knee_tolerance": 5},
        "paired_test_knee_tolerance=5 is not a fraction in [0, 1): it is the fraction of the best mean within "
        "which a stream count counts as the plateau (the knee); for 5 % write 0.05.",
    ),
    (
        TEST,
        {"paired_test_knee_tolerance": "-0.1"},
        "paired_test_knee_tolerance=-0.1 is not a fraction in [0, 1)",
    ),
    (
        TEST,
        {"paired_test_report_name": "../x"},
        'paired_test_report_name="../x" is not a plain file name: use letters, digits and . _ + - only',
    ),
    (
        {**TEST, "bandwidth": "10X"},
        {},
        "test 't': bandwidth='10X' is not a rate iperf reads: a number of bit/s with an optional K, M, G or T suffix",
    ),
    (
        TEST,
        {"paired_test_bandwidth": "10X"},
        "role variable paired_test_bandwidth: bandwidth='10X' is not a rate iperf reads",
    ),
    (
        TEST,
        {"paired_test_state_dir": "state"},
        'paired_test_state_dir="state" on h1 is not an absolute path',
    ),
    (
        {**TEST, "pairs": [{"server": "h1", "client": "h2", "external": {"deadline": 60}}]},
        {},
        "test 't' pair 1: client and external are both set; a pair has either a client in the inventory (client) "
        "or clients outside it (external) - remove one",
    ),
    (
        {**TEST, "pairs": [{"server": "h1", "external": {"deadline": 60}}], "direction": "reverse"},
        {},
        "test 't': direction='reverse' cannot be used with external clients: the external client chooses the "
        "direction (-R on its command line); leave direction at forward",
    ),
    (
        {**TEST, "pairs": [{"server": "h1", "external": {"count": 2}}]},
        {},
        "external.deadline is missing",
    ),
]
IDS = [
    "repeat",
    "knee_tolerance",
    "knee_negative",
    "report_name",
    "bandwidth",
    "role_bandwidth",
    "state_dir",
    "external_and_client",
    "external_reverse",
    "external_deadline",
]
IN_MAKE_TEST = {"repeat", "knee_tolerance", "report_name", "state_dir"}


@pytest.mark.parametrize(
    ("test", "settings", "message"),
    [
        pytest.param(*case, id=i, marks=() if i in IN_MAKE_TEST else pytest.mark.full)
        for case, i in zip(CASES, IDS, strict=True)
    ],
)
def test_bad_settings_fail_in_the_preflight(
    tmp_path: Path, test: dict[str, Any], settings: dict[str, Any], message: str
) -> None:
    rc, output, seconds = _play(tmp_path, test, **settings)
    assert rc != 0
    assert message in output, output[-3000:]
    assert "Probe the hosts of the tests for iperf" not in output  # stopped before any host is contacted
    assert "Start the iperf servers" not in output
    assert not (tmp_path / "reports").exists()
    assert seconds < 60, seconds  # repeat=100000 used to keep Ansible busy for minutes


def test_good_settings_pass_the_preflight_in_check_mode(tmp_path: Path) -> None:
    settings = {"paired_test_knee_tolerance": "0.1", "paired_test_max_runs": 2, "paired_test_bandwidth": "1.5G/10"}
    rc, output, _seconds = _play(tmp_path, {**TEST, "repeat": 2}, "--check", **settings)
    assert rc == 0, output[-3000:]
    assert "Probe the hosts of the tests for iperf" in output


def test_an_external_pair_passes_the_preflight_in_check_mode(tmp_path: Path) -> None:
    """A pair without a client in the inventory (external) is accepted by the role's argument spec and the plan."""
    test = {**TEST, "pairs": [{"server": "h1", "external": {"count": 2, "deadline": 30, "from": "198.19.236.50"}}]}
    rc, output, _seconds = _play(tmp_path, test, "--check")
    assert rc == 0, output[-3000:]
    assert "Probe the hosts of the tests for iperf" in output
    assert "1 host(s) of this play take part in no test: h2." in output  # the external client is no host
