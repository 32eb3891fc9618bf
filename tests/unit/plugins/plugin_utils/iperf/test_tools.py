# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Version banners of iperf2/iperf3 and what each version supports."""

from __future__ import annotations

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.tools import (
    describe_tool,
    parse_version_output,
    supports,
    version_tuple,
)

# Banners as the tools print them (the Debian 12 binaries on this machine, and the ESXi 6.0
# community iperf2 recorded in tests/fixtures/esxi/6.0__opt-iperf-bin-iperf-v.txt).
IPERF3_312 = (
    "iperf 3.12 (cJSON 1.7.15)\n"
    "Linux vm 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01) x86_64\n"
    "Optional features available: CPU affinity setting, IPv6 flow label, SCTP, TCP congestion algorithm setting, "
    "sendfile / zerocopy, socket pacing, authentication, bind to device, support IPv4 don't fragment\n"
)
IPERF2_218 = "iperf version 2.1.8 (12 August 2022) pthreads\n"
IPERF2_205_ESXI = "iperf version 2.0.5 (08 Jul 2010) pthreads\n"


@pytest.mark.parametrize(
    ("text", "family", "version"),
    [
        (IPERF3_312, "iperf3", "3.12"),
        (IPERF2_218, "iperf2", "2.1.8"),
        (IPERF2_205_ESXI, "iperf2", "2.0.5"),
        ("iperf 3.0.11\nLinux gw 3.10.0 #1 SMP mips64\n", "iperf3", "3.0.11"),
        ("iperf 3.9-nrf\n", "iperf3", "3.9-nrf"),
        ("iperf 3.17.1 (cJSON 1.7.15)\n", "iperf3", "3.17.1"),
        ("iperf version 2.0.14a (3 February 2021) pthreads\n", "iperf2", "2.0.14a"),
        ("iperf version 2.2.0 (22 July 2024) pthreads\r\n", "iperf2", "2.2.0"),
    ],
)
def test_parse_version_output(text: str, family: str, version: str) -> None:
    assert parse_version_output(text) == (family, version)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "sh: /usr/lib/vmware/vsan/bin/iperf3.copy: Operation not permitted\n",
        "iperf3: error - unable to start listener for connections: Operation not permitted\n",
        "BusyBox v1.36.1 multi-call binary.\n",
    ],
)
def test_parse_version_output_without_banner(text: str) -> None:
    assert parse_version_output(text) == (None, None)


def test_version_tuple() -> None:
    assert version_tuple("3.12") == (3, 12)
    assert version_tuple("3.9-nrf") == (3, 9)
    assert version_tuple("2.0.14a") == (2, 0, 14)
    with pytest.raises(ValueError, match="not a version"):
        version_tuple("x3")


@pytest.mark.parametrize(
    ("version", "json_stream", "bidir", "server_output"),
    [
        ("3.0.1", False, False, False),
        ("3.0.5", False, False, True),
        ("3.1.3", False, False, True),
        ("3.6", False, False, True),
        ("3.7", False, True, True),
        ("3.12", False, True, True),
        ("3.16", False, True, True),
        ("3.17", True, True, True),
        ("3.17.1", True, True, True),
        ("3.21", True, True, True),
    ],
)
def test_iperf3_support_thresholds(version: str, json_stream: bool, bidir: bool, server_output: bool) -> None:
    assert supports("iperf3", version) == {
        "json": True,
        "json_stream": json_stream,
        "bidir": bidir,
        "get_server_output": server_output,
        "csv": False,
    }


def test_iperf2_supports_csv_and_dual_test_only() -> None:
    assert supports("iperf2", "2.0.5") == {
        "json": False,
        "json_stream": False,
        "bidir": True,
        "get_server_output": False,
        "csv": True,
    }


def test_unknown_binary_supports_nothing_known() -> None:
    assert supports(None, None) == {
        "json": None,
        "json_stream": None,
        "bidir": None,
        "get_server_output": None,
        "csv": None,
    }


def test_describe_tool_iperf2_exit_status_one_is_still_runnable() -> None:
    tool = describe_tool("/opt/iperf/bin/iperf", IPERF2_205_ESXI, 1)
    assert tool["path"] == "/opt/iperf/bin/iperf"
    assert tool["family"] == "iperf2"
    assert tool["version"] == "2.0.5"
    assert tool["runnable"] is True
    assert tool["error"] is None
    assert tool["supports"]["csv"] is True


def test_describe_tool_blocked_binary_says_why() -> None:
    output = "sh: /usr/lib/vmware/vsan/bin/iperf3.copy: Operation not permitted\n"
    tool = describe_tool("/usr/lib/vmware/vsan/bin/iperf3.copy", output, 126)
    assert tool["runnable"] is False
    assert tool["family"] is None
    assert tool["version"] is None
    assert "exit status 126" in tool["error"]
    assert "Operation not permitted" in tool["error"]


def test_describe_tool_not_run_at_all() -> None:
    tool = describe_tool("/opt/iperf/bin/iperf.copy", None, None, problem="is not executable")
    assert tool["runnable"] is False
    assert tool["error"] == "is not executable"
    assert tool["supports"]["json"] is None
