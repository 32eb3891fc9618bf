# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Ansible itself running iperf_facts and the filters against localhost (local connection).

The real Debian binaries are probed (``/usr/bin/iperf3`` 3.12, ``/usr/bin/iperf`` 2.1.8);
no iperf traffic is sent. One run uses ``ansible_python_interpreter=/nonexistent/python`` to
show that iperf_facts needs no Python on the host (a Python module fails there).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.collection_path import FIXTURES
from tests.integration.labkit import ANSIBLE_PLAYBOOK, isolated_ansible_env, printed

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
ANSIBLE = BIN / "ansible"
ANSIBLE_DOC = BIN / "ansible-doc"

IPERF3_JSON = "iperf3-3.1.3-json-client-tcp-pscheduler.json"
IPERF3_TEXT = "iperf3-ge3.2-text-client-basic-tcp-t2-lablog.txt"
IPERF2_TEXT = "iperf2-2.0.13-text-client-tcp-e-fm-pkb.txt"
IPERF2_CSV = "iperf2-2.0.5era-csv-client-tcp-single-line-overlord.txt"
ONE_OF_EACH = (IPERF3_JSON, IPERF3_TEXT, IPERF2_TEXT, IPERF2_CSV)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    if not ANSIBLE_PLAYBOOK.exists():
        pytest.skip(f"ansible-playbook is not installed next to {sys.executable}")
    return isolated_ansible_env(tmp_path_factory.mktemp("ansible-home"))


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of fixture copies, as result files would sit on a host."""
    directory = tmp_path_factory.mktemp("results on host")
    for name in ONE_OF_EACH:
        shutil.copyfile(FIXTURES / name, directory / f"run-{name}")
    (directory / "notes.md").write_text("not matched by the glob\n")
    return directory


def _run(cmd: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=180, check=False)


def _adhoc(env: dict[str, str], cwd: Path, module: str, args: str, *extra: str) -> subprocess.CompletedProcess[str]:
    cmd = [str(ANSIBLE), "localhost", "-i", "localhost,", "-c", "local", "-m", module, "-a", args, *extra]
    return _run(cmd, env, cwd)


# -- ansible-playbook ------------------------------------------------------------------------

PLAYBOOK = """
- name: iperf_facts on localhost
  hosts: all
  gather_facts: false
  tasks:
    - name: Find the iperf binaries
      esxilab.iperf.iperf_facts:

    - name: Keep the tools
      ansible.builtin.set_fact:
        found_tools: "{{ ansible_facts.iperf_tools }}"

    - name: Read the result files with a glob
      esxilab.iperf.iperf_facts:
        gather_tools: false
        src:
          - "{{ results_dir }}/run-*"
        labels:
          pair: lo-lo

    - name: Keep the results
      ansible.builtin.set_fact:
        from_files: "{{ ansible_facts.iperf_results }}"

    - name: Parse text given directly
      esxilab.iperf.iperf_facts:
        gather_tools: false
        content: "{{ lookup('ansible.builtin.file', results_dir ~ '/run-' ~ text_fixture) }}"

    - name: Print everything for the test
      ansible.builtin.debug:
        msg:
          tools: "{{ found_tools }}"
          from_files: "{{ from_files }}"
          from_content: "{{ ansible_facts.iperf_results }}"
          stats: "{{ from_files | esxilab.iperf.iperf_stats }}"
