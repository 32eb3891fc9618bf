# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The README's lab commands, run verbatim from the checkout as a new user would.

The block under "The local demo and lab" is taken from README.md as it is and run by bash in
the checkout, with a fresh empty HOME (so nothing in ``~/.ansible`` helps) and no ``ANSIBLE_*``
variable: only the repository's ``ansible.cfg`` and ``.venv`` (made by ``make test``) are used.
It builds the default lab (``esxilab``, 198.18.0.0/24, state in ``lab/state``), so it is
skipped when such a lab is already up; the finalizer takes the lab down. Where several sessions
share a machine, ``ESXILAB_README_LAB=NAME,SUBNET`` gives the lab commands a name and subnet of
their own (added to ``up`` and ``down``; nothing else of the block changes). The block must run
every playbook in ``playbooks/`` (each says its report directory at the start); the reports it
leaves in ``reports/`` are removed afterwards.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.collection_path import REPO
from tests.integration.test_playbooks import RATE, Play, _one_pair_rate_ok, _printed

pytestmark = [pytest.mark.lab, pytest.mark.slow]

LAB = REPO / "lab" / "esxilab_lab.py"
VENV_BIN = REPO / ".venv" / "bin"
PLAYBOOKS = sorted(p.stem for p in (REPO / "playbooks").glob("*.yml"))
#: "NAME,SUBNET" of a lab of this session's own instead of the default one (see the docstring)
OWN_LAB = os.environ.get("ESXILAB_README_LAB", "")


def lab_options() -> list[str]:
    if not OWN_LAB:
        return []
    name, subnet = OWN_LAB.split(",")
    return ["--name", name, "--subnet", subnet]


def with_own_lab(block: str) -> str:
    """The block with ESXILAB_README_LAB's name (and subnet, for ``up``) on the lab commands."""
    if not OWN_LAB:
        return block
    name, subnet = OWN_LAB.split(",")
    block = block.replace("lab/esxilab_lab.py up ", f"lab/esxilab_lab.py up --name {name} --subnet {subnet} ")
    return block.replace("lab/esxilab_lab.py down", f"lab/esxilab_lab.py down --name {name}")


def readme_block(heading: str) -> str:
    """The first sh block under the README heading that starts with ``heading``."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split(heading, 1)[1]
    found = re.search(r"```sh\n(.*?)```", section, re.S)
    assert found, f"README: no sh block under {heading!r}"
    return found.group(1)


def readme_lab_block() -> str:
    return readme_block("### The local demo and lab")


def run_block(block: str, home: Path, keep: Path | None = None) -> tuple[int, str]:
    """Run a README block verbatim (with this session's own lab, if any); its new reports go again, after a copy
    into ``keep`` when given: ``keep/<playbook>/`` holds that playbook's run directory and a copy of the history."""
    reports = REPO / "reports"
    before = set(reports.iterdir()) if reports.is_dir() else set()
    try:
        proc = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", with_own_lab(block)],
            cwd=REPO,
            env=clean_env(home),
            capture_output=True,
            text=True,
            timeout=1500,
            check=False,
        )
    finally:  # the reports of this run (and only those) go again
        made_now = (set(reports.iterdir()) if reports.is_dir() else set()) - before
        if keep is not None:
            for run_dir in made_now:
                found = re.fullmatch(r"([a-z0-9-]+)-\d{8}T\d{6}Z", run_dir.name)
                if found and run_dir.is_dir() and not run_dir.is_symlink():
                    shutil.copytree(run_dir, keep / found.group(1) / run_dir.name, symlinks=True)
                    # the playbook's history (the demo keeps its own)
                    history = "demo-history.sqlite" if found.group(1) == "demo" else "history.sqlite"
                    if (reports / history).is_file():
                        shutil.copy2(reports / history, keep / found.group(1) / history)
        for made in made_now:
            shutil.rmtree(made) if made.is_dir() and not made.is_symlink() else made.unlink()
    output = proc.stdout + proc.stderr
    print(output[-3000:])
    return proc.returncode, output


def clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "VIRTUAL_ENV"))}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(REPO))]
    env.update(HOME=str(home), PATH=os.pathsep.join(path), ANSIBLE_NOCOLOR="1")
    return env


@pytest.fixture
def fresh_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".ansible").mkdir(parents=True)
    return home


