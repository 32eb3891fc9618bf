# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``latency`` option and setting: one reader, clear errors naming the option, what a run plans from it."""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.action.iperf_run import ARGUMENT_SPEC
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.common import IperfRunError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.latency import client_pings, transfer_seconds
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.options import validate_params
from ansible_collections.esxilab.iperf.plugins.plugin_utils.latency.option import (
    LatencyOptionError,
    idle_seconds,
    read_latency,
    with_interface,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.checks import PairedTestError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan, run_seconds
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.start_delay import auto_start_delay

ADDRESSES = {"h1": "198.18.0.1", "h2": "198.18.0.2", "h3": "198.18.0.3", "h4": "198.18.0.4"}
FIX = "set latency to true, false or a dictionary such as {interval: 0.2, idle: 10}"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        (False, None),
        ("no", None),
        (True, {"interval": 0.2, "idle": None}),
        ("yes", {"interval": 0.2, "idle": None}),
        ({}, {"interval": 0.2, "idle": None}),
        ({"interval": 0.05, "idle": 0}, {"interval": 0.05, "idle": 0.0}),
        ({"interval": "1", "idle": "2.5"}, {"interval": 1.0, "idle": 2.5}),  # from -e key=value
    ],
)
def test_read_latency(value: Any, expected: Any) -> None:
    assert read_latency(value, "latency") == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"interval": 0}, "x.latency.interval must be from 0.01 to 10 seconds, got 0"),
        ({"interval": 11}, "x.latency.interval must be from 0.01 to 10 seconds, got 11"),
        ({"interval": "fast"}, "x.latency.interval must be a number of seconds, got 'fast'"),
        ({"interval": True}, "x.latency.interval must be a number of seconds, got True"),
        ({"idle": -1}, "x.latency.idle must be from 0 to 3600 seconds, got -1"),
        ({"idle": float("nan")}, "x.latency.idle must be a number of seconds, got nan"),
        ({"intervall": 1}, "x.latency has unknown key(s) intervall; known: interval, idle"),
        ({"interface": "vmk1"}, "x.latency has unknown key(s) interface; known: interval, idle"),
        ("often", "x.latency must be true, false or a dictionary, got str"),
        ([0.2], "x.latency must be true, false or a dictionary, got list"),
    ],
)
def test_wrong_values_name_the_option_and_the_fix(value: Any, message: str) -> None:
    with pytest.raises(LatencyOptionError) as info:
        read_latency(value, "x.latency")
    assert str(info.value).startswith(message) and FIX in str(info.value)


def test_interface_is_an_iperf_run_key_and_checked() -> None:
    assert read_latency({"interface": "vmk1"}, "latency", interface=True) == {
        "interval": 0.2,
        "idle": None,
        "interface": "vmk1",
    }
    for bad in ("-I", "vmk1; reboot", "", 7):
        with pytest.raises(LatencyOptionError, match=r"latency\.interface=.* is not an interface name"):
            read_latency({"interface": bad}, "latency", interface=True)


def test_iperf_run_refuses_a_bad_latency_before_anything_runs() -> None:
    params = {name: spec.get("default") for name, spec in ARGUMENT_SPEC.items()}
    params.update(mode="client", server="198.18.0.1", latency={"interval": 0.001})
    with pytest.raises(IperfRunError, match=r"^latency.interval must be from 0.01 to 10 seconds, got 0.001; set"):
        validate_params(params, ARGUMENT_SPEC)
    params.update(mode="server", server=None, latency=True)
    with pytest.raises(IperfRunError, match=r"latency \(mode=client\)"):
        validate_params(params, ARGUMENT_SPEC)


def test_the_windows_follow_the_transfer() -> None:
    assert transfer_seconds({"duration": 3, "omit": 1}, 40) == 4.0
    assert transfer_seconds({}, 40) == 10.0  # iperf's default duration
    assert transfer_seconds({"bytes": 1000}, 40) == 40.0  # unknown beforehand: the timeout bounds it
    pings = client_pings({"server": "198.18.0.1", "duration": 2, "latency": {"interval": 0.5}}, esxi=False, timeout=9)
    assert pings is not None
    assert pings["idle_argv"] == pings["loaded_argv"] == ["ping", "-n", "-c", "4", "-i", "0.5", "-W", "1", "198.18.0.1"]
    assert client_pings({"server": "198.18.0.1", "latency": None}, esxi=False, timeout=9) is None
    assert idle_seconds(None, 10) == 0.0 and idle_seconds({"idle": None}, 10) == 10.0
    assert idle_seconds({"idle": 2}, 10) == 2.0


