# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The role esxilab.iperf.report run by the real ansible-playbook of this venv, on localhost.

Two plays, as the seed playbooks use the role:

1. a stream sweep in the shape of ``paired_test_results`` (run records with pairs), assembled
   here from fixture results parsed by the collection's parser -- 1, 2 and 4 streams, two
   repetitions each, one failed run, one run with two pairs; line rate 10 Gbit/s;
2. plain normalized results parsed *in the play* from fixture files with
   ``esxilab.iperf.iperf_parse`` and labelled ``nic: e1000`` / ``nic: vmxnet3``, compared by
   ``nic``.

The host runs with ``ansible_python_interpreter=/nonexistent/python``: the role needs no Python
on the hosts (ESXi). The files are checked against the input facts; the PNGs are read back
with matplotlib. Further runs: check mode (nothing written) and a controller without
matplotlib (a shadow package that fails to import): JSON/CSV/Markdown written, plots skipped,
the play does not fail.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse
from tests.collection_path import FIXTURES
from tests.integration.labkit import ANSIBLE_PLAYBOOK, isolated_ansible_env, printed, printed_text, run_playbook

pytestmark = pytest.mark.slow

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
TEN_G = 10_000_000_000

# Sweep (figures printed in the fixtures): 1 stream "939 Mbits/sec" and "926 Mbits/sec";
# 2 streams "[SUM] ... 1970 Mbits/sec" and a refused connection; 4 streams "[SUM] ... 7.24
# Gbits/sec" + "[SUM] ... 95.2 Mbits/sec receiver" (two pairs), and 7.24 Gbits/sec again.
SWEEP = [
    (1, 1, ["iperf2-2.0.13-text-client-tcp-e-fm-i1-pkb.txt"]),
    (1, 2, ["iperf2-2.0.13-text-client-tcp-V-ipv6-t60-gracefullife.txt"]),
    (2, 1, ["iperf2-2.0.13-text-client-tcp-e-fm-P2-pkb.txt"]),
    (2, 2, ["iperf3-3.17.1-text-client-error-unable-to-connect.txt"]),
    (
        4,
        1,
        [
            "iperf2-2.0.x-esxi-text-client-tcp-m-w2m-P4-elatov.txt",
            "iperf3-ge3.2-text-client-tcp-P4-SUMMARY-ONLY-tast.txt",
        ],
    ),
    (4, 2, ["iperf2-2.0.x-esxi-text-client-tcp-m-w2m-P4-elatov.txt"]),
]
# NIC comparison: e1000 "796 Mbits/sec" and "721 Mbits/sec"; vmxnet3 "24.9 Gbits/sec" and
# "25.7 Gbits/sec" (all receiver figures, one stream, ten or one intervals).
NICS = [
    ("iperf3-ge3.2-text-client-basic-tcp-t2-lablog.txt", "e1000"),
    ("iperf3-3.0or3.1-text-client-tcp-attfiber.txt", "e1000"),
    ("iperf3-ge3.2-text-client-tcp-moler.txt", "vmxnet3"),
    ("iperf3-3.6-text-client-tcp-V-verbose-moler.txt", "vmxnet3"),
]
ENVIRONMENT = {
    "esxi_version": "8.0.3 (build 24022510)",
    "nic": "vmxnet3",
    "mtu": 9000,
    "iperf": {"tool": "iperf3", "version": "3.17.1"},
    "physical_nics": [
        {"name": "vmnic1", "driver": "ixgben", "link_up": True, "speed_mbps": 10000, "duplex": "full"},
    ],
}

