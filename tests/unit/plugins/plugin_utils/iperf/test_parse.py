# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The dispatcher over every file of the real-output corpus: right tool and format, schema-valid, raw kept."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import detect, parse, parse_all, split_tests
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.result import (
    SCHEMA_VERSION,
    IperfParseError,
    new_result,
)
from tests.collection_path import FIXTURES, SCHEMA

ALL_FIXTURES = sorted(p for p in FIXTURES.iterdir() if p.name != "README.md")
VALIDATOR = Draft202012Validator(json.loads(SCHEMA.read_text()))


def _expected_kind(path: Path) -> tuple[str, str]:
    tool = path.name.split("-", 1)[0]
    for kind in ("jsonstream", "json", "csv", "text"):
        if f"-{kind}-" in path.name:
            return tool, kind
    raise AssertionError(f"fixture name does not say its kind: {path.name}")


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


def test_fixture_corpus_is_present() -> None:
    assert len(ALL_FIXTURES) >= 80, f"expected the real-output corpus at {FIXTURES}"


def test_every_fixture_has_a_catalog_row_naming_its_source() -> None:
    # tests/fixtures/iperf/README.md section 2: | `file` (size) | version | command | source | notes |
    row = re.compile(r"^\| `([^`]+)` \(\d+ B\) \|")
    sources = {}
    for line in (FIXTURES / "README.md").read_text(encoding="utf-8").splitlines():
        if match := row.match(line):
            sources[match[1]] = [cell.strip() for cell in line.strip().strip("|").split(" | ")][3]
    assert set(sources) == {p.name for p in ALL_FIXTURES}
    vague = {name: source for name, source in sources.items() if not source or source.lower().startswith("same")}
    assert not vague, "each row names its source in full (rows get re-sorted)"


def test_schema_document_and_result_code_agree() -> None:
    # docs/schema/README.md: the version is bumped in both places or in neither
    schema = VALIDATOR.schema
    Draft202012Validator.check_schema(schema)
    assert schema["properties"]["schema_version"] == {"const": SCHEMA_VERSION}
    assert f"(schema_version {SCHEMA_VERSION})" in schema["title"]
    assert set(new_result("iperf2", "csv")) >= set(schema["required"])
    assert set(new_result("iperf3", "json")) >= set(schema["required"])


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.name)
def test_detect_tells_tool_and_kind(path: Path) -> None:
    assert detect(_read(path)) == _expected_kind(path)


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.name)
def test_every_fixture_parses_to_a_schema_valid_result(path: Path) -> None:
    tool, kind = _expected_kind(path)
    for result in parse_all(_read(path)):
        errors = sorted(VALIDATOR.iter_errors(result), key=lambda e: list(e.path))
        assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
        assert result["tool"] == tool
        assert result["format"] == ("json" if kind == "jsonstream" else kind)
        if result["error"]:
            assert result["raw"], "an error result must keep the raw text"
            assert result["complete"] is False
        if result["bits_per_second"] is not None:
            assert result["sent"] or result["received"]


def test_decoded_json_document_is_accepted() -> None:
    path = FIXTURES / "iperf3-3.1.3-json-client-tcp-pscheduler.json"
    from_text = parse(_read(path))
    from_dict = parse(json.loads(_read(path)))
    assert from_dict["bits_per_second"] == from_text["bits_per_second"]
    assert from_dict["bits_per_second"] is not None


def test_keep_raw_puts_the_input_beside_the_result() -> None:
    path = FIXTURES / "iperf3-ge3.2-text-client-basic-tcp-t2-lablog.txt"
    text = _read(path)
    assert "raw" not in parse(text)
    assert parse(text, keep_raw=True)["raw"] == text


def test_bytes_input_is_decoded() -> None:
    path = FIXTURES / "iperf3-ge3.2-text-client-basic-tcp-t2-lablog.txt"
    assert parse(path.read_bytes())["bits_per_second"] == parse(_read(path))["bits_per_second"]


@pytest.mark.parametrize("text", ["", "   \n", "hello world\nthis is not iperf\n", "PING 198.18.0.1 (198.18.0.1)"])
def test_non_iperf_text_is_an_error_naming_the_fix(text: str) -> None:
    with pytest.raises(IperfParseError, match="not iperf2 or iperf3 output"):
        parse(text)