"""


@pytest.fixture(scope="module")
def playbook_output(env: dict[str, str], results_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("playbook")
    (work / "site.yml").write_text(PLAYBOOK)
    extra = json.dumps({"results_dir": str(results_dir), "text_fixture": IPERF3_TEXT})
    proc = _run([str(ANSIBLE_PLAYBOOK), "-i", "localhost,", "-c", "local", "-e", extra, "site.yml"], env, work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    values = printed(proc.stdout)
    assert values, proc.stdout
    msg: dict[str, Any] = values[-1]["msg"]
    return msg


def test_playbook_finds_the_debian_binaries(playbook_output: dict[str, Any]) -> None:
    tools = {tool["path"]: tool for tool in playbook_output["tools"]}
    iperf3 = tools["/usr/bin/iperf3"]
    assert (iperf3["family"], iperf3["version"], iperf3["runnable"], iperf3["error"]) == ("iperf3", "3.12", True, None)
    assert iperf3["supports"] == {
        "json": True,
        "json_stream": False,
        "bidir": True,
        "get_server_output": True,
        "csv": False,
    }
    iperf2 = tools["/usr/bin/iperf"]  # iperf2 -v exits 1 and prints on stderr: still runnable
    assert (iperf2["family"], iperf2["version"], iperf2["runnable"]) == ("iperf2", "2.1.8", True)
    assert iperf2["supports"]["csv"] is True
    assert "/bin/iperf3" not in tools  # /bin is /usr/bin here: listed once


def test_playbook_src_glob_reads_every_file(playbook_output: dict[str, Any], results_dir: Path) -> None:
    runs = {Path(r["source"]).name.removeprefix("run-"): r for r in playbook_output["from_files"]}
    assert sorted(runs) == sorted(ONE_OF_EACH)  # notes.md is not matched
    assert all(r["labels"] == {"pair": "lo-lo"} for r in runs.values())
    assert all(Path(r["source"]).parent == results_dir for r in runs.values())

    json3 = runs[IPERF3_JSON]
    assert (json3["tool"], json3["format"], json3["tool_version"]) == ("iperf3", "json", "3.1.3")
    assert json3["sent"]["bytes"] == 486643200
    assert json3["sent"]["retransmits"] == 159
    assert json3["received"]["bytes"] == 485969880
    assert json3["bits_per_second"] == pytest.approx(388736097.120548)

    text3 = runs[IPERF3_TEXT]
    assert (text3["tool"], text3["format"]) == ("iperf3", "text")
    assert text3["sent"]["bits_per_second"] == 832e6
    assert text3["received"]["bytes"] == 200278016
    assert text3["bits_per_second"] == 796e6
    assert text3["raw"] == (FIXTURES / IPERF3_TEXT).read_text()

    text2 = runs[IPERF2_TEXT]
    assert (text2["tool"], text2["format"]) == ("iperf2", "text")
    assert text2["sent"]["bytes"] == 14063 * 1024**2
    assert text2["bits_per_second"] == 1966e6

    csv2 = runs[IPERF2_CSV]
    assert (csv2["tool"], csv2["format"]) == ("iperf2", "csv")
    assert csv2["bits_per_second"] == 36841295787
    assert csv2["duration"] == 10.0


def test_playbook_content_and_stats(playbook_output: dict[str, Any]) -> None:
    [result] = playbook_output["from_content"]
    assert (result["source"], result["bits_per_second"], result["sent"]["retransmits"]) == ("content", 796e6, 0)
    stats = playbook_output["stats"]
    assert (stats["count"], stats["skipped"]) == (4, 0)
    assert stats["min"] == pytest.approx(388736097.120548)
    assert stats["max"] == 36841295787
    assert stats["sum"] == pytest.approx(388736097.120548 + 796e6 + 1966e6 + 36841295787)


# -- ad-hoc: the filter through Jinja ---------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "tool", "fmt", "bits_per_second"),
    [
        (IPERF3_JSON, "iperf3", "json", 388736097.120548),
        (IPERF3_TEXT, "iperf3", "text", 796e6),
        (IPERF2_TEXT, "iperf2", "text", 1966e6),
        (IPERF2_CSV, "iperf2", "csv", 36841295787),
    ],
)
def test_iperf_parse_filter_in_adhoc_debug(
    env: dict[str, str], results_dir: Path, fixture: str, tool: str, fmt: str, bits_per_second: float
) -> None:
    path = results_dir / f"run-{fixture}"
    jinja = "msg={{ lookup('file', '" + str(path) + "') | esxilab.iperf.iperf_parse }}"
    proc = _adhoc(env, results_dir, "ansible.builtin.debug", jinja)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [value] = printed(proc.stdout)
    result = value["msg"]
    assert (result["tool"], result["format"]) == (tool, fmt)
    assert result["bits_per_second"] == pytest.approx(bits_per_second)


def test_iperf_parse_filter_error_names_the_filter(env: dict[str, str], results_dir: Path) -> None:
    proc = _adhoc(env, results_dir, "ansible.builtin.debug", "msg={{ 'hello world' | esxilab.iperf.iperf_parse }}")
    assert proc.returncode != 0
    assert "esxilab.iperf.iperf_parse: the text is not iperf2 or iperf3 output" in proc.stdout + proc.stderr


# -- no Python on the host --------------------------------------------------------------------


def test_python_modules_fail_with_the_bogus_interpreter(env: dict[str, str], results_dir: Path) -> None:
    # the control experiment: the setting really takes Python away from the "host"
    proc = _adhoc(env, results_dir, "ansible.builtin.ping", "", "-e", "ansible_python_interpreter=/nonexistent/python")
    assert proc.returncode != 0
    assert "/nonexistent/python" in proc.stdout + proc.stderr


@pytest.mark.parametrize("check_mode", [False, True], ids=["real", "check"])
def test_iperf_facts_needs_no_python_on_the_host(env: dict[str, str], results_dir: Path, check_mode: bool) -> None:
    args = json.dumps({"src": [f"{results_dir}/run-*.json"], "labels": {"run": 1}})
    extra = ["-e", "ansible_python_interpreter=/nonexistent/python", *(["--check"] if check_mode else [])]
    proc = _adhoc(env, results_dir, "esxilab.iperf.iperf_facts", args, *extra)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [result] = printed(proc.stdout)
    assert result["changed"] is False
    facts = result["ansible_facts"]
    versions = {t["path"]: t["version"] for t in facts["iperf_tools"]}
    assert versions["/usr/bin/iperf3"] == "3.12"
    assert versions["/usr/bin/iperf"] == "2.1.8"
    [run] = facts["iperf_results"]
    assert run["source"] == f"{results_dir}/run-{IPERF3_JSON}"
    assert run["received"]["bytes"] == 485969880
    assert run["labels"] == {"run": 1}


def test_iperf_facts_missing_file_fails_naming_it(env: dict[str, str], results_dir: Path) -> None:
    args = json.dumps({"gather_tools": False, "src": [f"{results_dir}/nope.json"]})
    proc = _adhoc(env, results_dir, "esxilab.iperf.iperf_facts", args)
    assert proc.returncode != 0
    assert f"{results_dir}/nope.json: does not exist" in proc.stdout


# -- the manuals render ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("plugin_type", "name", "expected"),
    [
        ("module", "esxilab.iperf.iperf_facts", ["on_parse_error", "iperf_tools", "platforms: posix"]),
        ("filter", "esxilab.iperf.iperf_parse", ["keep_raw", "labels", "bits_per_second"]),
        ("filter", "esxilab.iperf.iperf_stats", ["confidence", "ci95", "half_width"]),
    ],
)
def test_ansible_doc_renders(env: dict[str, str], plugin_type: str, name: str, expected: list[str]) -> None:
    proc = _run([str(ANSIBLE_DOC), "-t", plugin_type, name], env, Path.cwd())
    assert proc.returncode == 0, proc.stderr
    assert "EXAMPLES" in proc.stdout
    for word in expected:
        assert word in proc.stdout, word
