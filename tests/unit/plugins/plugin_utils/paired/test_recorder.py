# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The spool where a run's stop results meet, and the reports the record is built from."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired import recorder

RUN: dict[str, Any] = {
    "run": 4,
    "server_hosts": ["h1", "h2"],
    "client_hosts": ["h3"],
    "nic_after": True,
    "nic_addresses": {"h4": ["198.18.0.4"]},
    "pairs": [
        {"pair": 1, "server": "h1", "client": "h3", "external_server": None},
        {"pair": 2, "server": "h2", "client": "h3", "external_server": None},
    ],
}


def test_the_stop_hosts_are_the_servers_and_the_nic_readers_after() -> None:
    assert recorder.stop_hosts(RUN) == ["h1", "h2", "h4"]
    assert recorder.run_hosts(RUN) == ["h1", "h2", "h3", "h4"]
    assert recorder.stop_hosts({**RUN, "nic_after": False}) == ["h1", "h2"]


def test_pieces_meet_in_the_spool_and_are_removed_once_the_run_is_recorded(tmp_path: Path) -> None:
    spool = recorder.make_spool(str(tmp_path))
    assert os.stat(spool).st_mode & 0o777 == 0o700
    recorder.write_piece(spool, 4, "h1", {"stops": {"results": [1]}})
    recorder.write_piece(spool, 4, "h2", {"stops": {"results": [2]}})
    recorder.write_piece(spool, 4, "h3", {"ready_at": 5.0}, kind="start")
    recorder.write_piece(spool, 5, "h4", {"stops": {"results": [5]}})  # another run's: not read for run 4
    found = recorder.wait_pieces(spool, 4, ["h1", "h2"], seconds=0)
    assert found == {"h1": {"stops": {"results": [1]}}, "h2": {"stops": {"results": [2]}}}
    assert recorder.read_pieces(spool, 4, ["h1", "h3"], "start") == {"h3": {"ready_at": 5.0}}
    recorder.remove_pieces(spool, 4, ["h1", "h2", "h3"])
    assert len(os.listdir(spool)) == 1  # run 5's piece is left for run 5
    with pytest.raises(ValueError, match="kind must be one of start, clients, stop"):
        recorder.write_piece(spool, 4, "h1", {}, kind="other")


