# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lab/esxilab_lab.py --host-rate without building anything: validation, the shaping of each host, the tc
commands, the inventory and lab.json. Built for real in tests/integration/test_pair_labels.py (a pair on a
300 Mbit/s host beside one on 1 Gbit/s)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from tests.collection_path import REPO


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("esxilab_lab", REPO / "lab" / "esxilab_lab.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["esxilab_lab"] = module
    spec.loader.exec_module(module)
    return module


lab = _load()


def _spec(tmp_path: Path, *host_rate: str, **options: Any) -> Any:
    return lab.build_spec(
        name="lblunit", hosts=4, state_dir=tmp_path / "state", subnet="198.19.179.0/24", host_rate=host_rate, **options
    )


def test_a_host_rate_replaces_the_lab_rate_for_that_host_both_ways(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "h4=300mbit", rate="1gbit")
    rates = [(h.egress.rate_bps, h.ingress.rate_bps) for h in spec.hosts]
    assert rates == [(10**9, 10**9)] * 3 + [(300 * 10**6, 300 * 10**6)]
    h3, h4 = spec.hosts[2:]
    assert h4.egress.burst == lab.tbf_burst(300 * 10**6, 1500) != h3.egress.burst
    assert h4.egress.limit == lab.tbf_limit(300 * 10**6)
    commands = [" ".join(c) for c in lab.shaping_commands("lblunit-h4", "eth0", None, h4.egress)]
    assert any("tbf rate 300000000bit" in c for c in commands), commands
    assert not any("1000000000bit" in c for c in commands)


def test_without_rate_only_the_named_host_is_shaped(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "h2=100mbit")
    assert [h.egress.rate_bps for h in spec.hosts] == [None, 100 * 10**6, None, None]


def test_inventory_and_lab_json_say_the_host_rate(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "h4=300mbit", rate="1gbit")
    inventory = yaml.safe_load(lab.inventory_text(spec))["all"]["children"]["lab"]
    assert inventory["vars"]["lab_rate_bps"] == 10**9
    assert (inventory["hosts"]["h4"]["lab_rate"], inventory["hosts"]["h4"]["lab_rate_bps"]) == ("300mbit", 3 * 10**8)
    assert "lab_rate" not in inventory["hosts"]["h3"]
    # the line rate paired_test takes for each shaped host (a veth reports 10000 Mb/s whatever the shaping)
    speeds = {name: host.get("paired_test_link_speed_mbps") for name, host in inventory["hosts"].items()}
    assert speeds == {"h1": 1000.0, "h2": 1000.0, "h3": 1000.0, "h4": 300.0}
    unshaped = yaml.safe_load(lab.inventory_text(_spec(tmp_path, "h2=100mbit")))["all"]["children"]["lab"]
    assert {name: host.get("paired_test_link_speed_mbps") for name, host in unshaped["hosts"].items()} == {
        "h1": None,
        "h2": 100.0,
        "h3": None,
        "h4": None,
    }
    assert lab.state_doc(spec)["options"]["host_rate"] == ["h4=300mbit"]
    assert "host_rate" not in lab.state_doc(_spec(tmp_path, rate="1gbit"))["options"]  # other labs: as before


@pytest.mark.parametrize(
    ("items", "options", "message"),
    [
        (("h4:300mbit",), {}, "--host-rate 'h4:300mbit': use HOST=RATE, e.g. h4=300mbit"),
        (("h9=300mbit",), {}, "--host-rate 'h9=300mbit': the lab has only h1..h4"),
        (("h2=fast",), {}, "rate 'fast': use a tc rate such as 100mbit, 1gbit, 500kbit"),
        (("h2=200mbit",), {"rate": "1gbit", "flow_rate": "300mbit"}, "must be above --flow-rate 300mbit"),
    ],
)
def test_bad_host_rates_are_refused(tmp_path: Path, items: tuple[str, ...], options: Any, message: str) -> None:
    with pytest.raises(lab.LabError) as caught:
        _spec(tmp_path, *items, **options)
    assert message in str(caught.value)
