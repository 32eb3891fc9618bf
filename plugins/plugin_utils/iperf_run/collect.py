# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""External peers: wait for clients outside the inventory, read what the server measured.

``mode=collect`` serves a test whose clients are not in the inventory (a Windows box with
``iperf3.exe``, an appliance): the server this module started on ``port`` runs; the flow reads
its log every :data:`POLL` seconds (one short session each) until ``clients`` client tests have
ended there, the server has exited (iperf3 ``--one-off``) or ``deadline`` seconds have passed;
then it stops the server (the stop flow's own checks) and parses the server's final log.

The log is split into one piece per client test by the parsers' own splitter
(``iperf.parse.split_tests``: iperf3 at its ``Server listening`` banners, iperf2 at a new inbound
connection after the last test's totals; iperf2 clients that ran at the same time from several addresses
apart by ``iperf2_text.split_iperf2_by_peer``) and each piece is parsed by ``iperf.parse``: the result
is the server's (``side: server``), its raw piece kept beside it. A figure comes only from that
output; a client that did not come is counted as missing, never filled in.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import Execute
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.framing import first, parse_kv
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import detect, parse_result, split_tests
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.result import IperfParseError, Result, plain
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.common import (
    IperfRunError,
    marker,
    parse_sections,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.state import (
    ENDED,
    ISOURS,
    PIDFILE_FIELDS,
    cmdline_function,
    private_dir_of,
    raise_state_error,
    state_snippet,
    state_stem,
)

__all__ = [
    "POLL",
    "LogTail",
    "ServerTest",
    "Waited",
    "build_poll_script",
    "collect_summary",
    "server_tests",
    "task_tests",
    "wait_for_clients",
]

#: Seconds between two reads of the server's log while waiting for the external clients.
POLL = 1.0


@dataclass(frozen=True)
class ServerTest:
    """One client test in a server's log: the peer it came from, whether it has ended, the server's result."""

    index: int  # 1-based, in the order the server logged them
    group: int  # 1-based: the server's test it was part of (iperf2 clients at the same time share one)
    peer: str | None  # the client's address as the server printed it (IPv4-mapped IPv6 unwrapped)
    ended: bool  # the server logged the test's end (a later banner or test, its totals, or the server is gone)
    counted: bool  # it came from the expected peer (always true without one)
    result: Result


def _address(text: Any) -> str | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return text
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.compressed
    return address.compressed


def server_tests(log: str, *, exited: bool, peer: str | None = None) -> list[ServerTest]:
    """The client tests of a server's log, oldest first; pieces without a client (a banner, an error
    before any connection) are left out.

    A test has *ended* when another piece follows it (iperf3 prints its banner again after each
    test), when its result is complete (the server printed the totals), or when the server is no
    longer running (``exited``: one-off, stopped). ``peer`` (an address): a test from another
    address is not *counted* (it is still returned, so the caller can name it).
    """
    if not log.strip():
        return []
    try:
        pieces = split_tests(log)
    except IperfParseError:
        return []
    expected = _address(peer)
    tests: list[ServerTest] = []
    # iperf2 clients that ran at the same time share one test of the server's log: one piece per address
    split = [(position, part) for position, piece in enumerate(pieces) for part in _by_peer(piece)]
    for position, piece in split:
        try:
            result = parse_result(piece, keep_raw=True)
        except IperfParseError:
            continue
        remote = result.get("remote")
        address = _address(remote.get("host") if remote else None)
        if address is None:
            continue
        result["raw"] = piece
        ended = exited or position < len(pieces) - 1 or bool(result.get("complete"))
        tests.append(
            ServerTest(
                index=len(tests) + 1,
                group=position + 1,
                peer=address,
                ended=ended,
                counted=expected is None or address == expected,
                result=plain(result),
            )
        )
    return tests


def _by_peer(piece: str) -> list[str]:
    try:
        tool, _kind = detect(piece)
    except IperfParseError:
        return [piece]
    if tool != "iperf2":
        return [piece]
    # imported with the iperf2 parser, when an iperf2 log needs it (iperf.parse)
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf2_text import split_iperf2_by_peer

    return split_iperf2_by_peer(piece)


def build_poll_script(token: str, *, state_dir: str, port: int, bind: str | None, offset: int = 0) -> str:
    """Read-only: whether the server of ``port`` (its pidfile in the private directory) still runs, and the bytes
    its log gained since ``offset``.

    Prints ``state ...``, ``poll alive=0|1 pidfile=0|1 log=0|1 size=<bytes> from=<offset>`` and the log's bytes
    ``from`` .. ``size`` (only when it is a regular file of the private directory; never through a link).
    ``from`` is 0 when the log is shorter than ``offset`` (a new log: read again from its start). ``alive``
    needs the pidfile's pid to run the pidfile's binary with ``-s -p <port>`` (the stop's ``_isours`` check) and
    not be a zombie. ``tail -c +N | head -c M`` reads only the new bytes (busybox has both); ``dd`` where
    ``head -c`` is missing.
    """
    stem = state_stem(port, bind)
    return "\n".join(
        [
            state_snippet(token, state_dir, create=False),
            'if [ "$_st" != ok ]; then ' + marker(token, "done") + "; exit 0; fi",
            f'_pf="$_pd/{stem}.pid"; _lf="$_pd/{stem}.log"; _al=0; _hp=0; _hl=0; _sz=0; _of={int(offset)}',
            cmdline_function(),
            ISOURS,
            PIDFILE_FIELDS,
            ENDED,
            'if [ -f "$_pf" ] && [ ! -L "$_pf" ]; then',
            "  _hp=1",
            '  _pidf "$_pf"; _op=$_fp; _ob=$_fb',
            f'  if [ -n "$_op" ] && kill -0 "$_op" 2>/dev/null && _isours "$_op" "$_ob" {int(port)}; then _al=1; fi',
            '  if [ "$_al" = 1 ] && [ -r "/proc/$_op/stat" ]; then',
            '    if _ended "$_op"; then _al=0; fi',
            "  fi",
            "fi",
            'if [ -f "$_lf" ] && [ ! -L "$_lf" ]; then _hl=1; _sz=$(wc -c <"$_lf" | tr -d \' \'); fi',
            "case $_sz in ''|*[!0-9]*) _sz=0 ;; esac",
            'if [ "$_sz" -lt "$_of" ]; then _of=0; fi',
            marker(token, "poll", "alive=$_al pidfile=$_hp log=$_hl size=$_sz from=$_of"),
            'if [ "$_sz" -gt "$_of" ]; then',
            "  if printf ab | head -c 1 >/dev/null 2>&1; then",
            '    tail -c +$(( _of + 1 )) "$_lf" 2>/dev/null | head -c $(( _sz - _of ))',
            '  else dd if="$_lf" bs=1 skip="$_of" count=$(( _sz - _of )) 2>/dev/null; fi',
            "fi",
            marker(token, "done"),
        ]
    )


# iperf3's banner: it prints it again right after each test (with --forceflush at once), so each test that ended
# is followed by one. iperf2 prints its banner once; each of its tests ends with totals - lines of an interval
# from 0 (per stream, and [SUM]). A test that ends adds at least one such line; the wait counts them on the new
# bytes only, and parses the whole log only when enough came to make up the tests still missing.
_IPERF3_CONTROL_RE = re.compile(r"Accepted connection from ")
_BANNER_RE = re.compile(r"Server listening")
_FROM_ZERO_RE = re.compile(r"^\[\s*(?:SUM|[0-9]+)\]\s+0\.0+\s*-\s*[0-9]")


class LogTail:
    """A server's log read piece by piece: the bytes so far, and a count of the lines that may end a test.

    Each poll feeds only the bytes the log gained (:func:`build_poll_script` reads from the offset), so a poll
    costs O(new bytes). The whole log is parsed by the one parser (:func:`server_tests`) only when enough lines
    that may end a test came since the last parse to make up the tests still missing then (``due``): every test
    that ends adds at least one (iperf3: its next banner; iperf2: its totals), so no end is missed, and the
    parses are few (one or two for one client, whatever the log's length).
    """

    def __init__(self) -> None:
        self.parses = 0
        self.reset()

    def reset(self) -> None:
        """Forget what was read (a new log - the server was started again: read from its start)."""
        self.offset = 0  # bytes of the log read so far (the host's count)
        self._chunks: list[str] = []
        self._partial = ""  # the last line, not ended yet
        self._iperf3 = False  # an iperf3 server's log (its control connections are logged)
        self.ends = 0  # lines that may end a test
        self._ends_parsed = 0  # ... at the last parse
        self._came_parsed = 0  # counted tests that had ended at the last parse

    def feed(self, chunk: str, size: int) -> None:
        self.offset = size
        if not chunk:
            return
        self._chunks.append(chunk)
        *lines, self._partial = (self._partial + chunk).split("\n")
        for line in lines:
            if _IPERF3_CONTROL_RE.search(line):
                self._iperf3 = True
            elif _BANNER_RE.search(line) or (not self._iperf3 and _FROM_ZERO_RE.match(line.strip())):
                self.ends += 1

    def due(self, clients: int) -> bool:
        """Whether a parse can find ``clients`` ended tests (enough lines that may end one came since the last)."""
        return self.ends - self._ends_parsed >= clients - self._came_parsed

    @property
    def text(self) -> str:
        if len(self._chunks) > 1:
            self._chunks = ["".join(self._chunks)]
        return self._chunks[0] if self._chunks else ""

    def came(self, *, exited: bool, peer: str | None) -> int:
        """The counted tests that have ended, from a parse of the whole log."""
        self.parses += 1
        came = sum(t.counted and t.ended for t in server_tests(self.text, exited=exited, peer=peer))
        self._ends_parsed, self._came_parsed = self.ends, came
        return came


@dataclass(frozen=True)
class Waited:
    """How the wait ended."""

    log: str
    alive: bool
    reason: str  # all_came | server_exited | deadline
    waited: float
    polls: int
    parses: int = 0  # how often the whole log was parsed while waiting


def _never_started(port: int, bind: str | None, where: str) -> IperfRunError:
    at = f"port {port}" + (f" bound to {bind}" if bind else "")
    return IperfRunError(
        f"mode=collect found no server of ours for {at} on this host (no pidfile and no log of it in {where}): "
        f"nothing was started there to collect from. Start one first with an esxilab.iperf.iperf_run task mode=server "
        f"port={port}{f' bind={bind}' if bind else ''} (same state_dir), then run mode=collect with the same port"
        f"{' and bind' if bind else ''} (the role esxilab.iperf.paired_test does both for a pair with external: "
        "{count, deadline})",
        {"error_kind": "no_server"},
    )


def wait_for_clients(
    execute: Execute,
    *,
    token: str,
    state_dir: str,
    port: int,
    bind: str | None,
    clients: int,
    deadline: float,
    peer: str | None,
    now: Callable[[], float],
    sleep: Callable[[float], None],
    poll: float = POLL,
) -> Waited:
    """Read the server's log every ``poll`` s until ``clients`` counted tests have ended, the server is
    gone or ``deadline`` s have passed (the last read is at the deadline at the latest).

    Each read fetches only the bytes the log gained (:class:`LogTail`). A first read that finds neither
    the server's pidfile nor its log (or no private directory at all) is an error: no server of ours was
    started on that port, so there is nothing to wait for (``error_kind: no_server``).
    """
    start = now()
    end = start + deadline
    polls = 0
    tail = LogTail()
    while True:
        out = execute(build_poll_script(token, state_dir=state_dir, port=port, bind=bind, offset=tail.offset))
        polls += 1
        sections = parse_sections(out.stdout, token)
        state = first(sections, "state")
        raise_state_error(state, state_dir)
        section = first(sections, "poll")
        kv = parse_kv(section.args) if section is not None else {}
        if polls == 1 and kv.get("pidfile") != "1" and kv.get("log") != "1":
            raise _never_started(port, bind, private_dir_of(state, state_dir))
        alive = kv.get("alive") == "1"
        if section is not None:
            if kv.get("from") == "0" and tail.offset:
                tail.reset()
            size = kv.get("size", "")
            tail.feed(section.text, int(size) if size.isdigit() else tail.offset + len(section.text))
        reason = None
        if not alive:
            reason = "all_came" if tail.came(exited=True, peer=peer) >= clients else "server_exited"
        elif tail.due(clients) and tail.came(exited=False, peer=peer) >= clients:
            reason = "all_came"
        if reason is None and now() >= end:
            reason = "deadline"
        if reason is not None:
            return Waited(
                log=tail.text, alive=alive, reason=reason, waited=round(now() - start, 3), polls=polls,
                parses=tail.parses,
            )  # fmt: skip
        sleep(max(0.0, min(poll, end - now())))


def collect_summary(
    tests: Sequence[ServerTest], *, clients: int, deadline: float, reason: str, peer: str | None
) -> tuple[int, list[str]]:
    """How many counted tests came, and the warnings to give (fewer than asked, others, cut tests)."""
    counted = [t for t in tests if t.counted]
    warnings: list[str] = []
    if len(counted) < clients:
        why = {
            "deadline": f"within the deadline of {deadline:g} s",
            "server_exited": "before the server exited",
            "all_came": "",
        }[reason]
        warnings.append(
            f"{len(counted)} of {clients} external client test(s) came {why}; "
            + ("the results are those of the clients that came" if counted else "there is no result")
            + " (none is filled in)"
        )
    if len(counted) > clients:
        warnings.append(
            f"{len(counted)} client tests came, {clients} were expected; all are returned (results beyond the first "
            f"{clients} are marked extra)"
        )
    for test in tests:
        if not test.counted:
            warnings.append(
                f"client test {test.index} came from {test.peer}, not from the expected peer {peer}: not counted"
            )
        elif not test.ended:
            warnings.append(
                f"client test {test.index} from {test.peer} was still running when the wait ended: cut short "
                "by the stop (its result is incomplete)"
            )
    return len(counted), warnings


def task_tests(tests: Sequence[ServerTest], clients: int, labels: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``tests`` of the task result: per client test its peer, whether it counted, ended, and the server's result."""
    entries = []
    position = 0
    for test in tests:
        result = dict(test.result)
        if labels:
            result["labels"] = dict(labels)
        if test.counted:
            position += 1
        entries.append(
            {
                "index": test.index,
                "group": test.group,
                "peer": test.peer,
                "counted": test.counted,
                "extra": test.counted and position > clients,
                "ended": test.ended,
                "result": result,
            }
        )
    return entries