def test_a_piece_that_does_not_come_is_left_out_after_the_wait(tmp_path: Path) -> None:
    spool = recorder.make_spool(str(tmp_path))
    recorder.write_piece(spool, 4, "h1", {"stops": {"results": []}})
    now = [0.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    found = recorder.wait_pieces(spool, 4, ["h1", "h2"], seconds=1.0, clock=lambda: now[0], sleep=sleep)
    assert list(found) == ["h1"]
    assert 1.0 <= now[0] < 1.1 and len(slept) > 50  # polled until the deadline, not one long sleep


def test_a_spool_that_is_not_private_or_a_link_is_refused(tmp_path: Path) -> None:
    spool = recorder.make_spool(str(tmp_path))
    os.chmod(spool, 0o777)
    with pytest.raises(recorder.SpoolError, match="not a private directory"):
        recorder.write_piece(spool, 1, "h1", {})
    os.chmod(spool, 0o700)
    link = tmp_path / "link"
    link.symlink_to(spool)
    with pytest.raises(recorder.SpoolError, match="not a private directory"):
        recorder.wait_pieces(str(link), 1, ["h1"], seconds=0)


def test_a_planted_link_or_a_forged_piece_is_not_read(tmp_path: Path) -> None:
    spool = recorder.make_spool(str(tmp_path))
    recorder.write_piece(spool, 4, "h1", {"stops": 1})
    (path,) = (Path(spool) / name for name in os.listdir(spool))
    other = tmp_path / "elsewhere.json"
    path.rename(other)
    path.symlink_to(other)
    assert recorder.wait_pieces(spool, 4, ["h1"], seconds=0) == {}
    path.unlink()
    path.write_text('{"host": "h2", "run": 4, "piece": {"stops": 2}}')  # h2's content under h1's name
    assert recorder.wait_pieces(spool, 4, ["h1"], seconds=0) == {}


def test_reports_take_the_pieces_and_say_what_is_missing() -> None:
    pieces: dict[str, dict[str, dict[str, Any]]] = {
        "start": {"h1": {"servers": {"results": ["s1"]}, "nic_before": None}, "h3": {"servers": {"results": []}}},
        "clients": {"h3": {"clients": {"results": ["c"]}, "collects": {"results": []}}},
        "stop": {"h1": {"stops": {"results": ["stop1"]}, "nic_after": None}},
    }
    failures = {"h2": {"run": 4, "task": "start", "msg": "no shell"}}
    reports = recorder.reports(RUN, pieces, failures.get, "no stop result came")
    by_host = {str(r["host"]): r for r in reports}
    assert sorted(by_host) == ["h1", "h2", "h3", "h4"]
    assert by_host["h1"]["servers"] == {"results": ["s1"]} and by_host["h1"]["stops"] == {"results": ["stop1"]}
    assert by_host["h3"]["clients"] == {"results": ["c"]} and by_host["h3"]["failure"] is None
    assert by_host["h3"]["stops"] is None  # a client only: no stop
    # h2 wrote no start piece: what its rescue saw; it served pair 2 and gave no stop piece either
    assert by_host["h2"]["failure"] == failures["h2"]
    assert by_host["h2"]["stops"] == {
        "results": [{"item": RUN["pairs"][1], "failed": True, "msg": "no stop result came"}]
    }
    assert by_host["h4"]["nic_after"] == {"failed": True, "msg": "no stop result came"}


def test_the_state_of_the_series_skips_runs_and_keeps_what_the_start_delay_learns(tmp_path: Path) -> None:
    spool = recorder.make_spool(str(tmp_path))
    state = recorder.read_state(spool)
    assert state == recorder.new_state()
    run = {"run": 5, "point": "p1", "stability": {"min": 2}}
    assert recorder.skip_reason(state, run) is None
    record = {"run": 4, "point": "p1", "stability": {"done": True}, "dispatch_time": 0.8, "pairs": [{"client": "h2"}]}
    state = recorder.next_state(state, record, halt=False)
    recorder.write_state(spool, state)
    state = recorder.read_state(spool)
    assert state["dispatch"] == [{"run": 4, "dispatch_time": 0.8, "pairs": [{"client": "h2"}]}]
    assert recorder.skip_reason(state, run) == "not run: its point is done (repeat: stable, or given up)"
    assert recorder.skip_reason(state, {"run": 6, "point": "p2", "stability": {"min": 2}}) is None
    state = recorder.next_state(state, {"run": 6, "ok": False}, halt=True)
    assert recorder.skip_reason(state, {"run": 7}) == "not run: the series stopped after run 6 failed"


def test_the_clients_start_when_the_last_host_was_ready_plus_the_delay() -> None:
    assert recorder.start_at({"h1": {"ready_at": 100.25}, "h2": {"ready_at": 101.5}, "h3": {}}, 1.25, 0.0) == 102.75
    assert recorder.start_at({}, 1.0, 50.0) == 51.0  # no start piece: from now


@pytest.mark.parametrize(
    ("record", "continue_on_error", "halts"),
    [
        ({"ok": True}, False, False),
        ({"ok": False}, False, True),
        ({"ok": False}, True, False),
        ({"ok": False, "stability": {"tolerated": True}}, False, False),
    ],
)
def test_a_failed_run_halts_the_series_unless_told_or_tolerated(
    record: dict[str, Any], continue_on_error: bool, halts: bool
) -> None:
    assert recorder.halts(record, continue_on_error) is halts


def test_the_records_so_far_are_the_keepers_fact() -> None:
    assert recorder.recorded({"__paired_test_recorded": [{"run": 1}]}) == [{"run": 1}]
    assert recorder.recorded({}) == [] and recorder.recorded(None) == []
