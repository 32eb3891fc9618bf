# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Host CPU on Linux: ``/proc/stat`` parsed, the busy share between two readings, and every case where a figure
cannot be given honestly (a counter that went backwards, CPUs that came or went, no time between the readings)."""

from __future__ import annotations

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.cpu.proc_stat import (
    CpuDelta,
    ProcStatError,
    cpu_delta,
    parse_proc_stat,
    parse_uptime,
)

# Read on the 2-CPU CI machine (kernel 6.1): the cpu lines of /proc/stat and one line after them.
BEFORE = """cpu  4686823 228 1793367 3934008 11798 0 264903 2842 0 0
cpu0 2338705 142 896674 1971510 6876 0 131595 1420 0 0
cpu1 2348118 85 896693 1962498 4922 0 133307 1421 0 0
intr 558406438 0 0 0
"""


def _after(cpu0: tuple[int, int], cpu1: tuple[int, int]) -> str:
    """BEFORE plus ``(busy ticks in user, idle ticks)`` per CPU; the ``cpu`` line their sum."""
    rows = {name: list(counters) for name, counters in parse_proc_stat(BEFORE).items()}
    for name, (busy, idle) in (("cpu0", cpu0), ("cpu1", cpu1)):
        for row in (rows[name], rows["cpu"]):
            row[0] += busy
            row[3] += idle
    return "".join(f"{name} {' '.join(map(str, rows[name]))}\n" for name in ("cpu", "cpu0", "cpu1"))


def test_parse_keeps_the_host_line_and_each_cpu() -> None:
    parsed = parse_proc_stat(BEFORE)
    assert sorted(parsed) == ["cpu", "cpu0", "cpu1"]
    assert parsed["cpu"] == (4686823, 228, 1793367, 3934008, 11798, 0, 264903, 2842, 0, 0)


def test_the_mean_is_the_host_line_and_the_max_core_the_busiest_cpu() -> None:
    # cpu0 busy 90 of 100 ticks, cpu1 busy 10 of 100: the host 50 %, the busiest core cpu0 at 90 %
    delta = cpu_delta(parse_proc_stat(BEFORE), parse_proc_stat(_after((90, 10), (10, 90))))
    assert delta == CpuDelta(50.0, 90.0, "cpu0", 2, None)


def test_guest_time_is_not_counted_twice_and_iowait_is_idle() -> None:
    before = {"cpu": (100, 0, 0, 100, 0, 0, 0, 0, 0, 0), "cpu0": (100, 0, 0, 100, 0, 0, 0, 0, 0, 0)}
    # 50 ticks of user, 40 of them a guest's (inside user), 30 of iowait, 20 idle: busy 50 of 100
    after = {"cpu": (150, 0, 0, 120, 30, 0, 0, 0, 40, 0), "cpu0": (150, 0, 0, 120, 30, 0, 0, 0, 40, 0)}
    assert cpu_delta(before, after) == CpuDelta(50.0, 50.0, "cpu0", 1, None)


def test_an_old_kernel_with_four_counters_is_read() -> None:
    before = parse_proc_stat("cpu 10 0 10 80\ncpu0 10 0 10 80\n")
    after = parse_proc_stat("cpu 30 0 20 150\ncpu0 30 0 20 150\n")
    assert cpu_delta(before, after) == CpuDelta(30.0, 30.0, "cpu0", 1, None)


def test_a_counter_that_went_backwards_gives_no_figure() -> None:
    """A wrapped counter (or a restarted host) is never turned into a figure."""
    after = _after((10, 10), (10, 10)).replace("cpu1 2348128", "cpu1 5")
    delta = cpu_delta(parse_proc_stat(BEFORE), parse_proc_stat(after))
    assert delta.mean_percent == 50.0  # the host line itself went forward
    assert (delta.max_core_percent, delta.max_core) == (None, None)
    assert delta.reason == "cpu1: a counter went backwards (a counter wrapped, or the host restarted)"
    wrapped = cpu_delta(parse_proc_stat(_after((10, 10), (10, 10))), parse_proc_stat(BEFORE))
    assert wrapped.mean_percent is None and wrapped.reason is not None
    assert wrapped.reason.startswith("cpu: a counter went backwards")


@pytest.mark.parametrize(
    ("after", "said"),
    [
        ("cpu  1 1 1 1\ncpu0 1 1 1 1\n", "cpu1 only in the first reading"),
        (BEFORE + "cpu2 1 1 1 1 1 1 1 1 0 0\n", "cpu2 only in the second"),
        ("cpu  1 1 1 1\ncpu0 1 1 1 1\ncpu2 1 1 1 1\n", "cpu1 only in the first reading; cpu2 only in the second"),
    ],
)
def test_cpus_that_came_or_went_between_the_readings_give_no_figure(after: str, said: str) -> None:
    """Hotplug: the host line then sums another set of CPUs, so neither the mean nor the max core is given."""
    delta = cpu_delta(parse_proc_stat(BEFORE), parse_proc_stat(after))
    assert delta == CpuDelta(None, None, None, None, f"the set of CPUs changed between the readings (hotplug): {said}")


def test_no_time_between_the_readings_and_a_different_layout_give_no_figure() -> None:
    same = parse_proc_stat(BEFORE)
    assert cpu_delta(same, same).reason == "cpu: no CPU time passed between the readings"
    shorter = parse_proc_stat("cpu 1 1 1 1\ncpu0 1 1 1 1\ncpu1 1 1 1 1\n")
    assert cpu_delta(same, shorter).reason == "cpu: the number of counters changed (10 -> 4)"


def test_only_the_host_line_gives_the_mean_and_no_max_core() -> None:
    delta = cpu_delta(parse_proc_stat("cpu 10 0 0 10\n"), parse_proc_stat("cpu 20 0 0 20\n"))
    assert delta == CpuDelta(50.0, None, None, None, "/proc/stat printed no per-CPU line (cpuN)")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no 'cpu' line: this is not /proc/stat"),
        ("intr 1 2 3\n", "no 'cpu' line: this is not /proc/stat"),
        ("cpu 1 2\n", "cpu has 2 counters, /proc/stat prints at least 4"),
        ("cpu 1 2 x 4\n", "a cpu line of /proc/stat is not counters: 'cpu 1 2 x 4'"),
    ],
)
def test_text_that_is_not_proc_stat_is_refused(text: str, message: str) -> None:
    with pytest.raises(ProcStatError, match=f"^{message}$"):
        parse_proc_stat(text)


def test_uptime() -> None:
    assert parse_uptime("53649.16 39340.08\n") == 53649.16
    with pytest.raises(ProcStatError, match="does not start with the seconds since boot"):
        parse_uptime("cat: /proc/uptime: No such file or directory")