PLAYBOOK = """
- name: Report a stream sweep recorded by paired_test
  hosts: all
  gather_facts: false
  tasks:
    - name: Write the report of the sweep
      ansible.builtin.include_role:
        name: esxilab.iperf.report
      vars:
        report_runs: "{{ sweep_runs }}"
        report_name: sweep
        report_base_dir: "{{ out_dir }}/reports"
        report_line_rate_bps: "{{ line_rate }}"
        report_environment: "{{ environment_facts }}"

    - name: Hand the paths to the test
      ansible.builtin.debug:
        msg:
          sweep_files: "{{ report_files }}"

- name: Compare NIC types from results parsed on the controller
  hosts: all
  gather_facts: false
  tasks:
    - name: Parse the saved outputs
      ansible.builtin.set_fact:
        nic_results: "{{ nic_results | default([]) + [lookup('ansible.builtin.file', fixtures ~ '/' ~ item.0)
                         | esxilab.iperf.iperf_parse(labels={'test': 'tcp-1', 'nic': item.1})] }}"
      loop: "{{ nic_files }}"

    - name: Write the comparison report
      ansible.builtin.include_role:
        name: esxilab.iperf.report
      vars:
        report_runs: "{{ nic_results }}"
        report_name: nics
        report_title: e1000 vs vmxnet3
        report_dir: "{{ out_dir }}/nics"
        report_compare_by: nic

    - name: Hand the parsed results to the test
      ansible.builtin.debug:
        msg:
          nic_files: "{{ report_files }}"
"""


def _sweep_runs() -> list[dict[str, Any]]:
    runs = []
    for number, (streams, repetition, files) in enumerate(SWEEP, start=1):
        pairs: list[dict[str, Any]] = []
        for index, name in enumerate(files, start=1):
            result = parse((FIXTURES / name).read_text())
            result["labels"] = {"test": "sweep", "run": number, "pair": index, "streams": streams}
            ok = result["bits_per_second"] is not None
            pairs.append(
                {
                    "pair": index,
                    "server": f"esxi{index}",
                    "client": f"esxi{index + 2}",
                    "sender": f"esxi{index + 2}",  # forward: the client sends
                    "receiver": f"esxi{index}",
                    "address": f"198.18.7.{index}",
                    "port": 5200 + index,
                    "started_at": 1738324800.5 + 15 * number,
                    "result": result,
                    "ok": ok,
                    "error": None if ok else f"the client on esxi{index + 2} failed: {result['error']}",
                }
            )
        ok = all(p["ok"] for p in pairs)
        runs.append(
            {
                "run": number,
                "test": "sweep",
                "streams": streams,
                "sweep": True,
                "direction": "forward",
                "swapped": False,
                "repetition": repetition,
                "labels": {"nic": "vmxnet3"},
                "pairs": pairs,
                "total_bits_per_second": math.fsum(p["result"]["bits_per_second"] for p in pairs) if ok else None,
                "ok": ok,
                "complete": ok,
                "errors": [] if ok else [f"pair 1 (esxi3 -> esxi1): {pairs[0]['error']}"],
                "warnings": [],
            }
        )
    return runs


def _printed(stdout: str) -> list[Any]:
    """The ``msg`` of every task result the default callback printed as JSON after ``=>``."""
    return [value["msg"] for value in printed(stdout) if isinstance(value, dict) and "msg" in value]


def _csv_rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


def _check_png(path: Path) -> None:
    from matplotlib.image import imread

    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, path
    pixels = imread(path)
    assert pixels.shape[:2] == (550, 990), path
    assert pixels.std() > 0.05, path  # something is drawn


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    if not ANSIBLE_PLAYBOOK.exists():
        pytest.skip(f"ansible-playbook is not installed next to {sys.executable}")
    return isolated_ansible_env(tmp_path_factory.mktemp("ansible-home"))


