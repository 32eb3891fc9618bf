# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The iperf_facts action: its shell script (run by dash and busybox), output splitting, run()."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import ansible_collections.esxilab.iperf.plugins.modules.iperf_facts as module_doc
from ansible_collections.esxilab.iperf.plugins.action import iperf_facts as action
from ansible_collections.esxilab.iperf.plugins.action.iperf_facts import (
    DEFAULT_RAW_MAX_BYTES,
    ActionModule,
    bound_raw,
    build_script,
    collect_results,
    has_glob,
    parse_probe_output,
    sh_glob_word,
    tool_facts,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.paths import ESXI_IPERF_PATHS as ESXI_PATHS
from tests.collection_path import FIXTURES
from tests.unit.plugins.action_harness import Runner, assert_docs_only, assert_options_documented, make_action

MARKER = "ESXILAB_IPERF_test0123456789"
IPERF3_JSON = "iperf3-3.1.3-json-client-tcp-pscheduler.json"
IPERF3_TEXT = "iperf3-ge3.2-text-client-basic-tcp-t2-lablog.txt"
IPERF2_CSV = "iperf2-2.0.5era-csv-client-tcp-single-line-overlord.txt"
CRLF_TEXT = "iperf3-3.9-text-client-tcp-O3-omit-crlf-cloudpilot.txt"


def _shells() -> list[list[str]]:
    shells = [["/bin/sh", "-c"]]
    busybox = shutil.which("busybox")
    if busybox:
        shells.append([busybox, "sh", "-c"])
    return shells


SHELLS = _shells()
SHELL_IDS = [" ".join(s[:-1]) for s in SHELLS]


def _run_sh(shell: list[str], script: str, env_path: str | None = None) -> str:
    env = dict(os.environ)
    if env_path is not None:
        env["PATH"] = env_path
    proc = subprocess.run([*shell, script], capture_output=True, timeout=30, check=False, env=env)
    # no newline translation: what Ansible's connection plugins hand to the action
    return proc.stdout.decode("utf-8", errors="surrogateescape")


def _fake_binary(path: Path, banner: str, *, to_stderr: bool, rc: int, executable: bool = True) -> Path:
    redirect = " >&2" if to_stderr else ""
    path.write_text(f"#!/bin/sh\nprintf '%s\\n' '{banner}'{redirect}\nexit {rc}\n")
    path.chmod(0o755 if executable else 0o644)
    return path


# -- quoting and globbing -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("/tmp/a.json", "/tmp/a.json"),
        ("/tmp/*.json", "/tmp/*.json"),
        ("/tmp/run?.txt", "/tmp/run?.txt"),
        ("/tmp/run[0-9].txt", "/tmp/run[0-9].txt"),
        ("/tmp/x y/*.json", "'/tmp/x y/'*.json"),
        ("/tmp/$(reboot)", "'/tmp/$(reboot)'"),
        ("/tmp/`id`;ls", "'/tmp/`id`;ls'"),
        ("/tmp/it's", "'/tmp/it'\"'\"'s'"),
        ("~/results/*.json", '"$HOME"/results/*.json'),
        ("/tmp/[$(id)]", "'/tmp/[$(id)]'"),
    ],
)
def test_sh_glob_word(pattern: str, expected: str) -> None:
    assert sh_glob_word(pattern) == expected


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
@pytest.mark.parametrize(
    "literal",
    ["/nonexistent/$(touch /tmp/esxilab-pwned)", "/nonexistent/`touch /tmp/esxilab-pwned`;x", "/nonexistent/a b's"],
)
def test_sh_glob_word_is_literal_in_a_real_shell(shell: list[str], literal: str) -> None:
    out = _run_sh(shell, f"printf '%s\\n' {sh_glob_word(literal)}")
    assert out == literal + "\n"
    assert not Path("/tmp/esxilab-pwned").exists()


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="*?[~\x00\n\r", codec="utf-8"), min_size=1))
def test_sh_glob_word_without_glob_characters_is_always_literal(text: str) -> None:
    out = _run_sh(SHELLS[0], f"printf '%s\\n' {sh_glob_word(text)}")
    assert out == text + "\n"


