# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The iperf_parse and iperf_stats filters: thin glue over the results core and _stats."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.filter import iperf_parse as parse_plugin
from ansible_collections.esxilab.iperf.plugins.filter import iperf_stats as stats_plugin
from ansible_collections.esxilab.iperf.plugins.filter.iperf_parse import iperf_parse
from ansible_collections.esxilab.iperf.plugins.filter.iperf_stats import iperf_stats
from tests.collection_path import FIXTURES

IPERF3_JSON = "iperf3-3.1.3-json-client-tcp-pscheduler.json"
IPERF3_TEXT = "iperf3-ge3.2-text-client-basic-tcp-t2-lablog.txt"
IPERF2_TEXT = "iperf2-2.0.13-text-client-tcp-e-fm-pkb.txt"
IPERF2_CSV = "iperf2-2.0.5era-csv-client-tcp-single-line-overlord.txt"
TCP_SERVER_LOG = "iperf3-3.2to3.9-text-server-tcp-fk-moler.txt"
UDP_SERVER_LOG = "iperf3-3.2to3.9-text-server-udp-moler.txt"


def _text(name: str) -> str:
    return (FIXTURES / name).read_bytes().decode("utf-8")


def _one(value: Any) -> dict[str, Any]:
    assert isinstance(value, dict)
    return value


# -- registration and documentation ---------------------------------------------------


@pytest.mark.parametrize(("plugin", "name"), [(parse_plugin, "iperf_parse"), (stats_plugin, "iperf_stats")])
def test_filter_is_registered_under_its_file_name_and_documented(plugin: ModuleType, name: str) -> None:
    assert list(plugin.FilterModule().filters()) == [name]
    doc = yaml.safe_load(plugin.DOCUMENTATION)
    assert doc["name"] == name
    assert doc["version_added"] == "1.0.0"
    assert doc["options"]["_input"]["required"] is True
    assert doc["short_description"]
    ret = yaml.safe_load(plugin.RETURN)
    assert ret["_value"]["contains"]
    examples = yaml.safe_load(plugin.EXAMPLES)
    assert all(task["name"] for task in examples)
    assert f"| esxilab.iperf.{name}" in plugin.EXAMPLES


def test_iperf_parse_documents_every_key_of_the_result() -> None:
    documented = set(yaml.safe_load(parse_plugin.RETURN)["_value"]["contains"])
    result = _one(iperf_parse(_text(IPERF3_JSON), keep_raw=True))
    assert set(result) <= documented


# -- iperf_parse: one fixture of each family and format --------------------------------


def test_iperf3_json_text() -> None:
    result = _one(iperf_parse(_text(IPERF3_JSON)))
    assert (result["tool"], result["format"], result["tool_version"]) == ("iperf3", "json", "3.1.3")
    assert result["sent"]["bytes"] == 486643200
    assert result["sent"]["retransmits"] == 159
    assert result["received"]["bytes"] == 485969880
    assert result["bits_per_second"] == pytest.approx(388736097.120548)
    assert result["labels"] == {}
    assert "raw" not in result


def test_iperf3_json_already_decoded() -> None:
    document = json.loads(_text(IPERF3_JSON))
    result = _one(iperf_parse(document, keep_raw=True))
    assert result["bits_per_second"] == pytest.approx(388736097.120548)
    assert result["sent"]["bits_per_second"] == pytest.approx(389274697.967401)
    assert json.loads(result["raw"])["end"]["sum_sent"]["bytes"] == 486643200


def test_iperf3_text() -> None:
    result = _one(iperf_parse(_text(IPERF3_TEXT), labels={"pair": "lo-lo", "run": 1}))
    assert (result["tool"], result["format"], result["side"]) == ("iperf3", "text", "client")
    assert result["sent"]["bytes"] == 208666624  # 199 MBytes
    assert result["sent"]["bits_per_second"] == 832e6
    assert result["sent"]["retransmits"] == 0
    assert result["received"]["bytes"] == 200278016  # 191 MBytes
    assert result["bits_per_second"] == 796e6
    assert result["duration"] == 2.01
    assert result["labels"] == {"pair": "lo-lo", "run": 1}


def test_iperf2_text() -> None:
    result = _one(iperf_parse(_text(IPERF2_TEXT).encode()))  # bytes are accepted too
    assert (result["tool"], result["format"], result["side"]) == ("iperf2", "text", "client")
    assert result["sent"]["bytes"] == 14063 * 1024**2  # "14063 MBytes" with -f m
    assert result["bits_per_second"] == 1966e6
    assert result["duration"] == 60.0


def test_iperf2_csv() -> None:
    result = _one(iperf_parse(_text(IPERF2_CSV)))
    assert (result["tool"], result["format"]) == ("iperf2", "csv")
    assert result["bits_per_second"] == 36841295787
    assert result["duration"] == 10.0
    assert result["per_stream"][0]["id"] == 3


def test_keep_raw_keeps_the_exact_text() -> None:
    text = _text(IPERF3_TEXT)
    result = _one(iperf_parse(text, keep_raw=True))
    assert result["raw"] == text


def test_failed_run_is_a_result_with_error_not_a_filter_error() -> None:
    text = _text("iperf3-3.17.1-text-client-error-unable-to-connect.txt")
    result = _one(iperf_parse(text))
    assert result["error"] is not None
    assert "unable to connect to server" in result["error"]
    assert result["bits_per_second"] is None
    assert result["raw"] == text