def test_the_error_never_quotes_the_input() -> None:
    secret = "password=hunter2 and more private text"
    with pytest.raises(IperfParseError) as info:
        parse(f"{secret}\nsecond line\n")
    assert "hunter2" not in str(info.value)
    assert "2 line(s)" in str(info.value)


@pytest.mark.parametrize("data", ['{"foo":[1,2,3]}', {"foo": [1, 2, 3]}, b'{"foo": {"password": "hunter2"}}'])
def test_json_that_is_not_an_iperf3_document_is_refused(data: Any) -> None:
    with pytest.raises(IperfParseError, match="not an iperf3 -J document") as info:
        parse(data)
    assert "hunter2" not in str(info.value)
    with pytest.raises(IperfParseError, match="not an iperf3 -J document"):
        parse_all(data)


def test_truncated_json_is_an_error_result_with_raw() -> None:
    path = FIXTURES / "iperf3-3.9-json-client-tcp-n10k-TRUNCATED-cloudpilot.json"
    result = parse(_read(path))
    assert result["error"]
    assert result["raw"] == _read(path)
    assert result["complete"] is False


SERVER_LOG_TWO_TESTS = """-----------------------------------------------------------
Server listening on 5201 (test #1)
-----------------------------------------------------------
Accepted connection from 198.18.0.12, port 40000
[  5] local 198.18.0.11 port 5201 connected to 198.18.0.12 port 40002
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-1.00   sec   112 MBytes   941 Mbits/sec
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-1.00   sec   112 MBytes   941 Mbits/sec                  receiver
-----------------------------------------------------------
Server listening on 5201 (test #2)
-----------------------------------------------------------
Accepted connection from 198.18.0.13, port 40010
[  5] local 198.18.0.11 port 5201 connected to 198.18.0.13 port 40012
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-1.00   sec  56.0 MBytes   470 Mbits/sec
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-1.00   sec  56.0 MBytes   470 Mbits/sec                  receiver
-----------------------------------------------------------
Server listening on 5201 (test #3)
-----------------------------------------------------------
"""


def test_multi_test_server_log_splits_into_tests() -> None:
    pieces = split_tests(SERVER_LOG_TWO_TESTS)
    assert len(pieces) == 3
    results = parse_all(SERVER_LOG_TWO_TESTS)
    assert [r["bits_per_second"] for r in results] == [941e6, 470e6]
    assert all(r["side"] == "server" for r in results)


def test_parse_of_multi_test_log_returns_the_last_and_says_so() -> None:
    result: dict[str, Any] = parse(SERVER_LOG_TWO_TESTS)
    assert result["bits_per_second"] == 470e6
    assert result["received"]["bytes"] == 56 * 1024 * 1024
    assert any("2 tests" in w for w in result["warnings"])


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("[  5]   0.00-1.00   sec   112 MBytes   941 Mbits/sec\n", "iperf3"),
        ("[  1] 0.0000-1.0001 sec   112 MBytes   941 Mbits/sec\n", "iperf2"),
    ],
)
def test_bare_interval_lines_are_told_by_their_format_and_say_so(text: str, tool: str) -> None:
    assert detect(text) == (tool, "text")
    result = parse(text)
    assert result["tool"] == tool
    assert any("interval format" in w for w in result["warnings"])


def test_legacy_one_decimal_interval_is_iperf2_without_doubt() -> None:
    result = parse("[  3]  0.0- 1.0 sec   112 MBytes   941 Mbits/sec\n")
    assert result["tool"] == "iperf2"
    assert not any("interval format" in w for w in result["warnings"])


# --------------------------------------------------------------------------- issue 22: the last test with figures

IDLE_TEXT = "iperf3-3.12-text-server-tcp-2-tests-P2-stopped-idle-locallab.txt"
IDLE_JSON = "iperf3-3.12-json-server-tcp-udp-2-tests-stopped-idle-locallab.json"


def test_a_server_stopped_while_idle_gives_its_last_test_not_an_error_piece() -> None:
    text = _read(FIXTURES / IDLE_TEXT)
    assert len(split_tests(text)) == 3  # the last piece: a banner, then the stop
    result = parse(text)
    assert result["error"] is None and result["complete"] is True
    assert result["bits_per_second"] == 959e6 and result["streams"] == 2
    stop = (
        "after this test the log holds no other test (no client connected), only: interrupt - the server has terminated"
    )
    assert stop in result["warnings"]
    assert [r["bits_per_second"] for r in parse_all(text)] == [959e6, 959e6]  # the idle piece is no test