def test_has_glob() -> None:
    assert has_glob("/tmp/*.json")
    assert has_glob("/tmp/run?.txt")
    assert has_glob("/tmp/run[12].txt")
    assert not has_glob("/tmp/run.txt")
    assert not has_glob("/tmp/[$(id)]")


# -- the script, run by real shells --------------------------------------------------------


@pytest.fixture
def host(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A fake host: PATH dirs with fake iperf binaries, a symlinked dir, result files."""
    bin_a = tmp_path / "bin_a"
    bin_b = tmp_path / "bin_b"
    bin_a.mkdir()
    bin_b.mkdir()
    (tmp_path / "bin_link").symlink_to(bin_a, target_is_directory=True)
    _fake_binary(bin_a / "iperf3", "iperf 3.9 (cJSON 1.7.13)", to_stderr=False, rc=0)
    _fake_binary(bin_a / "iperf", "iperf version 2.0.5 (08 Jul 2010) pthreads", to_stderr=True, rc=1)
    _fake_binary(bin_b / "iperf3.copy", "iperf 3.17.1 (cJSON 1.7.15)", to_stderr=False, rc=0)
    _fake_binary(bin_b / "iperf.copy", "iperf version 2.1.8", to_stderr=True, rc=1, executable=False)
    _fake_binary(bin_b / "iperf2", "not iperf at all", to_stderr=False, rc=3)
    results = tmp_path / "results dir"
    results.mkdir()
    for name in (IPERF3_JSON, IPERF3_TEXT, CRLF_TEXT):
        shutil.copyfile(FIXTURES / name, results / name)
    (results / "empty.txt").write_bytes(b"")
    (results / "no-newline.txt").write_bytes(b"abc")
    path = f"{bin_a}:{tmp_path / 'bin_link'}:{bin_b}:/usr/bin:/bin"
    yield {"tmp": tmp_path, "bin_a": bin_a, "bin_b": bin_b, "results": results, "path": path}


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
def test_script_finds_every_binary_once(shell: list[str], host: dict[str, Any]) -> None:
    extra = [str(host["bin_a"] / "iperf3"), "/nonexistent/iperf3", str(host["tmp"])]
    out = _run_sh(shell, build_script(MARKER, extra_paths=extra), env_path=host["path"])
    probe = parse_probe_output(out, MARKER)
    assert probe.finished
    assert not probe.tty
    found = {p.path: p for p in probe.tools}
    bin_a, bin_b = str(host["bin_a"].resolve()), str(host["bin_b"].resolve())
    # bin_link is bin_a: its binaries are not listed twice; paths[0] repeats bin_a/iperf3
    assert [p.path for p in probe.tools if p.path.startswith(bin_a)] == [f"{bin_a}/iperf", f"{bin_a}/iperf3"]
    assert found[f"{bin_a}/iperf3"].output == "iperf 3.9 (cJSON 1.7.13)\n"
    assert found[f"{bin_a}/iperf3"].rc == 0
    assert found[f"{bin_a}/iperf"].output == "iperf version 2.0.5 (08 Jul 2010) pthreads\n"  # stderr merged
    assert found[f"{bin_a}/iperf"].rc == 1
    assert found[f"{bin_b}/iperf.copy"].problem == "is not executable"
    assert found[f"{bin_b}/iperf2"].rc == 3
    assert found["/nonexistent/iperf3"].problem == "does not exist"
    assert found[str(host["tmp"].resolve())].problem == "is a directory"
    tools = {t["path"]: t for t in tool_facts(probe.tools)}
    assert (tools[f"{bin_a}/iperf3"]["family"], tools[f"{bin_a}/iperf3"]["version"]) == ("iperf3", "3.9")
    assert tools[f"{bin_a}/iperf3"]["supports"]["bidir"] is True
    assert tools[f"{bin_a}/iperf3"]["supports"]["json_stream"] is False
    assert (tools[f"{bin_a}/iperf"]["family"], tools[f"{bin_a}/iperf"]["runnable"]) == ("iperf2", True)
    assert tools[f"{bin_b}/iperf3.copy"]["supports"]["json_stream"] is True
    assert tools[f"{bin_b}/iperf2"]["runnable"] is False
    assert "not iperf at all" in tools[f"{bin_b}/iperf2"]["error"]
    assert tools[f"{bin_b}/iperf.copy"]["runnable"] is False


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
def test_script_reads_files_exactly(shell: list[str], host: dict[str, Any]) -> None:
    results = host["results"]
    sources = [f"{results}/*.json", f"{results}/*.txt", f"{results}/missing.txt", "/nonexistent/*.json", str(results)]
    out = _run_sh(shell, build_script(MARKER, gather_tools=False, sources=sources))
    probe = parse_probe_output(out, MARKER)
    assert probe.finished
    assert probe.tools == []
    by_path = {f.path: f for f in probe.files}
    assert by_path[f"{results}/{IPERF3_JSON}"].src_index == 0
    assert by_path[f"{results}/{IPERF3_JSON}"].content == (FIXTURES / IPERF3_JSON).read_bytes().decode()
    crlf = by_path[f"{results}/{CRLF_TEXT}"].content
    assert crlf == (FIXTURES / CRLF_TEXT).read_bytes().decode()
    assert crlf is not None and "\r\n" in crlf
    assert by_path[f"{results}/empty.txt"].content == ""
    assert by_path[f"{results}/no-newline.txt"].content == "abc"
    assert by_path[f"{results}/missing.txt"].problem == "does not exist"
    assert by_path["/nonexistent/*.json"].problem == "does not exist"  # glob left as is by the shell
    assert by_path["/nonexistent/*.json"].src_index == 3
    assert by_path[str(results)].problem == "is a directory"


def test_pseudo_terminal_line_endings_are_undone(host: dict[str, Any]) -> None:
    results = host["results"]
    out = _run_sh(SHELLS[0], build_script(MARKER, gather_tools=False, sources=[f"{results}/*.txt"]))
    tty_out = "Warning: Permanently added 'esxi01'\r\n" + out.replace("\n", "\r\n")  # what ssh -tt delivers
    probe = parse_probe_output(tty_out, MARKER)
    assert probe.tty
    assert probe.finished
    by_path = {f.path: f.content for f in probe.files}
    assert by_path[f"{results}/{CRLF_TEXT}"] == (FIXTURES / CRLF_TEXT).read_bytes().decode()
    assert by_path[f"{results}/{IPERF3_TEXT}"] == (FIXTURES / IPERF3_TEXT).read_bytes().decode()


def test_unfinished_output_is_reported_as_such() -> None:
    assert not parse_probe_output("sh: syntax error\n", MARKER).finished
    assert not parse_probe_output(f"{MARKER} START\n\n{MARKER} SRC 0\n", MARKER).finished


def test_script_probes_the_esxi_locations() -> None:
    script = build_script(MARKER)
    for path in ESXI_PATHS:
        assert f"probe {path} 0\n" in script
    assert "command -v" not in script
    with pytest.raises(ValueError, match="alphanumeric"):
        build_script("bad marker; rm -rf /")


# -- parsing what was read -----------------------------------------------------------------


def test_collect_results_gives_figures_source_labels_and_raw() -> None:
    text = (FIXTURES / IPERF3_TEXT).read_text()
    items: list[tuple[str, Any, str | None]] = [
        ("/tmp/r/a.txt", text, None),
        ("/tmp/r/b.csv", (FIXTURES / IPERF2_CSV).read_text(), None),
        ("/tmp/r/missing.txt", None, "does not exist"),
        ("/tmp/r/empty.txt", "", None),
        ("/tmp/r/notes.txt", "shopping list\nmilk\n", None),
    ]
    results, failures = collect_results(items, {"pair": "a-b"})
    assert [r["source"] for r in results] == ["/tmp/r/a.txt", "/tmp/r/b.csv"]
    assert results[0]["bits_per_second"] == 796e6
    assert results[0]["sent"]["bytes"] == 208666624
    assert results[0]["labels"] == {"pair": "a-b"}
    assert results[0]["raw"] == text
    assert results[1]["bits_per_second"] == 36841295787
    assert [(source, message) for source, _raw, message in failures][:2] == [
        ("/tmp/r/missing.txt", "does not exist"),
        ("/tmp/r/empty.txt", "it is empty (no iperf output was written)"),
    ]
    assert failures[2][0] == "/tmp/r/notes.txt"
    kept, _failures = collect_results(items, {}, keep_errors=True)
    assert [r["source"] for r in kept] == [source for source, _data, _problem in items]
    assert [r.get("parse_error", False) for r in kept] == [False, False, True, True, True]
    assert failures[2][1] == "shopping list\nmilk\n"  # raw kept for on_parse_error=keep
    assert "not iperf2 or iperf3 output" in failures[2][2]


def test_collect_results_one_item_per_test_of_a_log() -> None:
    log = (FIXTURES / "iperf3-3.2to3.9-text-server-tcp-fk-moler.txt").read_text()
    log += (FIXTURES / "iperf3-3.2to3.9-text-server-udp-moler.txt").read_text()
    results, failures = collect_results([("/var/log/iperf3.log", log, None)], {})
    assert failures == []
    assert [r["protocol"] for r in results] == ["tcp", "udp"]
    assert results[0]["received"]["bytes"] == 28132035789  # 26.2 GBytes
    assert results[1]["udp"]["packets"] == 60
    assert all(r["source"] == "/var/log/iperf3.log" for r in results)
    assert "Server listening on 5201" in results[1]["raw"]
    assert "Server listening on 5201" not in results[0]["raw"]


# -- run() with a connection that runs the command locally --------------------------------


def _action(args: dict[str, Any], runner: Runner | None = None) -> ActionModule:
    return make_action(ActionModule, "esxilab.iperf.iperf_facts", args, runner=runner)


def _local_runner(env_path: str | None = None) -> Callable[[str], dict[str, Any]]:
    def run(cmd: str, **kwargs: Any) -> dict[str, Any]:
        env = dict(os.environ)
        if env_path is not None:
            env["PATH"] = env_path
        proc = subprocess.run(["/bin/sh", "-c", cmd], capture_output=True, timeout=30, check=False, env=env)
        return {"rc": proc.returncode, "stdout": proc.stdout.decode(), "stderr": proc.stderr.decode()}

    return run


def _no_connection(cmd: str, **kwargs: Any) -> dict[str, Any]:
    raise AssertionError("no command should run")


def test_run_gathers_tools_and_results(host: dict[str, Any]) -> None:
    results = host["results"]
    args = {"src": [f"{results}/*.json", f"{results}/{IPERF3_TEXT}"], "labels": {"pair": "lo"}}
    out = _action(args, _local_runner(host["path"])).run(task_vars={})
    assert not out.get("failed"), out.get("msg")
    assert out["changed"] is False
    facts = out["ansible_facts"]
    bin_a = str(host["bin_a"].resolve())
    assert {"path": f"{bin_a}/iperf3", "family": "iperf3", "version": "3.9"}.items() <= facts["iperf_tools"][
        [t["path"] for t in facts["iperf_tools"]].index(f"{bin_a}/iperf3")
    ].items()
    runs = facts["iperf_results"]
    assert [r["source"] for r in runs] == [f"{results}/{IPERF3_JSON}", f"{results}/{IPERF3_TEXT}"]
    assert runs[0]["bits_per_second"] == pytest.approx(388736097.120548)
    assert runs[0]["sent"]["retransmits"] == 159
    assert runs[1]["bits_per_second"] == 796e6
    assert all(r["labels"] == {"pair": "lo"} for r in runs)
    assert runs[1]["raw"] == (FIXTURES / IPERF3_TEXT).read_text()


def test_run_content_needs_no_command() -> None:
    text = (FIXTURES / IPERF3_TEXT).read_text()
    out = _action({"content": text, "gather_tools": False}, _no_connection).run(task_vars={})
    assert not out.get("failed"), out.get("msg")
    assert "iperf_tools" not in out["ansible_facts"]
    [result] = out["ansible_facts"]["iperf_results"]
    assert (result["source"], result["bits_per_second"], result["labels"]) == ("content", 796e6, {})


def test_run_missing_and_foreign_files_fail_by_default(host: dict[str, Any]) -> None:
    results = host["results"]
    (results / "notes.txt").write_text("shopping list\n")
    src = [f"{results}/{IPERF3_TEXT}", f"{results}/nope.json", f"{results}/*.csv", f"{results}/notes.txt"]
    out = _action({"gather_tools": False, "src": src}, _local_runner()).run(task_vars={})
    assert out["failed"] is True
    msg = out["msg"]
    assert msg.startswith("esxilab.iperf.iperf_facts: 3 source(s) could not be read as iperf output")
    assert f"{results}/nope.json: does not exist" in msg
    assert f"src[2] '{results}/*.csv': matched no file" in msg
    assert f"{results}/notes.txt: the text is not iperf2 or iperf3 output" in msg
    assert "on_parse_error=skip" in msg


def test_run_on_parse_error_skip_and_keep(host: dict[str, Any]) -> None:
    results = host["results"]
    src = [f"{results}/empty.txt", f"{results}/{IPERF3_TEXT}", f"{results}/nope.json"]
    skipped = _action({"gather_tools": False, "src": src, "on_parse_error": "skip"}, _local_runner()).run()
    assert not skipped.get("failed"), skipped.get("msg")
    assert [r["source"] for r in skipped["ansible_facts"]["iperf_results"]] == [f"{results}/{IPERF3_TEXT}"]
    assert skipped["warnings"][0].startswith("esxilab.iperf.iperf_facts: left out of iperf_results: ")
    assert "empty.txt: it is empty" in skipped["warnings"][0]
    kept = _action({"gather_tools": False, "src": src, "on_parse_error": "keep"}, _local_runner()).run()
    items = kept["ansible_facts"]["iperf_results"]
    assert [r["source"] for r in items] == src  # in the order of src
    assert items[0]["error"] == "it is empty (no iperf output was written)"
    assert items[0]["raw"] == ""
    assert items[0]["bits_per_second"] is None
    assert items[0]["parse_error"] is True
    assert items[1]["bits_per_second"] == 796e6
    assert items[2]["error"] == "does not exist"
    assert items[2]["raw"] is None
    assert "kept with error set" in kept["warnings"][0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"src": "/tmp/a.json"}, "src must be a list of paths or globs on the host, got str"),
        ({"src": {"a": 1}}, "src must be a list"),
        ({"src": ["/tmp/a.json", 3]}, "src[1] must be a non-empty string"),
        ({"src": []}, "src is empty"),
        ({"src": ["/tmp/a"], "content": "x"}, "mutually exclusive: src|content"),
        ({"gather_tools": False}, "nothing to do"),
        ({"paths": ["iperf3"]}, "paths[0] must be an absolute path"),
        ({"paths": "/opt/iperf/bin/iperf"}, "paths must be a list"),
        ({"content": 12}, "content must be the text of iperf output"),
        ({"on_parse_error": "ignore"}, "on_parse_error"),
        ({"srcs": ["/tmp/a"]}, "Unsupported parameters"),
    ],
)
def test_run_bad_options_name_the_option(args: dict[str, Any], message: str) -> None:
    out = _action(args, _no_connection).run(task_vars={})
    assert out["failed"] is True
    assert message in out["msg"]


def test_run_reports_a_shell_that_did_not_finish() -> None:
    def broken(cmd: str, **kwargs: Any) -> dict[str, Any]:
        return {"rc": 127, "stdout": "", "stderr": "/bin/sh: not found"}

    out = _action({}, broken).run(task_vars={})
    assert out["failed"] is True
    assert "did not complete on the host (exit status 127): /bin/sh: not found" in out["msg"]


def test_run_supports_check_mode(host: dict[str, Any]) -> None:
    plugin = _action({"gather_tools": True}, _local_runner(host["path"]))
    plugin._task.check_mode = True
    out = plugin.run(task_vars={})
    assert not out.get("failed"), out.get("msg")
    assert out["ansible_facts"]["iperf_tools"]


# -- the documentation matches the action ---------------------------------------------------


def test_documented_options_match_the_argument_spec() -> None:
    doc = yaml.safe_load(module_doc.DOCUMENTATION)
    # paths, src, link_speed_of and nic_counters_of are validated as raw by the action itself (validate_as)
    assert_options_documented(doc["options"], action.ARGUMENT_SPEC, types=False)
    assert doc["module"] == "iperf_facts"
    assert yaml.safe_load(module_doc.EXAMPLES)
    assert yaml.safe_load(module_doc.RETURN)["ansible_facts"]["contains"]["iperf_tools"]


def test_docs_only_module_holds_nothing_but_documentation() -> None:
    assert_docs_only(module_doc)


# -- bad input: bounded raw text, errors that never quote a file -------------------------------


def _big_json(intervals: int) -> tuple[str, float]:
    """An iperf3 -J document grown to many intervals, and its headline (from the end summary)."""
    doc = json.loads((FIXTURES / IPERF3_JSON).read_text())
    doc["intervals"] = (doc["intervals"] * (intervals // len(doc["intervals"]) + 1))[:intervals]
    text = json.dumps(doc, indent=2)
    return text, float(doc["end"]["sum_received"]["bits_per_second"])


def test_bound_raw_cuts_at_a_character_and_says_so() -> None:
    assert bound_raw(None, 10) == (None, False, 0)
    assert bound_raw("abc", 10) == ("abc", False, 3)
    assert bound_raw("abc", 3) == ("abc", False, 3)
    assert bound_raw("abcd", 3) == ("abc", True, 4)
    assert bound_raw("ééé", 3) == ("é", True, 6)  # 2 bytes each: the half character is dropped
    assert bound_raw("abc", 0) == (None, True, 3)
    assert bound_raw("", 0) == ("", False, 0)


def test_a_large_file_keeps_a_bounded_raw_and_figures_from_the_whole_text(host: dict[str, Any]) -> None:
    text, headline = _big_json(20000)
    assert len(text) > 8_000_000
    (host["results"] / "big.json").write_text(text)
    src = [f"{host['results']}/big.json"]
    out = _action({"gather_tools": False, "src": src}, _local_runner()).run(task_vars={})
    assert not out.get("failed"), out.get("msg")
    [result] = out["ansible_facts"]["iperf_results"]
    assert result["bits_per_second"] == pytest.approx(headline)  # the end summary after 8 MB of intervals
    assert len(result["intervals"]) == 20000
    assert result["raw"] == text[:DEFAULT_RAW_MAX_BYTES]
    assert (result["raw_truncated"], result["raw_bytes"]) == (True, len(text.encode()))
    small = _action({"gather_tools": False, "src": src, "raw_max_bytes": 100}, _local_runner()).run(task_vars={})
    assert small["ansible_facts"]["iperf_results"][0]["raw"] == text[:100]
    none = _action({"gather_tools": False, "src": src, "raw_max_bytes": 0}, _local_runner()).run(task_vars={})
    [dropped] = none["ansible_facts"]["iperf_results"]
    assert (dropped["raw"], dropped["raw_truncated"], dropped["bits_per_second"]) == (
        None,
        True,
        result["bits_per_second"],
    )


def test_a_small_file_keeps_its_whole_raw_and_says_it_is_whole(host: dict[str, Any]) -> None:
    src = [f"{host['results']}/{IPERF3_TEXT}"]
    out = _action({"gather_tools": False, "src": src}, _local_runner()).run(task_vars={})
    [result] = out["ansible_facts"]["iperf_results"]
    text = (FIXTURES / IPERF3_TEXT).read_text()
    assert (result["raw"], result["raw_truncated"], result["raw_bytes"]) == (text, False, len(text.encode()))


def test_raw_max_bytes_must_not_be_negative() -> None:
    out = _action({"content": "x", "gather_tools": False, "raw_max_bytes": -1}, _no_connection).run(task_vars={})
    assert out["failed"] is True
    assert "raw_max_bytes must be 0 (keep no raw text) or a positive number of bytes, got -1" in out["msg"]


def test_keep_item_raw_is_bounded_too(host: dict[str, Any]) -> None:
    (host["results"] / "notes.txt").write_text("not iperf\n" * 1000)
    src = [f"{host['results']}/notes.txt"]
    args = {"gather_tools": False, "src": src, "on_parse_error": "keep", "raw_max_bytes": 20}
    [item] = _action(args, _local_runner()).run(task_vars={})["ansible_facts"]["iperf_results"]
    assert (item["raw"], item["raw_truncated"], item["raw_bytes"]) == ("not iperf\n" * 2, True, 10000)


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("secret.txt", "password: hunter2\nAPI_TOKEN=abc123\n", "the text is not iperf2 or iperf3 output (2 line(s)"),
        ("foo.json", '{"foo": [1, 2, 3], "password": "hunter2"}', "the JSON object has 2 top-level member(s)"),
        ("list.json", '[1, 2, 3, "hunter2"]', "the text is not iperf2 or iperf3 output"),
    ],
)
def test_parse_errors_name_the_file_never_its_content(
    host: dict[str, Any], name: str, content: str, expected: str
) -> None:
    (host["results"] / name).write_text(content)
    path = f"{host['results']}/{name}"
    out = _action({"gather_tools": False, "src": [path]}, _local_runner()).run(task_vars={})
    assert out["failed"] is True
    assert f"{path}: {expected}" in out["msg"]
    assert "hunter2" not in out["msg"] and "abc123" not in out["msg"]
    skipped = _action({"gather_tools": False, "src": [path], "on_parse_error": "skip"}, _local_runner()).run()
    assert skipped["ansible_facts"]["iperf_results"] == []
    assert "hunter2" not in skipped["warnings"][0]


def test_json_content_that_is_not_an_iperf3_document_is_a_parse_error() -> None:
    for content in ('{"foo":[1,2,3]}', {"foo": [1, 2, 3]}):
        out = _action({"content": content, "gather_tools": False}, _no_connection).run(task_vars={})
        assert out["failed"] is True
        assert "content: the JSON object has 1 top-level member(s), none of the iperf3 -J members" in out["msg"]
        kept = _action({"content": content, "gather_tools": False, "on_parse_error": "keep"}, _no_connection).run()
        [item] = kept["ansible_facts"]["iperf_results"]
        assert item["parse_error"] is True and item["bits_per_second"] is None


def test_a_failed_cat_shows_only_cat_s_own_message() -> None:
    marker = "M1"
    stdout = (
        f"{marker} START\n\n{marker} SRC 0\n\n{marker} FILE /x\nsecret content\ncat: read error: I/O error\n"
        f"\n{marker} FILEEND 1\n\n{marker} DONE\n"
    )
    [file] = parse_probe_output(stdout, marker).files
    assert file.problem == "could not be read (cat exit status 1: cat: read error: I/O error)"
    stdout = stdout.replace("cat: read error: I/O error\n", "")
    [file] = parse_probe_output(stdout, marker).files
    assert file.problem == "could not be read (cat exit status 1)"


def test_an_unfinished_script_does_not_show_file_content() -> None:
    def cut(cmd: str, **kwargs: Any) -> dict[str, Any]:
        marker = cmd.split("\n", 1)[0].split("=", 1)[1]
        return {"rc": 137, "stdout": f"{marker} START\n\n{marker} FILE /etc/shadow\nroot:hash:1\n", "stderr": ""}

    out = _action({"gather_tools": False, "src": ["/etc/shadow"]}, cut).run(task_vars={})
    assert out["failed"] is True
    assert "did not complete on the host (exit status 137): no output" in out["msg"]
    assert "root:hash" not in out["msg"]
