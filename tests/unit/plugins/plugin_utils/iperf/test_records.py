# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The record types of ``iperf/records.py`` against their contracts, so neither can drift from the other.

* ``IperfResult`` and its parts against ``docs/schema/iperf-result.schema.json``: the required
  keys are the schema's required properties, the schema has no property the type lacks, and the
  keys beyond the schema are exactly the declared extras.
* Every recorded output the parsers read gives a result that validates against the schema and
  holds no key (at any level) its type does not declare.
* ``RunRecord`` / ``PairRecord`` against the RETURN documentation of ``paired_test_record``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from ansible_collections.esxilab.iperf.plugins.filter import paired_test_record as record_plugin
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse_results
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import (
    EXTRA_RESULT_KEYS,
    SCHEMA_OPTIONAL_KEYS,
    CpuFigures,
    Endpoint,
    Interval,
    IperfResult,
    PairRecord,
    RttFigures,
    RttSummary,
    RunRecord,
    StreamTotals,
    Totals,
    UdpFigures,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.result import IperfParseError
from tests.collection_path import FIXTURES, SCHEMA

SCHEMA_DOC: dict[str, Any] = json.loads(SCHEMA.read_text())
VALIDATOR = Draft202012Validator(SCHEMA_DOC)
PROPERTIES: dict[str, Any] = SCHEMA_DOC["properties"]
DEFS: dict[str, Any] = SCHEMA_DOC["$defs"]


def _keys(kind: Any) -> tuple[frozenset[str], frozenset[str]]:
    """(required keys, every key) of a TypedDict."""
    required: frozenset[str] = kind.__required_keys__
    return required, required | kind.__optional_keys__


def test_result_type_has_the_schema_properties_as_its_required_keys() -> None:
    required, every = _keys(IperfResult)
    assert required == set(SCHEMA_DOC["required"])
    # the schema's optional properties (added compatibly, docs/schema/README.md) are optional keys of the type
    assert set(PROPERTIES) == required | SCHEMA_OPTIONAL_KEYS
    assert not SCHEMA_OPTIONAL_KEYS & required
    assert every - required == EXTRA_RESULT_KEYS | SCHEMA_OPTIONAL_KEYS
    assert not EXTRA_RESULT_KEYS & set(PROPERTIES)


@pytest.mark.parametrize(
    ("kind", "schema", "extras"),
    [
        (Totals, DEFS["totals"], set()),
        (Endpoint, DEFS["endpoint"], set()),
        (StreamTotals, PROPERTIES["per_stream"]["items"], {"udp", "role"}),
        (Interval, PROPERTIES["intervals"]["items"], set()),
        (UdpFigures, PROPERTIES["udp"], {"out_of_order", "sent_packets"}),
        (CpuFigures, PROPERTIES["cpu"], set()),
        (RttFigures, DEFS["stream_rtt"], set()),
        (RttSummary, PROPERTIES["rtt"], set()),
    ],
    ids=["totals", "endpoint", "per_stream", "intervals", "udp", "cpu", "stream_rtt", "rtt"],
)
def test_part_types_match_their_schema_objects(kind: Any, schema: dict[str, Any], extras: set[str]) -> None:
    required, every = _keys(kind)
    assert required == set(schema.get("required", ()))
    assert every == set(schema["properties"]) | extras
    assert not extras & set(schema["properties"])


def _undeclared(result: Mapping[str, Any]) -> list[str]:
    """Keys of a parsed result (and of its parts) that its TypedDict does not declare."""
    found = [f"result.{k}" for k in result if k not in _keys(IperfResult)[1]]
    parts: list[tuple[str, Any, Any]] = [(k, result.get(k), Totals) for k in ("sent", "received", "bidir_sum")]
    parts += [(f"reverse_{k}", result.get(f"reverse_{k}"), Totals) for k in ("sent", "received")]
    parts += [(k, result.get(k), Endpoint) for k in ("local", "remote")]
    parts += [(k, result.get(k), UdpFigures) for k in ("udp", "reverse_udp")]
    parts += [("cpu", result.get("cpu"), CpuFigures), ("rtt", result.get("rtt"), RttSummary)]
    for key in ("per_stream", "reverse_per_stream"):
        for item in result.get(key) or []:
            parts += [(key, item, StreamTotals), (f"{key}.sent", item["sent"], Totals)]
            parts += [(f"{key}.received", item["received"], Totals), (f"{key}.udp", item.get("udp"), UdpFigures)]
            parts += [(f"{key}.rtt", item.get("rtt"), RttFigures)]
    parts += [(k, item, Interval) for k in ("intervals", "reverse_intervals") for item in result.get(k) or []]
    for where, value, kind in parts:
        if isinstance(value, Mapping):
            found += [f"{where}.{k}" for k in value if k not in _keys(kind)[1]]
    server = result.get("server_output")
    if isinstance(server, Mapping):
        found += [f"server_output.{k}" for k in _undeclared(server)]
    return found


FIXTURE_FILES = sorted(p for p in FIXTURES.iterdir() if p.name != "README.md")


def test_the_recorded_outputs_are_many() -> None:
    assert len(FIXTURE_FILES) > 50


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[p.name for p in FIXTURE_FILES])
def test_every_parsed_recording_is_valid_and_declared(path: Any) -> None:
    try:
        results = parse_results(path.read_bytes())
    except IperfParseError:
        pytest.skip("not iperf output the parsers recognise (refused, tested in test_parse.py)")
    assert results
    for result in results:
        errors = [f"{list(e.path)}: {e.message}" for e in VALIDATOR.iter_errors(result)]
        assert not errors, errors
        assert _undeclared(result) == []


def test_a_bidir_result_uses_the_declared_extras() -> None:
    """The drift check above is not vacuous: a --bidir recording carries the reverse_* extras."""
    (result,) = parse_results((FIXTURES / "iperf3-3.9-text-client-tcp-bidir-sigitp.txt").read_bytes())
    assert {"reverse_sent", "reverse_received", "reverse_intervals"} <= set(result)
    assert _undeclared({**result, "surprise": 1}) == ["result.surprise"]


def _documented(contains: Mapping[str, Any]) -> set[str]:
    return set(contains)


def test_run_and_pair_records_are_what_paired_test_record_documents() -> None:
    value = yaml.safe_load(record_plugin.RETURN)["_value"]["contains"]
    assert _documented(value) == _keys(RunRecord)[1]
    assert _documented(value["pairs"]["contains"]) == _keys(PairRecord)[1]
    # raw: returned only when the pair failed; measured_by, external: only for a pair with external clients;
    # latency: only with the setting latency
    assert _keys(PairRecord)[1] - _keys(PairRecord)[0] == {"raw", "measured_by", "external", "latency"}