@pytest.fixture
def default_lab() -> Iterator[None]:
    if os.geteuid() != 0 or not VENV_BIN.is_dir():
        pytest.skip("needs root and the checkout's .venv (make test makes it)")
    if (REPO / "lab" / "state" / "inventory.yml").exists():
        pytest.skip("a lab built from lab/state is up; the README's commands would take it down")
    try:
        yield
    finally:
        subprocess.run(
            [sys.executable, str(LAB), "down", *lab_options()[:2]], capture_output=True, timeout=120, check=False
        )


@dataclass(frozen=True)
class LabBlockRun:
    """The README lab block, run once for this file: its output, the fresh HOME it ran in, and each playbook's
    reports kept for the tests that check them (the seed playbooks run on a lab once: here)."""

    returncode: int
    output: str
    home: Path
    kept: Path  # kept/<playbook>/<playbook>-<time>/ and kept/<playbook>/history.sqlite

    def play(self, playbook: str) -> Play:
        """One playbook's part of the run, as test_playbooks.py's ``Play``: its play's output (the report paths
        turned into the kept copy's), its reports."""
        segments = re.split(r"(?m)^(?=PLAY \[)", self.output)
        (segment,) = [s for s in segments if f"/reports/{playbook}-" in s and s.startswith("PLAY [")]
        (run_dir,) = (self.kept / playbook).glob(f"{playbook}-*")
        segment = segment.replace(str(REPO / "reports" / run_dir.name), str(run_dir))
        return Play(self.returncode, segment, self.kept / playbook, playbook)


@pytest.fixture(scope="module")
def lab_block_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabBlockRun]:
    if os.geteuid() != 0 or not VENV_BIN.is_dir():
        pytest.skip("needs root and the checkout's .venv (make test makes it)")
    if (REPO / "lab" / "state" / "inventory.yml").exists():
        pytest.skip("a lab built from lab/state is up; the README's commands would take it down")
    home = tmp_path_factory.mktemp("readme-home")
    (home / ".ansible").mkdir()
    kept = tmp_path_factory.mktemp("readme-reports")
    try:
        block = readme_lab_block()
        assert "ansible-playbook" in block and "lab/esxilab_lab.py down" in block
        returncode, output = run_block(block, home, keep=kept)
        yield LabBlockRun(returncode, output, home, kept)
    finally:
        subprocess.run(
            [sys.executable, str(LAB), "down", *lab_options()[:2]], capture_output=True, timeout=120, check=False
        )


def test_the_readme_lab_section_runs_verbatim(lab_block_run: LabBlockRun) -> None:
    returncode, output, fresh_home = lab_block_run.returncode, lab_block_run.output, lab_block_run.home
    assert returncode == 0, output[-4000:]
    recaps = re.findall(r"^(\S+)\s+: ok=\d+\s+changed=\d+\s+unreachable=(\d+)\s+failed=(\d+)", output, re.M)
    assert recaps, output[-2000:]
    assert all(unreachable == "0" and failed == "0" for _host, unreachable, failed in recaps), output[-4000:]
    # every playbook ran (mtu-compare with the lab's 9000-byte links), each with its report directory
    ran = re.findall(
        rf"Reports of this run go to {re.escape(str(REPO / 'reports'))}/([a-z0-9-]+)-\d{{8}}T\d{{6}}Z/", output
    )
    # (restore.yml runs on every lab host: each keeps a journal, and a clean lab has nothing pending)
    assert sorted(ran) == PLAYBOOKS, ran
    assert all(f"{host}: nothing pending" in output for host in ("h1", "h2", "h3", "h4")), output[-4000:]
    assert len(re.findall(r"^PLAY \[.+\] \*+$", output, re.M)) == len(PLAYBOOKS)  # one play each
    assert output.count("PLAY RECAP") == len(PLAYBOOKS)  # one per playbook, all of them passed
    # nothing was installed into the (fresh) home: the checkout itself was the collection, and
    # Ansible's own files went to build/ansible-home (ansible.cfg); only matplotlib's font cache may
    # be there (a plain ansible-playbook run does not set MPLCONFIGDIR; make demo does)
    assert list((fresh_home / ".ansible").iterdir()) == []
    written = sorted(str(p.relative_to(fresh_home)) for p in fresh_home.rglob("*") if p.is_file())
    assert [w for w in written if not w.startswith((".cache/matplotlib/", ".config/matplotlib/"))] == [], written


# The seed playbooks' reports from that run (test_playbooks.py checks the ESXi ones on its stand-in, mtu-compare
# and mesh on its own lab)


