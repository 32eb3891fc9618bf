# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The normalized iperf result (schema_version 1) and helpers every parser shares.

The contract is ``docs/schema/iperf-result.schema.json``; its type is ``IperfResult``
(``iperf/records.py``), which ``new_result()`` returns and every parser fills. In short:

* rates are bit/s (1000-based), byte counts are bytes, times are seconds;
* a figure the source output does not carry is ``None`` -- never guessed;
* ``sent`` holds the sender side's totals, ``received`` the receiver side's. With ``-R`` the
  server sends, so ``sent`` holds the server's figures as reported to the client;
* ``bits_per_second`` (the headline) is ``received`` when usable, else ``sent``, else ``None``.
  For UDP the receiver's total is what was delivered: when only the sender's exists the
  headline is the sender's and a warning says so.

Conventions beyond the schema (extra keys are allowed by it):

* ``reverse_sent`` / ``reverse_received`` -- for ``--bidir`` runs, the totals of the
  server-to-client direction; ``sent``/``received`` then describe client-to-server;
* ``raw`` -- the text that was parsed, kept when parsing failed or when asked for;
* ``server_output`` -- the server's own result embedded by ``--get-server-output``;
* ``labels`` -- what the caller gave ``iperf_run`` / ``iperf_parse`` / ``iperf_facts``; in the
  ``paired_test`` role the pair's labels (the test's, the pair's own over them, the run's identity
  and line rate), the same as its ``PairRecord``'s ``labels``.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from typing import Any, cast

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import Format, IperfResult, Tool, Totals

__all__ = [
    "SCHEMA_VERSION",
    "IperfParseError",
    "IperfResult",
    "Result",
    "SpanLine",
    "Totals",
    "error_result",
    "finalize",
    "has_figures",
    "make_totals",
    "new_result",
    "plain",
]

SCHEMA_VERSION = 1

# The result as the Ansible layer handles it (action plugins return it, filters pass it on):
# plain data. The parsers build and return the typed ``IperfResult`` (iperf/records.py); ``plain()``
# is the one place where it becomes a ``Result``.
Result = dict[str, Any]


class IperfParseError(ValueError):
    """The input is not iperf output this collection can recognise at all.

    Raised only when not even the tool can be told; anything recognisably iperf comes back
    as a result with ``error`` set and ``raw`` kept.
    """


def plain(result: IperfResult) -> Result:
    """The typed result as plain data for the Ansible layer: the same object, not a copy."""
    return cast("Result", result)


def new_result(tool: Tool, fmt: Format) -> IperfResult:
    """Return a result with every required key present and every figure unknown."""
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": tool,
        "tool_version": None,
        "format": fmt,
        "side": None,
        "protocol": "tcp",
        "reverse": False,
        "bidir": False,
        "local": None,
        "remote": None,
        "timestamp": None,
        "duration": None,
        "streams": 0,
        "sent": None,
        "received": None,
        "bits_per_second": None,
        "udp": None,
        "cpu": None,
        "per_stream": [],
        "intervals": [],
        "complete": False,
        "warnings": [],
        "error": None,
        "rtt": None,
    }


def make_totals(
    nbytes: int | None,
    bits_per_second: float | None,
    seconds: float | None = None,
    retransmits: int | None = None,
) -> Totals:
    """Build a ``totals`` object; ``retransmits`` belongs to the sender side only."""
    return {
        "bytes": nbytes,
        "bits_per_second": bits_per_second,
        "seconds": seconds,
        "retransmits": retransmits,
    }


def _usable(totals: Totals | None) -> bool:
    return bool(totals) and totals is not None and totals.get("bits_per_second") is not None


def finalize(result: IperfResult) -> IperfResult:
    """Apply the headline rule and derive ``duration`` from the totals it uses.

    A receiver total of zero bytes while the sender moved data is not usable: the run was cut
    short, so the headline falls back to the sender and ``complete`` becomes false.
    """
    sent = result["sent"]
    received = result["received"]
    udp = result["protocol"] == "udp"
    if (
        not udp  # a UDP receiver total of zero is what was delivered (all datagrams lost)
        and _usable(received)
        and received is not None
        and not received.get("bytes")
        and not received.get("bits_per_second")
        and _usable(sent)
        and sent is not None
        and (sent.get("bytes") or sent.get("bits_per_second"))
    ):
        result["complete"] = False
        note = "receiver totals are zero while the sender moved data: the run was cut short; headline uses the sender"
        if note not in result["warnings"]:
            result["warnings"].append(note)
        headline: Totals | None = sent
    elif _usable(received):
        headline = received
    elif _usable(sent):
        headline = sent
        if udp and not result["bidir"]:
            note = (
                "UDP: no receiver total (bytes and rate) was printed, so the headline bits_per_second is the sender's "
                "(what was offered, not what was delivered)"
            )
            if note not in result["warnings"]:
                result["warnings"].append(note)
    else:
        headline = None
    result["bits_per_second"] = None if headline is None else headline["bits_per_second"]
    if result["duration"] is None and headline is not None:
        result["duration"] = headline.get("seconds")
    if result["error"]:
        result["complete"] = False
    return result


_FIGURE_KEYS = ("sent", "received", "intervals", "reverse_sent", "reverse_received", "reverse_intervals")


def has_figures(result: IperfResult) -> bool:
    """Whether the result holds a measured figure: a total or an interval, of either direction."""
    return any(result.get(key) for key in _FIGURE_KEYS)


def error_result(tool: Tool, fmt: Format, raw: str, message: str) -> IperfResult:
    """A result for output that holds no measurement, with the raw text kept beside it."""
    result = new_result(tool, fmt)
    result["error"] = message
    result["raw"] = raw
    return finalize(result)


class SpanLine:
    """Mixin of a parser's report line (a dataclass declaring these fields): its duration and totals."""

    start: float
    end: float
    nbytes: int | None
    bps: float | None
    retransmits: int | None

    @property
    def seconds(self) -> float:
        return round(self.end - self.start, 6)

    def totals(self, *, sender: bool) -> Totals:
        """The line's ``totals``; ``retransmits`` count for the sender only."""
        return make_totals(self.nbytes, self.bps, self.seconds, self.retransmits if sender else None)
