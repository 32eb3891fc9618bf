# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The paired_test preflight, by the real ansible-playbook: every problem at once, before any host is contacted.

No lab and no network: two inventory hosts with the local connection, addresses from the
benchmark range that nothing is ever sent to. Each refusal is proven by the unit tests of the
Python that makes it (tests/unit/plugins/plugin_utils/paired/test_preflight.py, paired/test_plan_and_record.py);
here one play shows how the role surfaces them: all in one message, once, nothing run, no report.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.labkit import PAIRED_TEST_PLAYBOOK, run_playbook

pytestmark = pytest.mark.slow

PLAYBOOK = PAIRED_TEST_PLAYBOOK
# the banner of the preflight task (its name ends with whether a report is written)
PREFLIGHT = "TASK [esxilab.iperf.paired_test : Check every setting of the tests and of the report, then probe"
INVENTORY = """[lab]
h1 ansible_connection=local lab_address=198.19.236.11
h2 ansible_connection=local lab_address=198.19.236.12
h3 ansible_connection=local lab_address=198.19.236.13
"""
TEST = {"name": "t", "pairs": [{"server": "h1", "client": "h2"}], "duration": 1}


def _play(tmp: Path, tests: list[dict[str, Any]], *extra: str, **settings: Any) -> tuple[int, str, float]:
    (tmp / "hosts.ini").write_text(INVENTORY)
    variables = {
        "paired_test_tests": tests,
        "paired_test_address_var": "lab_address",
        "paired_test_state_dir": str(tmp / "remote"),
        "paired_test_report_dir": str(tmp / "reports"),
        "paired_test_report_name": "report",
        **settings,
    }
    (tmp / "vars.json").write_text(json.dumps(variables))
    started = time.monotonic()
    proc = run_playbook("-i", tmp / "hosts.ini", PLAYBOOK, "-e", f"@{tmp / 'vars.json'}", *extra, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - started


def _no_test_play(tmp: Path) -> float:
    """The wall time of a play with no task over the same inventory (Ansible's own start-up)."""
    (tmp / "hosts.ini").write_text(INVENTORY)
    (tmp / "empty.yml").write_text("- name: Nothing\n  hosts: all\n  gather_facts: false\n  tasks: []\n")
    started = time.monotonic()
    proc = run_playbook("-i", tmp / "hosts.ini", tmp / "empty.yml", timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return time.monotonic() - started


def test_every_problem_is_reported_at_once_before_anything_runs(tmp_path: Path) -> None:
    tests: list[dict[str, Any]] = [
        {**TEST, "strams": 2, "duration": 0},
        {"name": "u", "pairs": [{"server": "h1", "client": "h9"}]},
        {**TEST, "name": "v", "repeat": 100000},
    ]
    rc, output, seconds = _play(
        tmp_path,
        tests,
        paired_test_knee_tolerance=5,
        paired_test_state_dir="state",
        report_baseline=str(tmp_path / "missing" / "results.json"),
        report_max_drop_percnt=5,
    )
    assert rc != 0
    lines = [
        "problem(s) with the settings, nothing was run:",
        "report_max_drop_percnt is not an option of esxilab.iperf.report (did you mean report_max_drop_percent?)",
        "paired_test_knee_tolerance=5 is not a fraction in [0, 1)",
        "paired_test_tests[0]: test 't': unknown key(s) strams (did you mean streams?)",
        "paired_test_tests[0]: test 't': duration must be at least 1, got 0",
        "the tests would make 100001 runs",
        "h9 is not in the inventory",
        'paired_test_state_dir="state" on h1 is not an absolute path',
        f"report_baseline={tmp_path / 'missing' / 'results.json'}: ",
    ]
    message = output[output.index("[ERROR]") : output.index("fatal:")]
    for needle in lines:
        assert needle in message, (needle, message)
    assert message.count("is not an option") == 1  # the message once, not once per host
    assert "nothing was run" in message  # stopped at the checks: the probe comes only once every check passed
    assert not (tmp_path / "reports").exists()
    baseline = _no_test_play(tmp_path)
    print(f"preflight failure {seconds:.1f} s, a play with no task {baseline:.1f} s ({seconds / baseline:.2f}x)")
    assert seconds < 3 * baseline + 5, (seconds, baseline)  # not minutes of planning (repeat=100000)


def test_good_settings_pass_and_a_host_no_test_uses_does_nothing_after_the_preflight(tmp_path: Path) -> None:
    settings = {"paired_test_knee_tolerance": "0.1", "paired_test_max_runs": 2, "paired_test_bandwidth": "1.5G/10"}
    rc, output, _seconds = _play(tmp_path, [{**TEST, "repeat": 2}], "--check", "-v", **settings)
    assert rc == 0, output[-3000:]
    probe = output[output.index(PREFLIGHT) :]  # the checks, then the probe of the hosts of the tests
    probe = probe[: probe.index("TASK [", 10)]
    # one task on the controller for the hosts of the tests (h1, h2), probed in check mode too (read-only); h3 (no
    # test uses it) has no line of its own
    assert re.search(r"^ok: \[h1\]", probe, flags=re.MULTILINE) and "[h3]" not in probe, probe
    assert "every setting usable; probed 2 host(s)" in probe, probe[-3000:]


def test_an_external_pair_passes_the_preflight_in_check_mode(tmp_path: Path) -> None:
    """A pair without a client in the inventory (external) is accepted by the role's argument spec and the plan."""
    test = {**TEST, "pairs": [{"server": "h1", "external": {"count": 2, "deadline": 30, "from": "198.19.236.50"}}]}
    rc, output, _seconds = _play(tmp_path, [test], "--check", "-v")
    assert rc == 0, output[-3000:]
    assert "every setting usable; probed 1 host(s)" in output, output[-3000:]  # h1, the server; its clients are not