def test_a_json_server_log_is_split_into_its_documents() -> None:
    text = _read(FIXTURES / IDLE_JSON)
    pieces = split_tests(text)
    assert len(pieces) == 3
    assert all(isinstance(json.loads(piece), dict) for piece in pieces)
    results = parse_all(text)
    assert [(r["protocol"], r["side"], r["error"]) for r in results] == [
        ("tcp", "server", None),
        ("udp", "server", None),
    ]
    assert results[0]["received"]["bytes"] == 239757808  # the TCP document's sum_received
    last = parse(text)
    assert last["protocol"] == "udp" and last["error"] is None
    assert last["received"]["bytes"] == 12494792
    # the third document alone is the stop, as iperf3 wrote it: an error, no figure
    alone = parse(pieces[2])
    assert alone["error"] == "interrupt - the server has terminated" and alone["bits_per_second"] is None


def test_a_json_document_cut_after_the_first_stays_an_error_of_the_cut_one() -> None:
    text = _read(FIXTURES / IDLE_JSON)
    pieces = split_tests(text)
    cut = text[: text.index(pieces[1]) + 1500]  # the UDP test's document, cut after its connection
    results = parse_all(cut)
    assert [r["protocol"] for r in results] == ["tcp", "udp"]
    assert results[0]["error"] is None
    assert results[-1]["error"] and "truncated or invalid" in results[-1]["error"]
    early = text[: text.index(pieces[1]) + 200]  # cut before any connection: no test, said beside the first
    (only,) = parse_all(early)
    note = "no other test (no client connected), only: the iperf3 JSON document is truncated"
    assert any(note in w for w in only["warnings"])


def test_a_later_failed_test_is_named_and_the_measured_one_returned() -> None:
    failed = (
        "-----------------------------------------------------------\n"
        "Server listening on 5201 (test #3)\n"
        "-----------------------------------------------------------\n"
        "Accepted connection from 198.18.0.14, port 40020\n"
        "iperf3: error - the client has unexpectedly closed the connection\n"
    )
    banner = "-----------------------------------------------------------\nServer"
    text = SERVER_LOG_TWO_TESTS.rsplit(banner, 1)[0] + failed
    results = parse_all(text)
    assert [r["error"] for r in results] == [None, None, "the client has unexpectedly closed the connection"]
    result = parse(text)
    assert result["bits_per_second"] == 470e6
    assert any("the last one with figures" in w for w in result["warnings"])
    later = "a later test failed without figures: the client has unexpectedly closed the connection"
    assert later in result["warnings"]


def test_a_json_stream_of_several_tests_is_split_at_each_start_event() -> None:
    """Built from the recorded -J documents (one --json-stream event per member), as a 3.17+ server writes them."""
    documents = [json.loads(piece) for piece in split_tests(_read(FIXTURES / IDLE_JSON))[:2]]
    lines = []
    for doc in documents:
        lines.append(json.dumps({"event": "start", "data": doc["start"]}))
        lines += [json.dumps({"event": "interval", "data": interval}) for interval in doc["intervals"]]
        lines.append(json.dumps({"event": "end", "data": doc["end"]}))
    stream = "\n".join(lines) + "\n"
    assert detect(stream) == ("iperf3", "jsonstream")
    assert len(split_tests(stream)) == 2
    assert [r["protocol"] for r in parse_all(stream)] == ["tcp", "udp"]
    assert parse(stream)["received"]["bytes"] == 12494792


def test_errors_before_the_first_test_are_said_beside_it() -> None:
    probe = (
        "-----------------------------------------------------------\n"
        "Server listening on 5201 (test #1)\n"
        "-----------------------------------------------------------\n"
        "iperf3: error - unable to receive parameters from client:\n"
    )
    first, *rest = SERVER_LOG_TWO_TESTS.split("-----------------------------------------------------------\nServer")
    text = probe + "-----------------------------------------------------------\nServer".join([first, *rest])
    results = parse_all(text)
    assert [r["bits_per_second"] for r in results] == [941e6, 470e6]
    note = "before this test the log holds, with no client connected: unable to receive parameters from client:"
    assert note in results[0]["warnings"]
