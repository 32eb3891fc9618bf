# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lab/nslab/shaping.py without building anything: the tc commands of --flow-rate and --host-rate, and
reading the htb layout back (idempotence). Built and measured for real in
tests/integration/test_lab.py::test_flow_rate_limits_each_flow_and_streams_add_up_to_the_link and
tests/integration/test_pair_labels.py (a pair on a 300 Mbit/s host beside one on 1 Gbit/s).
"""

from __future__ import annotations

from pathlib import Path

from lab.nslab import shaping
from lab.nslab.shaping import Shaping
from tests.unit.lab.nslab._specs import flow_spec, rate_spec


def _class_show(commands: list[list[str]]) -> str:
    """What ``tc class show`` prints for the classes the commands add (iproute2 6.1 text format)."""
    lines = []
    for argv in commands:
        if "class" not in argv:
            continue
        words = argv[argv.index("classid") + 1 :]
        opts = dict(zip(words[2::2], words[3::2], strict=False))
        rate, ceil = (int(opts[k].removesuffix("bit")) // 1_000_000 for k in ("rate", "ceil"))
        parent = argv[argv.index("parent") + 1]
        lines.append(
            f"class htb {words[0]} parent {parent} prio 0 rate {rate}Mbit ceil {ceil}Mbit"
            f" burst {opts['burst']}b cburst {opts['cburst']}b "
        )
    return "\n".join(lines) + "\n"


def test_the_htb_layout_is_built_and_read_back(tmp_path: Path) -> None:
    desired = flow_spec(tmp_path, rate="1gbit", flow_rate="300mbit").hosts[0].egress
    commands = shaping.shaping_commands("fu3unit-h1", "eth0", Shaping(), desired)
    flat = [" ".join(c) for c in commands]
    assert flat[0] == "tc -n fu3unit-h1 qdisc add dev eth0 root handle 1: htb default 2"
    assert sum(" class add " in c for c in flat) == 2 + shaping.FLOW_CLASSES
    assert sum(" flowid 1:" in c for c in flat) == shaping.FLOW_CLASSES
    assert any("hashkey mask 0x007e0000 at 20 link 2:" in c for c in flat)
    # what tc prints for that layout is read back as the desired shaping: a second `up` changes nothing
    current = shaping.observe_shaping(
        [{"kind": "htb", "handle": "1:", "root": True}], shaping.parse_htb_classes(_class_show(commands))
    )
    assert current is not None and current.flow_rate_bps == 300_000_000
    assert shaping.shaping_matches(current, desired)
    assert not shaping.shaping_matches(current, flow_spec(tmp_path, rate="1gbit", flow_rate="200mbit").hosts[0].egress)
    assert not shaping.shaping_matches(current, flow_spec(tmp_path, rate="1gbit").hosts[0].egress)
    assert "64 flow classes of 300mbit" in current.describe()


def test_an_htb_root_that_is_not_ours_is_foreign() -> None:
    classes = shaping.parse_htb_classes("class htb 1:1 root prio 0 rate 1Gbit ceil 1Gbit burst 1600b cburst 1600b \n")
    assert shaping.observe_shaping([{"kind": "htb", "handle": "1:", "root": True}], classes) is None


def test_a_host_rate_replaces_the_lab_rate_for_that_host_both_ways(tmp_path: Path) -> None:
    spec = rate_spec(tmp_path, "h4=300mbit", rate="1gbit")
    rates = [(h.egress.rate_bps, h.ingress.rate_bps) for h in spec.hosts]
    assert rates == [(10**9, 10**9)] * 3 + [(300 * 10**6, 300 * 10**6)]
    h3, h4 = spec.hosts[2:]
    assert h4.egress.burst == shaping.tbf_burst(300 * 10**6, 1500) != h3.egress.burst
    assert h4.egress.limit == shaping.tbf_limit(300 * 10**6)
    commands = [" ".join(c) for c in shaping.shaping_commands("lblunit-h4", "eth0", None, h4.egress)]
    assert any("tbf rate 300000000bit" in c for c in commands), commands
    assert not any("1000000000bit" in c for c in commands)