def test_all_returns_every_test_of_a_server_log() -> None:
    log = _text(TCP_SERVER_LOG) + _text(UDP_SERVER_LOG)  # one server that ran two tests
    results = iperf_parse(log, all=True, labels={"host": "srv"})
    assert isinstance(results, list)
    assert [r["protocol"] for r in results] == ["tcp", "udp"]
    assert results[0]["received"]["bits_per_second"] == 22412094e3  # 22412094 Kbits/sec
    assert results[1]["received"]["bits_per_second"] == 1.05e6
    assert results[1]["udp"]["packets"] == 60
    assert results[1]["udp"]["jitter_ms"] == 0.022
    assert all(r["labels"] == {"host": "srv"} for r in results)
    last = _one(iperf_parse(log))
    assert last["protocol"] == "udp"
    assert any("2 tests" in w for w in last["warnings"])


# -- iperf_parse: errors name the filter and the fix ----------------------------------


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("hello world\nthis is not iperf\n", "not iperf2 or iperf3 output"),
        ("   \n", "the input is empty"),
        (None, "expected the text of iperf/iperf3 output"),
        (42, "expected the text of iperf/iperf3 output"),
        (["a", "b"], "expected the text of iperf/iperf3 output"),
    ],
)
def test_iperf_parse_errors(data: Any, message: str) -> None:
    with pytest.raises(AnsibleFilterError, match=message) as info:
        iperf_parse(data)
    assert "esxilab.iperf.iperf_parse" in str(info.value)


@pytest.mark.parametrize("data", ['{"foo":[1,2,3]}', {"foo": [1, 2, 3]}])
def test_iperf_parse_refuses_json_that_is_not_an_iperf3_document(data: Any) -> None:
    with pytest.raises(AnsibleFilterError, match="not an iperf3 -J document") as info:
        iperf_parse(data)
    assert str(info.value).startswith("esxilab.iperf.iperf_parse: ")
    with pytest.raises(AnsibleFilterError, match="not an iperf3 -J document"):
        iperf_parse(data, all=True)


@pytest.mark.parametrize("option", ["all", "keep_raw"])
@pytest.mark.parametrize("value", ["yes please", 2, None, "maybe", [True]])
def test_iperf_parse_refuses_a_flag_that_is_not_a_boolean(option: str, value: Any) -> None:
    with pytest.raises(AnsibleFilterError, match=f"{option} must be true or false") as info:
        iperf_parse(_text(IPERF3_TEXT), **{option: value})
    assert "esxilab.iperf.iperf_parse" in str(info.value)


@pytest.mark.parametrize(("value", "many"), [("yes", True), ("no", False), ("true", True), ("off", False), (1, True)])
def test_iperf_parse_reads_ansible_boolean_strings(value: Any, many: bool) -> None:
    assert isinstance(iperf_parse(_text(IPERF3_TEXT), all=value), list) is many
    assert ("raw" in _one(iperf_parse(_text(IPERF3_TEXT), keep_raw=value))) is many


def test_iperf_parse_labels_must_be_a_dict() -> None:
    with pytest.raises(AnsibleFilterError, match="labels must be a dictionary"):
        # A string where a dict belongs is the point: a playbook can pass one, and the filter must refuse it.
        iperf_parse(_text(IPERF3_TEXT), labels="pair=a")  # type: ignore[arg-type]


# -- iperf_stats ------------------------------------------------------------------------


def test_iperf_stats_over_parsed_results() -> None:
    runs = [iperf_parse(_text(name)) for name in (IPERF3_JSON, IPERF3_TEXT, IPERF2_TEXT)]
    failed = iperf_parse(_text("iperf3-3.17.1-text-client-error-unable-to-connect.txt"))
    summary = iperf_stats([*runs, failed])
    assert summary["count"] == 3
    assert summary["skipped"] == 1
    assert summary["min"] == pytest.approx(388736097.120548)
    assert summary["max"] == 1966e6
    assert summary["median"] == 796e6
    assert summary["sum"] == pytest.approx(388736097.120548 + 796e6 + 1966e6)


def test_iperf_stats_key_and_confidence() -> None:
    runs = [iperf_parse(_text(name)) for name in (IPERF3_JSON, IPERF3_TEXT)]
    summary = iperf_stats(runs, key="sent.retransmits", confidence=0.9)
    assert (summary["count"], summary["mean"], summary["max"]) == (2, 79.5, 159)
    assert summary["ci"]["level"] == 0.9


def test_iperf_stats_numbers() -> None:
    summary = iperf_stats([9.41e9, 9.38e9, 9.40e9])
    assert summary["mean"] == pytest.approx(9.39666666667e9)
    assert summary["ci95"]["half_width"] is not None


@pytest.mark.parametrize(
    ("data", "kwargs", "message"),
    [
        ({"bits_per_second": 1.0}, {}, "got one dictionary"),
        ("1,2,3", {}, "expected a list"),
        ([1.0, "x"], {}, "not a number"),
        ([1.0, 2.0], {"confidence": 2}, "confidence must be"),
        ([{"bits_per_second": 1.0}], {"key": "recieved.bits_per_second"}, "check the spelling of key"),
        ([9.4e9, -9.4e9], {}, "item 1 is -9400000000.0, a negative number"),
    ],
)
def test_iperf_stats_errors(data: Any, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(AnsibleFilterError, match=message) as info:
        iperf_stats(data, **kwargs)
    assert "esxilab.iperf.iperf_stats" in str(info.value)