def test_vswitch_forwarding_sums_concurrent_pairs_both_ways(lab_block_run: LabBlockRun) -> None:
    play = lab_block_run.play("vswitch-forwarding").ok()
    printed = _printed(play.output)
    assert (
        "Isolated vSwitch and port group: skipped - the local lab has no vSphere API"
        " (its hosts are Linux network namespaces)." in printed
    )
    doc = play.report("vswitch-forwarding")
    forward, swapped = doc["runs"]
    assert (forward["swapped"], swapped["swapped"], forward["pairs"], swapped["pairs"]) == (False, True, 2, 2)
    by_run: dict[int, list[dict[str, Any]]] = {}
    for result in doc["results"]:
        by_run.setdefault(result["run"], []).append(result)
    assert [(r["server"], r["client"]) for r in by_run[forward["run"]]] == [("h1", "h3"), ("h2", "h4")]
    assert [(r["server"], r["client"]) for r in by_run[swapped["run"]]] == [("h3", "h1"), ("h4", "h2")]
    for run in (forward, swapped):
        rates = [r["result"]["bits_per_second"] for r in by_run[run["run"]]]
        assert run["bits_per_second"] == pytest.approx(sum(rates), rel=1e-12)  # summed
        for rate in rates:  # each pair on its own shaped links, MSS 1448 (h1/h2 have MTU 1500)
            _one_pair_rate_ok(rate)
    summary = {s["swapped"]: s for s in doc["summary"]}
    assert summary[False]["stats"]["mean"] == forward["bits_per_second"]
    mean = summary[True]["stats"]["mean"]
    assert f"vswitch-forwarding, second half serving: {mean / 1e6:.4g} Mbit/s mean over 1 run(s)" in printed


def test_vnic_compare_puts_the_guests_side_by_side(lab_block_run: LabBlockRun) -> None:
    play = lab_block_run.play("vnic-compare").ok()
    doc = play.report("vnic-compare")
    assert [(r["server"], r["client"], r["labels"]["nic"]) for r in doc["results"]] == [
        ("h1", "h2", "e1000"),
        ("h1", "h3", "vmxnet3"),
    ]
    assert (doc["comparison"]["label"], doc["comparison"]["values"]) == ("nic", ["e1000", "vmxnet3"])
    assert any(p.name.startswith("compare-nic") for p in play.reports.glob("vnic-compare-*/vnic-compare/*.png"))
    printed = _printed(play.output)
    summary = {s["compare"]: s for s in doc["summary"]}
    for row in doc["results"]:
        result = row["result"]
        _one_pair_rate_ok(result["bits_per_second"])
        # issue 10: CPU, retransmits (and RTT) are the report's, one run per guest: the result's own figures
        figures = summary[row["labels"]["nic"]]["figures"]
        assert figures["cpu_local_percent"] == result["cpu"]["local_percent"]
        assert figures["cpu_remote_percent"] == result["cpu"]["remote_percent"]
        assert figures["retransmits"] == result["sent"]["retransmits"]
        line = (
            f"{row['labels']['nic']} ({row['client']}): {result['bits_per_second'] / 1e6:.4g} Mbit/s over 1 run(s);"
            f" retransmits {result['sent']['retransmits']} per run;"
            f" CPU guest {result['cpu']['local_percent']:.1f} %, server {result['cpu']['remote_percent']:.1f} %"
            " (iperf's own); host CPU mean / busiest core over the runs (/proc/stat) guest "
        )
        assert any(p.startswith(line) for p in printed), (line, printed)
    (directory,) = play.reports.glob("vnic-compare-*/vnic-compare")
    assert (directory / "cpu-vs-throughput-nic.png").is_file()
    text = (directory / "summary.md").read_text()
    assert "### CPU vs throughput by `nic`" in text
    assert "| forward: h2 → h1 | 1 |" in text  # the direction names the sender and the receiver
    # the lab's link speed (esxilab_vnic_link_speed_mbps) gives the % of line rate of each guest's path
    assert [r["line_rate_bps"] for r in doc["runs"]] == [RATE, RATE]
    assert [r["percent_of_line_rate"] for r in doc["runs"]] == [
        pytest.approx(r["bits_per_second"] / RATE * 100) for r in doc["runs"]
    ]


