# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Records validated once where they enter from Ansible (``iperf/validate.py``): upgrades by ``schema_version``,
then a check against ``records.py`` whose errors name the field by its path and the fix."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import RECORD_VERSION, RESULT_VERSION
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.validate import (
    RECORD_UPGRADES,
    RESULT_UPGRADES,
    RecordError,
    result_from,
    run_record_from,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.record import build_record
from tests.collection_path import FIXTURES

JSON = "iperf3-3.16-json-client-udp-b1M-sarius.json"


def _parsed() -> dict[str, Any]:
    result: dict[str, Any] = parse((FIXTURES / JSON).read_text())
    return result


def _record() -> dict[str, Any]:
    """A run record as build_record makes it, its pair holding a parsed result."""
    plan = build_plan([{"name": "t", "pairs": [{"server": "h1", "client": "h2", "address": "198.18.0.1"}]}])
    run = plan["runs"][0]
    client = {"item": {**run["pairs"][0], "run": 1}, "result": _parsed(), "started_at": 1.5}
    reports = [{"host": "h2", "run": 1, "clients": {"results": [client]}}]
    record: dict[str, Any] = copy.deepcopy(dict(build_record(run, reports)))
    assert record["pairs"][0]["result"]["bits_per_second"] == _parsed()["bits_per_second"] > 0
    return record


def test_every_version_below_the_current_one_has_an_upgrade_step() -> None:
    assert sorted(RESULT_UPGRADES) == list(range(RESULT_VERSION))
    assert sorted(RECORD_UPGRADES) == list(range(RECORD_VERSION))


def test_a_parsed_result_and_a_built_record_pass_unchanged() -> None:
    parsed = _parsed()
    assert result_from(parsed) == parsed
    record = _record()
    assert record["schema_version"] == RECORD_VERSION
    assert run_record_from(record) == record


def test_the_input_is_never_changed() -> None:
    old = {"bits_per_second": 1.0, "tool": "iperf3", "format": "json", "protocol": "tcp"}
    kept = dict(old)
    result_from(old)
    assert old == kept
    record = {"pairs": [{"server": "a", "client": "b", "port": 1, "result": dict(old)}], "total_bits_per_second": 1.0}
    kept_record = copy.deepcopy(record)
    run_record_from(record)
    assert record == kept_record


def test_a_result_without_schema_version_gets_what_its_output_did_not_carry() -> None:
    upgraded = result_from({"bits_per_second": 5.0, "tool": "iperf2", "format": "text", "protocol": "udp"})
    assert upgraded["schema_version"] == 1
    assert (upgraded["sent"], upgraded["udp"], upgraded["rtt"], upgraded["error"]) == (None, None, None, None)
    assert (upgraded["per_stream"], upgraded["intervals"], upgraded["warnings"]) == ([], [], [])
    assert (upgraded["reverse"], upgraded["bidir"], upgraded["complete"], upgraded["streams"]) == (
        False,
        False,
        False,
        0,
    )


def test_a_result_without_schema_version_may_lack_what_no_value_means_unknown() -> None:
    """tool, format and protocol have no "not in the output" value: such a result stays version 0."""
    upgraded = result_from({"bits_per_second": 5.0})
    assert "schema_version" not in upgraded and "tool" not in upgraded
    assert upgraded["bits_per_second"] == 5.0 and upgraded["warnings"] == []


def test_a_version_1_result_recorded_before_rtt_gets_it_as_null() -> None:
    parsed = _parsed()
    del parsed["rtt"]
    assert result_from(parsed)["rtt"] is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tool": "iperf4"}, "result.tool: must be one of 'iperf2', 'iperf3', got a string 'iperf4'"),
        ({"streams": "2"}, "result.streams: must be an integer, got a string '2'"),
        ({"streams": True}, "result.streams: must be an integer, got a boolean True"),
        ({"bits_per_second": "fast"}, "result.bits_per_second: must be a number or null, got a string 'fast'"),
        ({"warnings": ["ok", 3]}, "result.warnings[1]: must be a string, got a number 3"),
        ({"sent": {"bytes": 1}}, "result.sent.bits_per_second: missing (a number or null)"),
        ({"intervals": [{"start": 0, "end": 1, "bytes": 1}]}, "result.intervals[0].bits_per_second: missing"),
        ({"schema_version": 2}, "result.schema_version: 2 is not a version this collection reads (0 to 1)"),
        ({"schema_version": "1"}, "result.schema_version: '1' is not a version this collection reads"),
    ],
)
def test_a_bad_result_names_the_field_and_the_fix(change: dict[str, Any], message: str) -> None:
    with pytest.raises(RecordError) as caught:
        result_from({**_parsed(), **change})
    assert message in str(caught.value)
    assert "esxilab.iperf.iperf_parse" in str(caught.value)  # the fix: what makes a normalized result