@pytest.mark.parametrize(
    ("latency", "message"),
    [
        ({"interval": 0}, "paired_test_tests[0]: test 't': latency.interval must be from 0.01 to 10 seconds, got 0"),
        ({"intervall": 1}, "paired_test_tests[0]: test 't': latency has unknown key(s) intervall"),
        ("often", "paired_test_tests[0]: test 't': latency must be true, false or a dictionary, got str"),
    ],
)
def test_the_setting_is_checked_in_the_plan_with_its_path(latency: Any, message: str) -> None:
    with pytest.raises(PairedTestError) as info:
        build_plan(
            [{"name": "t", "pairs": [{"server": "h1", "client": "h2"}], "latency": latency}], addresses=ADDRESSES
        )
    assert message in str(info.value) and FIX in str(info.value)
    with pytest.raises(PairedTestError, match=r"role variable paired_test_latency: latency\.interval must be from"):
        build_plan([{"name": "t", "pairs": [{"server": "h1", "client": "h2"}]}], {"latency": {"interval": 50}})


def test_a_run_with_latency_plans_its_idle_window() -> None:
    pairs = [{"server": "h1", "client": "h2"}, {"server": "h3", "client": "h4"}]
    test: dict[str, Any] = {"name": "t", "duration": 3, "omit": 1, "pairs": pairs, "start_delay": 0.5}
    plain = build_plan([test], addresses=ADDRESSES)["runs"][0]
    timed = build_plan([{**test, "latency": True}], addresses=ADDRESSES)["runs"][0]
    assert "latency" not in plain["iperf_client"] and plain["latency_idle"] == 0.0
    assert timed["iperf_client"]["latency"] == {"interval": 0.2, "idle": None}
    assert timed["latency_idle"] == 4.0  # as long as the transfer: duration + omit
    assert run_seconds(timed) == run_seconds(plain) + 4.0
    assert timed["server_timeout"] == plain["server_timeout"] + 4
    # the barrier's start delay gets the idle window on top, with a given delay and a learnt one
    assert auto_start_delay(plain, []) == 0.5 and auto_start_delay(timed, []) == 4.5
    learnt = {**timed, "start_delay_auto": True}
    records = [{"dispatch_time": 1.0, "pairs": [{"client": "h2"}, {"client": "h4"}]}]
    assert auto_start_delay(learnt, records) == pytest.approx(1.0 * 1.5 + 0.1 + 4.0)
    short = build_plan([{**test, "latency": {"idle": 1.5}}], addresses=ADDRESSES)["runs"][0]
    assert short["latency_idle"] == 1.5 and auto_start_delay(short, []) == 2.0


def test_a_paired_client_gets_the_vmkernel_adapter_of_its_address() -> None:
    client = {"duration": 2, "latency": {"interval": 0.2, "idle": None}}
    speeds = {
        "198.18.0.2": {"interface": "vmk1", "speed_mbps": 10000},
        "198.18.0.9": {"interface": None, "reason": "no VMkernel adapter holds 198.18.0.9"},
    }
    assert with_interface(client, speeds, ["198.18.0.2"]) == {
        "latency": {"interval": 0.2, "idle": None, "interface": "vmk1"}
    }
    assert with_interface(client, speeds, [None, "198.18.0.9", "198.18.0.2"])["latency"]["interface"] == "vmk1"
    assert with_interface(client, speeds, ["198.18.0.9"]) == {"latency": {"interval": 0.2, "idle": None}}
    assert with_interface(client, None, ["198.18.0.2"]) == {"latency": {"interval": 0.2, "idle": None}}
    assert with_interface({"duration": 2}, speeds, ["198.18.0.2"]) == {}
    assert with_interface(None, speeds, []) == {}
    weird = {"198.18.0.2": {"interface": "vmk1; reboot"}}
    assert "interface" not in with_interface(client, weird, ["198.18.0.2"])["latency"]


def test_external_clients_cannot_ping() -> None:
    pair = {"server": "h1", "external": {"count": 1, "deadline": 30}}
    with pytest.raises(PairedTestError) as info:
        build_plan([{"name": "t", "pairs": [pair], "latency": True}], {})
    assert "test 't': latency={'interval': 0.2, 'idle': None} cannot be used with external clients" in str(info.value)
    assert "remove latency from the test" in str(info.value)