def test_a_copy_in_home_does_not_shadow_the_checkout(fresh_home: Path) -> None:
    if not VENV_BIN.is_dir():
        pytest.skip("needs the checkout's .venv (make test makes it)")
    stale = fresh_home / ".ansible" / "collections" / "ansible_collections" / "esxilab" / "iperf"
    stale.mkdir(parents=True)
    (stale / "MANIFEST.json").write_text(
        json.dumps({"collection_info": {"namespace": "esxilab", "name": "iperf", "version": "0.0.1"}})
    )
    proc = subprocess.run(
        [str(VENV_BIN / "ansible-galaxy"), "collection", "list", "esxilab.iperf", "--format", "json"],
        cwd=REPO,
        env=clean_env(fresh_home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = json.loads(proc.stdout)
    assert list(found) == [str(REPO / "build" / "checkout" / "ansible_collections")], found
    assert found[str(REPO / "build" / "checkout" / "ansible_collections")]["esxilab.iperf"]["version"] != "0.0.1"


def test_the_readme_regression_gate_example_runs_verbatim(default_lab: None, fresh_home: Path) -> None:
    """Before (200 Mbit/s) and after (160 Mbit/s): the second run finds the first in the history and fails.
    (The shaper, not a busy 2-core CPU, sets those rates: the drop is the link's, never the machine's.)"""
    block = readme_block("### Results you can act on")
    assert block.count("ansible-playbook") == 2 and "--rate 160mbit" in block
    returncode, output = run_block(block, fresh_home)
    assert returncode == 0, output[-4000:]
    first, second = output.split("PLAY RECAP", 2)[:2]
    assert "no baseline" in first and "regression gate failed" not in first
    # the verdicts of the second run: every point slower, each drop significant (the interval excludes zero)
    # (the verdict is printed by ansible.builtin.debug: one quoted line per point)
    drops = re.findall(
        r'"FAIL (.+?): drop <= 5 % - .+?: (-\d+\.\d) % \(95 % CI (-\d+\.\d) % \.\. (-\d+\.\d) %\)"', second
    )
    assert drops, second[-4000:]
    for point, drop, low, high in drops:
        assert -40 < float(low) <= float(drop) <= float(high) < -5, point
    assert re.search(r'"gate: FAILED \(0 passed, \d+ failed\)"', second), second[-3000:]
    assert "the regression gate failed the play" in output


@pytest.mark.full
def test_make_demo_then_the_readme_lab_block_on_a_fresh_clone(fresh_home: Path) -> None:
    """Issue 22: the first hour as written - a fresh clone, ``make demo`` (nothing else installed into it), then the
    README's lab block verbatim with what ``make demo`` made: every playbook runs, none fails."""
    if os.geteuid() != 0 or not (REPO / ".git").exists():
        pytest.skip("needs root and a git checkout to clone")
    if OWN_LAB or (REPO / "lab" / "state" / "inventory.yml").exists():
        pytest.skip("the demo and the README block build the default lab; another lab of that name would collide")
    # a short path: ssh's control sockets live in the checkout (ansible.cfg), and a Unix socket's path has 108 bytes
    clone = Path(tempfile.mkdtemp(prefix="esxilab-clone-")) / "c"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, timeout=120)
    # the checkout's pip cache, so the clone does not download the lock again (the cache is not a dependency)
    if (REPO / "build" / "pip-cache").is_dir():
        shutil.copytree(REPO / "build" / "pip-cache", clone / "build" / "pip-cache", symlinks=True)
    env = clean_env(fresh_home)

    def run(*argv: str, timeout: int) -> str:
        proc = subprocess.run(
            list(argv), cwd=clone, env=env, capture_output=True, text=True, timeout=timeout, check=False
        )
        output = proc.stdout + proc.stderr
        assert proc.returncode == 0, f"{' '.join(argv)}: rc {proc.returncode}\n{output[-4000:]}"
        return output

    try:
        demo = run("make", "demo", timeout=900)
        assert "Mbit/s" in demo, demo[-2000:]
        assert not (clone / ".venv" / ".requirements-dev").exists()  # only the demo's packages
        output = run("bash", "-euo", "pipefail", "-c", readme_lab_block(), timeout=1500)
    finally:
        subprocess.run(
            [sys.executable, str(clone / "lab" / "esxilab_lab.py"), "down"], cwd=clone, capture_output=True,
            timeout=120, check=False,
        )  # fmt: skip
        shutil.rmtree(clone.parent, ignore_errors=True)
    ran = re.findall(r"Reports of this run go to \S+/reports/([a-z0-9-]+)-\d{8}T\d{6}Z/", output)
    assert sorted(ran) == PLAYBOOKS, ran
    recaps = re.findall(r"^(\S+)\s+: ok=\d+\s+changed=\d+\s+unreachable=(\d+)\s+failed=(\d+)", output, re.M)
    assert recaps and all(u == "0" and f == "0" for _host, u, f in recaps), output[-4000:]
    assert "DeprecationWarning" not in demo + output  # e.g. cryptography's, before every ansible* command
