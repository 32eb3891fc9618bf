# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The rate search's settings: every bad input named with its option, its role variable and the fix; the plan."""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch.frames import (
    frame_mbps,
    max_frame,
    packets_per_second,
    payload_bps,
    payload_of,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch.settings import (
    Settings,
    SettingsError,
    check_settings,
    plan,
    unknown_options,
)

GOOD: dict[str, Any] = {
    "frame_sizes": [1518, 64, 512],
    "mtu": 1500,
    "loss_percent": 0.0,
    "shortfall_percent": 0.5,
    "trial_seconds": 2,
    "resolution_mbps": 1.0,
    "min_mbps": 0.0,
    "max_mbps": 1000.0,
}


def problems(**changes: Any) -> str:
    with pytest.raises(SettingsError) as caught:
        check_settings({**GOOD, **changes})
    return str(caught.value)


def test_good_settings_sorted() -> None:
    settings = check_settings(GOOD)
    assert settings == Settings((64, 512, 1518), 1500, 0.0, 0.5, 2, 1.0, 0.0, 1000.0)
    assert settings.as_dict()["frame_sizes"] == [64, 512, 1518]


def test_jumbo_frames_with_their_mtu() -> None:
    assert check_settings({**GOOD, "frame_sizes": [9018], "mtu": 9000}).frame_sizes == (9018,)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"loss_percent": -0.1}, "loss_percent (role variable rate_search_loss_percent) is -0.1: the loss a trial may"),
        ({"loss_percent": 100}, "from 0 (zero loss, the default) to below 100, for example 0.1"),
        ({"loss_percent": float("nan")}, "loss_percent (role variable rate_search_loss_percent) is nan"),
        ({"loss_percent": "0.1"}, "loss_percent (role variable rate_search_loss_percent) is '0.1'"),
        ({"resolution_mbps": 0}, "resolution_mbps (role variable rate_search_resolution_mbps) is 0: the search stops"),
        ({"resolution_mbps": -1}, "above 0 (for example 1 or 10)"),
        ({"resolution_mbps": 1000}, "resolution_mbps (role variable rate_search_resolution_mbps) (1000) must be below"),
        (
            {"frame_sizes": [64, 1519]},
            "frame_sizes (role variable rate_search_frame_sizes) item 2 is 1519: above the "
            "largest frame of the path, 1518 bytes (MTU 1500 + 18; UDP payload 1472)",
        ),
        ({"frame_sizes": [9018]}, "or raise mtu (role variable rate_search_mtu) when the path carries more"),
        ({"frame_sizes": [63]}, "item 1 is 63: the smallest Ethernet frame is 64 bytes (18 bytes of UDP payload)"),
        ({"frame_sizes": [64, 64]}, "item 2 is 64 again: list each frame size once"),
        ({"frame_sizes": [64.5]}, "item 1 is 64.5: a frame size is a whole number of bytes"),
        ({"frame_sizes": []}, "frame_sizes (role variable rate_search_frame_sizes) is []: give a list"),
        ({"frame_sizes": 1518}, "frame_sizes (role variable rate_search_frame_sizes) is 1518: give a list"),
        ({"mtu": 500}, "mtu (role variable rate_search_mtu) is 500: give the path's IPv4 MTU, an integer from 576"),
        ({"trial_seconds": 0}, "trial_seconds (role variable rate_search_trial_seconds) is 0: the length of one"),
        ({"trial_seconds": 3601}, "whole seconds from 1 to 3600"),
        ({"shortfall_percent": -1}, "shortfall_percent (role variable rate_search_shortfall_percent) is -1"),
        ({"min_mbps": -5}, "min_mbps (role variable rate_search_min_mbps) is -5: the lowest rate searched"),
        ({"max_mbps": 0}, "max_mbps (role variable rate_search_max_mbps) is 0: the highest rate searched"),
        ({"max_mbps": 4_000_000}, "at most 400000"),
        ({"max_mbps": None}, "max_mbps (role variable rate_search_max_mbps) is None"),
        (
            {"min_mbps": 100, "max_mbps": 50},
            "max_mbps (role variable rate_search_max_mbps) (50) must be above min_mbps",
        ),
        ({"max_mbps": True}, "max_mbps (role variable rate_search_max_mbps) is True"),
    ],
)
def test_each_bad_setting_is_named_with_the_fix(changes: dict[str, Any], expected: str) -> None:
    assert expected in problems(**changes)


def test_every_problem_at_once() -> None:
    text = problems(loss_percent=-1, resolution_mbps=0, frame_sizes=[64, 1600], trial_seconds=0)
    for name in ("loss_percent", "resolution_mbps", "frame_sizes", "trial_seconds"):
        assert f"{name} (role variable rate_search_{name})" in text
    assert text.count("; ") >= 3


def test_an_unknown_option_is_named_with_the_closest_one() -> None:
    valid = [*GOOD, "server", "port"]
    text = unknown_options(["frame_size", "loss_percent", "resolution"], valid)
    assert text is not None
    assert text.startswith("unknown option(s) frame_size (did you mean frame_sizes?), resolution (did you mean ")
    assert "resolution_mbps?)" in text and "the options are frame_sizes, loss_percent" in text
    assert unknown_options(["loss_percent", "_ansible_check_mode"], valid) is None


def test_the_plan_bounds_the_trials_and_the_servers_life() -> None:
    settings = check_settings({**GOOD, "min_mbps": 10.0, "max_mbps": 1034.0, "resolution_mbps": 1.0})
    doc = plan(settings)
    assert doc["trials_per_size"] == 1 + 10 + 1  # max, ceil(log2(1024)) halvings, min
    assert doc["max_trials"] == 36 and doc["max_seconds"] == 36 * (2 + 5)
    assert doc["server_timeout"] == doc["max_seconds"] + 60
    assert doc["frame_sizes"][0] == {"frame_size": 64, "payload_size": 18}


def test_frame_arithmetic() -> None:
    assert payload_of(64) == 18 and payload_of(1518) == 1472 and max_frame(9000) == 9018
    assert payload_bps(100.0, 1518) == round(100e6 * 1472 / 1518)
    assert packets_per_second(payload_bps(100.0, 1518), 1518) == pytest.approx(100e6 / (1518 * 8), rel=1e-8)
    assert frame_mbps(payload_bps(42.5, 64), 64) == pytest.approx(42.5, rel=1e-6)
    # 1 Gbit/s line rate at 64 B: 1 488 095 frames/s of 84 bytes on the wire
    assert pytest.approx(1488095.2, rel=1e-7) == 1e9 / ((64 + 20) * 8)