def _play(env: dict[str, str], work: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    work.mkdir(parents=True, exist_ok=True)
    (work / "site.yml").write_text(PLAYBOOK)
    variables = {
        "out_dir": str(work / "out"),
        "sweep_runs": _sweep_runs(),
        "line_rate": TEN_G,
        "environment_facts": ENVIRONMENT,
        "fixtures": str(FIXTURES),
        "nic_files": [list(item) for item in NICS],
        "ansible_python_interpreter": "/nonexistent/python",  # the role needs no Python on the hosts
    }
    (work / "vars.json").write_text(json.dumps(variables))
    local = ("-i", "esxi-lab,", "-c", "local", "-e", "@vars.json")
    return run_playbook(*local, *extra, "site.yml", timeout=240, env=env, cwd=work)


@pytest.fixture(scope="module")
def played(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    pytest.importorskip("matplotlib")
    work = tmp_path_factory.mktemp("report")
    proc = _play(env, work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    printed = _printed(proc.stdout)
    tables = printed_text(proc.stdout, "Write the report on the controller")
    files = {k: v for m in printed if isinstance(m, dict) for k, v in m.items()}
    return {"work": work, "tables": tables, "files": files, "stdout": proc.stdout, "stderr": proc.stderr}


# -- the sweep -------------------------------------------------------------------------------


def test_sweep_report_directory_and_files(played: dict[str, Any]) -> None:
    [directory] = (p for p in (played["work"] / "out" / "reports").iterdir() if p.name != "history.sqlite")
    assert re.fullmatch(r"sweep-\d{8}T\d{6}Z", directory.name)
    files = played["files"]["sweep_files"]
    assert files["dir"] == str(directory)
    assert files["markdown"] == str(directory / "summary.md")
    # no time series: the runs with intervals are 5 s long with 5 intervals (report_timeseries_min_seconds: 10)
    pngs = ["sweep-forward.png"]
    assert files["plots"] == [str(directory / name) for name in pngs]
    names = sorted(p.name for p in directory.iterdir())
    # .esxilab-iperf-report.json: the manifest of the files this report wrote; report.html (report_html: true, the
    # default) and the raw outputs it links
    raw = [Path(p).name for p in files["raw"]]
    assert files["html"] == str(directory / "report.html")
    assert names == sorted(
        [".esxilab-iperf-report.json", "results.json", "results.csv", "summary.csv", "summary.md", "report.html",
         *raw, *pngs]
    )  # fmt: skip
    for name in pngs:
        _check_png(directory / name)
    # the page embeds the plots and, after the role's gate task, holds its section from the same results.json
    page = (directory / "report.html").read_text()
    assert page.count('src="data:image/png;base64,') == len(pngs)
    document = json.loads((directory / "results.json").read_text())
    if document.get("gate") is not None:
        assert "Not compared" not in page and ("Gate: passed" if document["gate"]["passed"] else "Gate: FAILED") in page


def test_sweep_results_json_holds_the_input_facts(played: dict[str, Any]) -> None:
    directory = Path(played["files"]["sweep_files"]["dir"])
    document = json.loads((directory / "results.json").read_text())
    runs = _sweep_runs()
    assert document["environment"] == ENVIRONMENT
    assert document["line_rate_bps"] == TEN_G
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", document["generated_at"])
    assert [r["bits_per_second"] for r in document["runs"]] == [r["total_bits_per_second"] for r in runs]
    assert [r["bits_per_second"] for r in document["runs"]] == [939e6, 926e6, 1970e6, None, 7335.2e6, 7240e6]
    inputs = [p["result"] for r in runs for p in r["pairs"]]
    assert [item["result"] for item in document["results"]] == json.loads(json.dumps(inputs))
    assert [item["labels"]["nic"] for item in document["results"]] == ["vmxnet3"] * 7
    one, two, four = document["summary"]
    assert one["stats"]["mean"] == statistics.fmean([939e6, 926e6])
    assert one["stats"]["stdev"] == pytest.approx(statistics.stdev([939e6, 926e6]))
    assert (two["stats"]["count"], two["stats"]["skipped"], two["stats"]["mean"]) == (1, 1, 1970e6)
    assert four["stats"]["mean"] == pytest.approx(statistics.fmean([7335.2e6, 7240e6]))
    # run 5 had two pairs at once (2 x 10 Gbit/s), run 6 one: no common line rate for the group
    assert four["percent_of_line_rate"] is None
    assert [r["line_rate_bps"] for r in document["runs"]] == [TEN_G] * 4 + [2 * TEN_G, TEN_G]
    assert document["runs"][4]["percent_of_line_rate"] == pytest.approx(7335.2e6 / (2 * TEN_G) * 100)
    assert document["runs"][4]["flows"] == ["esxi3 → esxi1", "esxi4 → esxi2"]
    assert document["summary"][0]["flows"] == ["esxi3 → esxi1"]
    assert set(document["summary"][0]["figures"]) >= {"cpu_local_percent", "rtt_mean_us", "lost_percent"}
    assert document["sweeps"][0]["knee"] == 4


def test_sweep_csv_matches_the_input_facts(played: dict[str, Any]) -> None:
    directory = Path(played["files"]["sweep_files"]["dir"])
    rows = _csv_rows(directory / "results.csv")
    pairs = [p for r in _sweep_runs() for p in r["pairs"]]
    assert len(rows) == len(pairs) == 7
    for row, pair in zip(rows, pairs, strict=True):
        figure = pair["result"]["bits_per_second"]
        assert row["bits_per_second"] == ("" if figure is None else repr(figure))
        assert row["server"] == pair["server"]
        assert row["address"] == pair["address"]
    assert rows[0]["sent_bytes"] == "630194176"  # "601 MBytes"
    assert rows[3]["error"].startswith("the client on esxi3 failed: unable to connect to server")
    assert rows[3]["percent_of_line_rate"] == ""
    summary = _csv_rows(directory / "summary.csv")
    assert [(r["streams"], r["count"], r["mean"]) for r in summary] == [
        ("1", "2", "932500000.0"),
        ("2", "1", "1970000000.0"),
        ("4", "2", repr(statistics.fmean([7335.2e6, 7240e6]))),
    ]


def test_sweep_summary_markdown(played: dict[str, Any]) -> None:
    directory = Path(played["files"]["sweep_files"]["dir"])
    text = (directory / "summary.md").read_text()
    assert text.startswith("# iperf report: sweep\n")
    assert "| esxi_version | 8.0.3 (build 24022510) |" in text
    assert "| iperf.version | 3.17.1 |" in text
    assert "| vmnic1 | ixgben | true | 10000 | full |" in text
    one = "forward: esxi3 → esxi1"
    both = "forward: esxi3 → esxi1, esxi4 → esxi2"
    assert f"| {one} | 1 | 2 | 0.932 | 0.932 | 0.009 | 0.850 - 1.015 | 0.926 | 0.939 | 9.3 |" in text
    assert f"| {one} | 2 | 1 of 2 | 1.970 | 1.970 | n/a | n/a | 1.970 | 1.970 | 19.7 |" in text
    assert f"| {both} | 4 (knee) | 2 | 7.288 | 7.288 | 0.067 | 6.683 - 7.892 | 7.240 | 7.335 | n/a |" in text
    assert f"| 4 | sweep | {one} | 2 | 2 | 1 | n/a | n/a | n/a | n/a | n/a | failed |" in text
    # two pairs at once: compared with 20 Gbit/s, not with one 10 Gbit/s link
    assert f"| 5 | sweep | {both} | 4 | 1 | 2 | 7.335 | 36.7 | n/a | n/a | n/a | ok |" in text
    assert "Beside throughput:" in text
    assert "1 result with intervals has no time-series plot" in text
    assert (
        "![Mean throughput vs parallel streams (forward: esxi3 → esxi1), error bars: 95 % CI, star: knee, x axis log2 "
        "scale (each doubling of the streams one step)](sweep-forward.png)" in text
    )


def test_sweep_table_is_printed(played: dict[str, Any]) -> None:
    sweep_table = played["tables"][0]
    directory = played["files"]["sweep_files"]["dir"]
    assert sweep_table == [
        "iperf report: sweep: 6 run(s), 1 without a usable figure",
        # issue 13: the direction names sender -> receiver (one flow, the others counted); run 5 had two pairs
        # at once and run 6 one, so the 4-stream group has no common line rate (no invented percentage)
        "test   direction                       streams  runs  mean Gbit/s  +/-95% CI    min    max  % line  retr",
        "sweep  forward: esxi3 → esxi1                1   2/2        0.932      0.083  0.926  0.939     9.3     0",
        "sweep  forward: esxi3 → esxi1                2   1/2        1.970        n/a  1.970  1.970    19.7     0",
        "sweep  forward: esxi3 → esxi1 +1 more       4*   2/2        7.288      0.605  7.240  7.335     n/a   n/a",
        "* knee: the smallest stream count within 5 % of the best mean",
        f"report: {directory}/summary.md",
    ]


# -- the comparison ---------------------------------------------------------------------------


def test_comparison_report_matches_the_results_parsed_in_the_play(played: dict[str, Any]) -> None:
    directory = played["work"] / "out" / "nics"
    files = played["files"]["nic_files"]
    assert files["dir"] == str(directory)
    pngs = [
        "compare-nic-tcp-1.png",
        "cpu-vs-throughput-nic-tcp-1.png",  # issue 10: iperf 3.6 -V printed the CPU of the vmxnet3 run
        "timeseries-tcp-1-forward-streams-1-e1000.png",  # ATTFIBER: ten intervals (LABLOG's one is not drawn)
        "timeseries-tcp-1-forward-streams-1-vmxnet3.png",
    ]
    assert files["plots"] == [str(directory / name) for name in pngs]
    for name in pngs:
        _check_png(directory / name)
    document = json.loads((directory / "results.json").read_text())
    assert document["title"] == "e1000 vs vmxnet3"
    assert document["environment"] == {}
    for item, (name, nic) in zip(document["results"], NICS, strict=True):
        expected = parse((FIXTURES / name).read_text())
        got = dict(item["result"])
        assert got.pop("labels") == {"test": "tcp-1", "nic": nic}
        assert got == json.loads(json.dumps(expected))
    row = document["comparison"]["rows"][0]
    assert row["means"] == {"e1000": statistics.fmean([796e6, 721e6]), "vmxnet3": pytest.approx(25.3e9)}
    assert row["delta_percent"]["vmxnet3"] == pytest.approx((25.3e9 / 758.5e6 - 1) * 100)
    # the comparison gets the gate's statistics: Welch's 95 % interval of the difference, and its verdict
    difference = row["difference"]["vmxnet3"]
    assert difference["difference_percent"] == row["delta_percent"]["vmxnet3"]
    assert difference["ci95_low_percent"] == pytest.approx(2589.4, abs=0.05) and difference["verdict"] == "significant"
    text = (directory / "summary.md").read_text()
    assert (
        "| tcp-1 | forward | 1 | 0.758 ± 0.476 (n=2) | 25.30 ± 5.082 (n=2) | +3235.5 % (95 % CI +2589.4 % .. "
        "+3881.7 %) |" in text
    )
    assert "% of line rate" not in text  # no line rate given: no invented percentage
    assert "| tcp-1 | forward | 1 | vmxnet3 | 25.30 | 97.2 | 64.2 | 0.260 |" in text  # CPU vs throughput
    summary = _csv_rows(directory / "summary.csv")
    assert [(r["compare"], r["cpu_local_percent"], r["cpu_remote_percent"]) for r in summary] == [
        ("e1000", "", ""),
        ("vmxnet3", "97.2", "64.2"),
    ]
    assert [(r["compared_with"], r["difference_verdict"]) for r in summary] == [
        ("", ""),
        ("nic=e1000", "significant"),
    ]
    assert played["tables"][1] == [
        "e1000 vs vmxnet3: 4 run(s)",
        "test   direction  streams  nic      runs  mean Gbit/s  +/-95% CI    min    max  retr  cpu % loc/rem",
        "tcp-1  forward          1  e1000     2/2        0.758      0.476  0.721  0.796   268            n/a",
        "tcp-1  forward          1  vmxnet3   2/2        25.30      5.082  24.90  25.70     0      97.2/64.2",
        "nic vs e1000 (test=tcp-1, direction=forward, streams=1): vmxnet3 +3235.5 % (95 % CI +2589.4 % .. +3881.7 %)",
        f"report: {directory}/summary.md",
    ]


# -- check mode, no matplotlib ------------------------------------------------------------------


def test_check_mode_writes_nothing_and_prints_the_table(env: dict[str, str], tmp_path: Path) -> None:
    proc = _play(env, tmp_path, "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (tmp_path / "out").exists()
    tables = printed_text(proc.stdout, "Write the report on the controller")
    assert tables[0][4].startswith("sweep  forward: esxi3 → esxi1 +1 more       4*   2/2        7.288")
    assert tables[1][0] == "e1000 vs vmxnet3: 4 run(s)"
    # issue 13: check mode used to print a report path it never wrote
    assert tables[0][-1].startswith("check mode: no report was written (it would be ")
    assert tables[1][-1] == f"check mode: no report was written (it would be {tmp_path}/out/nics/summary.md)"


def test_without_matplotlib_the_report_is_written_and_says_plots_were_skipped(
    env: dict[str, str], tmp_path: Path
) -> None:
    shadow = tmp_path / "shadow" / "matplotlib"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError(\"No module named 'matplotlib'\")\n")
    hidden = {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(shadow.parent), env.get("PYTHONPATH")]))}
    proc = _play(hidden, tmp_path / "work")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "failed=0" in proc.stdout
    out = tmp_path / "work" / "out"
    [sweep_dir] = (p for p in (out / "reports").iterdir() if p.name != "history.sqlite")
    for directory in (sweep_dir, out / "nics"):
        names = sorted(p.name for p in directory.iterdir())
        assert [n for n in names if not n.startswith("raw-run")] == [
            ".esxilab-iperf-report.json",  # the manifest of the files this report wrote
            "report.html",  # without plots: the page says so
            "results.csv",
            "results.json",
            "summary.csv",
            "summary.md",
        ]
        assert "Plots: skipped - matplotlib is not installed" in (directory / "report.html").read_text()
        text = (directory / "summary.md").read_text()
        assert "Plots: skipped - matplotlib is not installed on the controller" in text
        assert "pip install matplotlib" in text
    document = json.loads((sweep_dir / "results.json").read_text())
    assert [r["bits_per_second"] for r in document["runs"]] == [939e6, 926e6, 1970e6, None, 7335.2e6, 7240e6]
    tables = printed_text(proc.stdout, "Write the report on the controller")
    assert tables[0][-2].startswith("plots: skipped - matplotlib is not installed on the controller")
    assert "the report was written without (some) plots" in proc.stdout + proc.stderr


# -- bad input ------------------------------------------------------------------------------


def test_no_runs_fails_in_the_preflight_and_writes_nothing(env: dict[str, str], tmp_path: Path) -> None:
    proc = _play(env, tmp_path, "-e", json.dumps({"sweep_runs": []}))
    assert proc.returncode != 0
    assert "report_runs is empty: there is no run to report, so no report is written" in " ".join(proc.stdout.split())
    assert not (tmp_path / "out").exists()


def test_a_report_dir_that_is_not_ours_is_refused_and_ours_is_rewritten(env: dict[str, str], tmp_path: Path) -> None:
    nics = tmp_path / "out" / "nics"
    nics.mkdir(parents=True)
    (nics / "summary.md").write_text("someone's notes")
    refused = _play(env, tmp_path, "-e", json.dumps({"report_plots": False}))
    assert refused.returncode != 0
    text = " ".join(refused.stdout.split())
    assert f"esxilab.iperf.report_write: {nics} is not empty (summary.md) and holds no report of ours" in text
    assert "report_force=true" in text
    assert (nics / "summary.md").read_text() == "someone's notes"
    (nics / "summary.md").unlink()
    first = _play(env, tmp_path, "-e", json.dumps({"report_plots": False}))
    assert first.returncode == 0, first.stdout[-3000:]
    again = _play(env, tmp_path, "-e", json.dumps({"report_plots": False}))
    assert again.returncode == 0, again.stdout[-3000:]  # our own directory: written again without force
