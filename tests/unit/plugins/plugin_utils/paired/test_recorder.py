# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The spool where the records and the state of the series are kept, and the reports a record is built from."""

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


def test_the_records_are_kept_one_file_per_run_and_read_in_run_order(tmp_path: Path) -> None:
    spool = recorder.make_spool(str(tmp_path))
    assert os.stat(spool).st_mode & 0o777 == 0o700
    assert recorder.read_records(spool) == []
    for number in (2, 10, 1):
        recorder.write_record(spool, {"run": number, "ok": True})
    assert [r["run"] for r in recorder.read_records(spool)] == [1, 2, 10]  # numbers, not names, give the order


def test_a_spool_that_is_not_private_or_a_link_is_refused(tmp_path: Path) -> None:
    spool = recorder.make_spool(str(tmp_path))
    os.chmod(spool, 0o777)
    with pytest.raises(recorder.SpoolError, match="not a private directory"):
        recorder.write_record(spool, {"run": 1})
    os.chmod(spool, 0o700)
    link = tmp_path / "link"
    link.symlink_to(spool)
    with pytest.raises(recorder.SpoolError, match="not a private directory"):
        recorder.read_records(str(link))


def test_a_planted_link_or_a_forged_record_is_not_read(tmp_path: Path) -> None:
    spool = recorder.make_spool(str(tmp_path))
    recorder.write_record(spool, {"run": 4})
    path = Path(spool) / "record4.json"
    other = tmp_path / "elsewhere.json"
    path.rename(other)
    path.symlink_to(other)
    assert recorder.read_records(spool) == []
    path.unlink()
    path.write_text('{"run": 5}')  # run 5's content under run 4's name
    (Path(spool) / "record6.json.part").write_text('{"run": 6}')  # not a record's name
    assert recorder.read_records(spool) == []


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
    ready = recorder.ready_times({"h1": {"ready_at": 100.25}, "h2": {"ready_at": 101.5}, "h3": {}})
    assert ready == [100.25, 101.5] and recorder.start_at(ready, 1.25, 0.0) == 102.75
    assert recorder.start_at([], 1.0, 50.0) == 51.0  # no start piece: from now


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