def test_a_version_1_result_lacking_a_required_key_is_named() -> None:
    parsed = _parsed()
    del parsed["protocol"]
    with pytest.raises(RecordError, match=r"result\.protocol: missing \(one of 'tcp', 'udp'\)"):
        result_from(parsed)


def test_none_is_no_result_and_anything_else_is_refused() -> None:
    assert result_from(None) is None
    with pytest.raises(RecordError, match=r"^pair 1: must be a dictionary \(a normalized result\) or null, got a list"):
        result_from(["not", "a", "result"], "pair 1")


def test_a_record_without_schema_version_is_read_as_the_report_always_read_it() -> None:
    old = {
        "pairs": [{"server": "h1", "client": "h2", "port": 5201, "result": {"bits_per_second": 9.0, "tool": "iperf3"}}],
        "total_bits_per_second": 9.0,
    }
    record = run_record_from(old, position=4)
    assert (record["schema_version"], record["run"], record["test"], record["direction"]) == (
        RECORD_VERSION,
        5,
        "default",
        "forward",
    )
    assert (record["streams"], record["repetition"], record["labels"], record["errors"]) == (None, None, {}, [])
    assert (record["ok"], record["complete"], record["failed_pairs"], record["nic"]) == (True, True, 0, None)
    pair = record["pairs"][0]
    assert (pair["pair"], pair["ok"], pair["sender"], pair["address"], pair["labels"]) == (1, True, None, None, {})
    assert pair["result"] is not None and pair["result"]["warnings"] == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"run": "one"}, "runs[3].run: must be an integer, got a string 'one'"),
        ({"labels": ["a"]}, "runs[3].labels: must be a dictionary, got a list"),
        ({"errors": "boom"}, "runs[3].errors: must be a list, got a string 'boom'"),
        ({"pairs": "none"}, "runs[3].pairs: must be a list, got a string 'none'"),
        ({"schema_version": 9}, "runs[3].schema_version: 9 is not a version this collection reads (0 to 2)"),
    ],
)
def test_a_bad_record_names_the_field_and_the_fix(change: dict[str, Any], message: str) -> None:
    with pytest.raises(RecordError) as caught:
        run_record_from({**_record(), **change}, "runs[3]")
    assert message in str(caught.value)
    assert "pass paired_test_results as the role esxilab.iperf.paired_test published them" in str(caught.value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"port": "5201"}, "runs[0].pairs[0].port: must be an integer, got a string '5201'"),
        ({"server": None}, "runs[0].pairs[0].server: must be a string, got null"),
        ({"ok": "yes"}, "runs[0].pairs[0].ok: must be a boolean, got a string 'yes'"),
        ({"result": {"bits_per_second": 1.0, "schema_version": 1}}, "runs[0].pairs[0].result.bidir: missing"),
    ],
)
def test_a_bad_pair_names_its_path(change: dict[str, Any], message: str) -> None:
    record = _record()
    record["pairs"][0].update(change)
    with pytest.raises(RecordError) as caught:
        run_record_from(record, "runs[0]")
    assert message in str(caught.value)


def test_a_pair_without_its_hosts_is_refused_even_in_an_old_record() -> None:
    with pytest.raises(RecordError, match=r"runs\[0\]\.pairs\[0\]\.client: missing \(a string\)"):
        run_record_from({"pairs": [{"server": "h1", "port": 1}], "total_bits_per_second": None}, "runs[0]")
