# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Properties every parsed result keeps (issue #10), over the real-output corpus and generated outputs.

1. **UDP headline <= what the sender offered.** The headline rate is at most the sender's rate,
   scaled by the ratio of the two measured spans: a receiver's rate is over its *own* span,
   which can be shorter than the sender's (it starts at the first datagram's arrival; e.g.
   ``iperf2-2.0.x-csv-client-udp-bidirectional-tast.txt``: 392785470 bytes over 0.0-9.8 s =
   320.7 Mbit/s received, 393577800 bytes over 10.0 s = 314.8 Mbit/s sent). Without that scaling
   four real outputs of the corpus would fail (listed in ``SHORTER_RECEIVER_SPAN``); what is
   delivered never exceeds what was offered (property 2).
2. **Receiver bytes <= sender bytes + one datagram per stream** (the sender's last datagram may be
   counted on one side only), for the totals and per stream, where both exist.

Tolerances are the printed precision, nothing more: text figures carry 3 significant digits
(0.5 %), spans 0.05 s (iperf2 2.0.x prints ``0.0-9.8``); JSON and CSV byte counts are exact.
A datagram is ``sent bytes / packets`` when the result has the count, else 65507 (the largest
UDP payload).

The one documented exception to 2: **iperf3 ``-O``** (omitted intervals). The sender's total
leaves out the omitted seconds, but the receiver restarts its count only when the server learns
that the omit period ended, so it also counts what was in flight then
(``iperf3-3.9-text-client-tcp-O3-omit-crlf-cloudpilot.txt``: 126 MBytes sent, 128 MBytes
received). ``test_the_omit_exception_is_real`` keeps that exception from covering anything else.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf2_text import parse_iperf2_text
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse, parse_all, parse_results
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.result import IperfParseError, plain
from tests.collection_path import FIXTURES

MAX_UDP_PAYLOAD = 65507
FIXTURE_FILES = sorted(p for p in FIXTURES.iterdir() if p.name != "README.md")
OMIT_EXCEPTION = {"iperf3-3.9-text-client-tcp-O3-omit-crlf-cloudpilot.txt"}
SHORTER_RECEIVER_SPAN = {
    "iperf2-2.0.4-csv-client-udp-dualtest-PARTIAL-autotest.txt",
    "iperf2-2.0.x-csv-client-udp-bidirectional-tast.txt",
    "iperf2-2.1.9-text-client-udp-e-fb-i2-pscheduler.txt",
    "iperf3-ge3.2-text-client-reverse-udp-t2-lablog.txt",
}


def _results(result: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """A result and the server's own result embedded in it (``--get-server-output``)."""
    yield result
    server = result.get("server_output")
    if isinstance(server, Mapping):
        yield from _results(server)


def _rounding(result: Mapping[str, Any]) -> tuple[float, float]:
    """(relative rounding of a figure, rounding of a span in seconds) of the result's format."""
    return (0.005, 0.05) if result["format"] == "text" else (0.0, 0.05 if result["format"] == "csv" else 1e-6)


def _datagram(totals: Mapping[str, Any], udp: Mapping[str, Any] | None) -> float:
    packets = (udp or {}).get("sent_packets") or (udp or {}).get("packets")
    return totals["bytes"] / packets if packets else MAX_UDP_PAYLOAD


def headline_problem(result: Mapping[str, Any]) -> str | None:
    """Property 1, or None when it holds."""
    sent, headline = result.get("sent"), result.get("bits_per_second")
    if result["protocol"] != "udp" or headline is None or not sent or sent.get("bits_per_second") is None:
        return None
    rel, span = _rounding(result)
    received = result.get("received") or {}
    ratio = 1.0
    if sent.get("seconds") and received.get("seconds") and received["seconds"] > span:
        ratio = max(1.0, (sent["seconds"] + span) / (received["seconds"] - span))
    limit = sent["bits_per_second"] * ratio * (1 + rel) / (1 - rel)
    if headline > limit + 1e-6:
        return f"UDP headline {headline} > sender {sent['bits_per_second']} (x {ratio:.4f} span ratio)"
    return None


def _bytes_problem(
    sent: Any, received: Any, streams: int, udp: Any, rel: float, what: str, protocol: str
) -> str | None:
    if not sent or not received or sent.get("bytes") is None or received.get("bytes") is None:
        return None
    slack = streams * _datagram(sent, udp) if protocol == "udp" else 0.0
    limit = (sent["bytes"] + slack) * (1 + rel) / (1 - rel)
    if received["bytes"] > limit + 0.5:
        return f"{what}: received {received['bytes']} bytes > sent {sent['bytes']} + {slack:.0f}"
    return None


def byte_problems(result: Mapping[str, Any]) -> list[str]:
    """Property 2 for the totals (both directions) and each stream."""
    rel, _span = _rounding(result)
    protocol = result["protocol"]
    found = []
    for prefix in ("", "reverse_"):
        streams = max(1, len(result.get(f"{prefix}per_stream") or []) or result["streams"])
        udp = result.get(f"{prefix}udp")
        found.append(
            _bytes_problem(
                result.get(f"{prefix}sent"),
                result.get(f"{prefix}received"),
                streams,
                udp,
                rel,
                prefix + "total",
                protocol,
            )
        )
        for item in result.get(f"{prefix}per_stream") or []:
            found.append(
                _bytes_problem(
                    item.get("sent"), item.get("received"), 1, item.get("udp"), rel, f"stream {item['id']}", protocol
                )
            )
    return [p for p in found if p]


def _corpus(path: Path) -> list[Mapping[str, Any]]:
    try:
        return [r for top in parse_results(path.read_bytes()) for r in _results(top)]
    except IperfParseError:
        return []  # not iperf output the parsers recognise (test_parse.py)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[p.name for p in FIXTURE_FILES])
def test_corpus_udp_headline_at_most_what_was_offered(path: Path) -> None:
    for result in _corpus(path):
        assert headline_problem(result) is None


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[p.name for p in FIXTURE_FILES])
def test_corpus_receiver_bytes_at_most_sender_bytes(path: Path) -> None:
    for result in _corpus(path):
        omitted = any(iv.get("omitted") for iv in result.get("intervals") or [])
        if omitted and path.name in OMIT_EXCEPTION:
            continue
        assert byte_problems(result) == []


def test_the_omit_exception_is_real() -> None:
    for name in OMIT_EXCEPTION:
        (result,) = _corpus(FIXTURES / name)
        assert any(iv["omitted"] for iv in result["intervals"])
        assert byte_problems(result), f"{name} no longer needs the -O exception: remove it"


def test_the_span_scaling_is_needed_by_exactly_the_listed_outputs() -> None:
    """Property 1 without the span ratio fails for these real outputs, and only these."""
    failing = set()
    for path in FIXTURE_FILES:
        for result in _corpus(path):
            sent, headline = result.get("sent"), result.get("bits_per_second")
            offered = sent.get("bits_per_second") if result["protocol"] == "udp" and sent else None
            if offered is not None and headline and headline > offered:
                failing.add(path.name)
    assert failing == SHORTER_RECEIVER_SPAN


# ------------------------------------------------------------------ generated outputs

DATAGRAM = 1470


@st.composite
def udp_runs(draw: st.DrawFn) -> dict[str, Any]:
    """A multi-stream iperf2 UDP client run (``-f b`` units: exact figures), some Server Reports possibly missing."""
    count = draw(st.integers(min_value=2, max_value=8))
    seconds = draw(st.sampled_from([1.0, 3.0, 10.0, 60.0]))
    streams = []
    for ident in range(3, 3 + count):
        sent = draw(st.integers(min_value=1, max_value=200_000))
        lost = draw(st.integers(min_value=0, max_value=sent))
        streams.append(
            {
                "id": ident,
                "sent": sent,
                "lost": lost,
                "jitter": draw(st.floats(min_value=0.0, max_value=50.0)),
                "span": draw(st.sampled_from([seconds, round(seconds + 0.3, 1)])),
                "report": draw(st.booleans()) if draw(st.booleans()) else True,
            }
        )
    return {"seconds": seconds, "streams": streams}


def _render(run: dict[str, Any]) -> str:
    secs = run["seconds"]
    lines = [
        "------------------------------------------------------------",
        "Client connecting to 10.0.0.2, UDP port 5001",
        f"Sending {DATAGRAM} byte datagrams",
        "UDP buffer size:  208 KByte (default)",
        "------------------------------------------------------------",
    ]
    lines += [
        f"[{s['id']:3d}] local 10.0.0.1 port {40000 + s['id']} connected with 10.0.0.2 port 5001"
        for s in run["streams"]
    ]
    lines.append("[ ID] Interval       Transfer     Bandwidth")
    for s in run["streams"]:
        nbytes = s["sent"] * DATAGRAM
        lines.append(f"[{s['id']:3d}]  0.0-{secs:4.1f} sec  {nbytes} Bytes  {round(nbytes * 8 / secs)} bits/sec")
        lines.append(f"[{s['id']:3d}] Sent {s['sent']} datagrams")
    total = sum(s["sent"] for s in run["streams"]) * DATAGRAM
    lines.append(f"[SUM]  0.0-{secs:4.1f} sec  {total} Bytes  {round(total * 8 / secs)} bits/sec")
    for s in run["streams"]:
        if not s["report"]:
            continue
        got = (s["sent"] - s["lost"]) * DATAGRAM
        pct = 100.0 * s["lost"] / s["sent"]
        lines.append(f"[{s['id']:3d}] Server Report:")
        lines.append(
            f"[{s['id']:3d}]  0.0-{s['span']:4.1f} sec  {got} Bytes  {round(got * 8 / s['span'])} bits/sec  "
            f"{s['jitter']:6.3f} ms {s['lost']}/{s['sent']} ({pct:.2g}%)"
        )
    return "\n".join(lines) + "\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(udp_runs())
def test_generated_udp_runs_sum_the_reports_and_keep_the_properties(run: dict[str, Any]) -> None:
    result = plain(parse_iperf2_text(_render(run)))
    reported = [s for s in run["streams"] if s["report"]]
    assert result["streams"] == len(run["streams"])
    assert result["complete"] is (len(reported) == len(run["streams"]))
    if reported:
        got = [(s["sent"] - s["lost"]) * DATAGRAM for s in reported]
        assert result["received"]["bytes"] == sum(got)
        rates = [round(g * 8 / s["span"]) for g, s in zip(got, reported, strict=True)]
        assert result["received"]["bits_per_second"] == sum(rates)
        assert result["received"]["seconds"] == max(s["span"] for s in reported)
        assert result["udp"]["lost_packets"] == sum(s["lost"] for s in reported)
        assert result["udp"]["packets"] == sum(s["sent"] for s in reported)
        assert result["udp"]["lost_percent"] == pytest.approx(
            100.0 * sum(s["lost"] for s in reported) / sum(s["sent"] for s in reported)
        )
        assert result["udp"]["jitter_ms"] == pytest.approx(max(round(s["jitter"], 3) for s in reported), abs=1e-9)
        assert result["bits_per_second"] == result["received"]["bits_per_second"]  # delivered, never the sender's
        if len(reported) < len(run["streams"]):
            assert any("lower bound" in w for w in result["warnings"])
    else:
        assert result["received"] is None
        assert result["bits_per_second"] == result["sent"]["bits_per_second"]
        assert any("headline bits_per_second is the sender's" in w for w in result["warnings"])
    assert headline_problem(result) is None
    assert byte_problems(result) == []


# ------------------------------------------------------------------ issue 22: server logs and dual tests

SERVER_BANNER = "-----------------------------------------------------------"
IDLE_JSON = "iperf3-3.12-json-server-tcp-udp-2-tests-stopped-idle-locallab.json"


@st.composite
def server_logs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """An iperf3 3.10+ server log: tests that measured (random figures), tests whose client failed before any
    figure, and the end of the log: nothing, a banner with no test, or that banner and the stop while idle."""
    kinds = draw(st.lists(st.sampled_from(["measured", "failed"]), min_size=1, max_size=5))
    tests: list[dict[str, Any]] = [
        {"kind": kind, "mbytes": draw(st.integers(min_value=1, max_value=999)), "port": 40000 + 2 * i}
        for i, kind in enumerate(kinds)
    ]
    tests.append({"kind": draw(st.sampled_from(["none", "banner", "interrupt"]))})
    return tests


def _render_server_log(tests: list[dict[str, Any]]) -> str:
    lines: list[str] = []
    for number, test in enumerate(tests, start=1):
        if test["kind"] == "none":
            break
        lines += [SERVER_BANNER, f"Server listening on 5201 (test #{number})", SERVER_BANNER]
        if test["kind"] == "interrupt":
            lines.append("iperf3: interrupt - the server has terminated")
        if test["kind"] in ("banner", "interrupt"):
            break
        lines.append(f"Accepted connection from 198.18.0.12, port {test['port']}")
        if test["kind"] == "failed":
            lines.append("iperf3: error - the client has unexpectedly closed the connection")
            continue
        mbytes = test["mbytes"]
        rate = f"{mbytes * 8 * 1.048576:.0f}"  # MBytes over one second, in Mbits/sec (rounded as iperf3 prints it)
        data = f"[  5]   0.00-1.00   sec  {mbytes} MBytes  {rate} Mbits/sec"
        lines += [
            f"[  5] local 198.18.0.11 port 5201 connected to 198.18.0.12 port {test['port'] + 1}",
            "[ ID] Interval           Transfer     Bitrate",
            f"{data}                  ",
            "- - - - - - - - - - - - - - - - - - - - - - - - -",
            "[ ID] Interval           Transfer     Bitrate",
            f"{data}                  receiver",
        ]
    return "\n".join(lines) + "\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(server_logs())
def test_a_server_log_gives_its_last_test_with_figures(tests: list[dict[str, Any]]) -> None:
    result = parse(_render_server_log(tests))
    measured = [t for t in tests if t["kind"] == "measured"]
    connected = [t for t in tests if t["kind"] in ("measured", "failed")]
    if measured:
        assert result["error"] is None
        assert result["received"]["bytes"] == measured[-1]["mbytes"] * 2**20
        later = connected[connected.index(measured[-1]) + 1 :]
        assert sum("a later test failed without figures" in w for w in result["warnings"]) == len(later)
    else:
        assert result["error"] == "the client has unexpectedly closed the connection"  # a failed test, said so
        assert result["received"] is None and result["bits_per_second"] is None
    assert len(parse_all(_render_server_log(tests))) == len(connected)  # a banner with no test is no test


def _json_documents() -> list[str]:
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import split_tests

    return split_tests((FIXTURES / IDLE_JSON).read_text())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0, 1, 2]), min_size=1, max_size=6))
def test_a_json_server_log_gives_its_last_document_with_figures(order: list[int]) -> None:
    """Any sequence of the recorded -J server documents (TCP test, UDP test, the idle server's stop)."""
    documents = _json_documents()
    assert len(documents) == 3
    result = parse("\n".join(documents[i] for i in order))
    measured = [i for i in order if i != 2]
    if measured:
        assert result["error"] is None
        assert result["protocol"] == ("tcp" if measured[-1] == 0 else "udp")
        assert result["received"] == parse(documents[measured[-1]])["received"]
    else:
        assert result["error"] == "interrupt - the server has terminated"
        assert result["bits_per_second"] is None


@st.composite
def duplex_csvs(draw: st.DrawFn) -> dict[str, Any]:
    """iperf2 2.1+ -y C of a full-duplex (one connection, both ways) or dual (-d: a connection each way) test,
    as the client or the server prints it: plain 9-field lines or -e lines (write / read columns), data sender first."""
    view = draw(st.sampled_from(["client", "server"]))
    layout = draw(st.sampled_from(["plain", "enhanced"]))
    mode = draw(st.sampled_from(["full-duplex", "dual"]))
    count = draw(st.integers(min_value=1, max_value=3))
    client, server, port = "198.18.0.12", "198.18.0.11", 5001
    directions: list[dict[str, Any]] = []
    for k in range(count):
        c_end = (client, 40000 + 2 * k)
        # below 2**31: two chunks never add up to 4294967295, which iperf2 prints for "unknown" (textutil.UNKNOWN_U32)
        chunks = [draw(st.integers(min_value=1, max_value=2**31 - 1)) for _chunk in range(4)]
        s_id, s_src = (k + 1, (server, port)) if mode == "full-duplex" else (count + k + 1, (server, 41000 + k))
        s_dst = c_end if mode == "full-duplex" else (client, port)
        directions.append({"id": k + 1, "src": c_end, "dst": (server, port), "chunks": chunks[:2]})
        directions.append({"id": s_id, "src": s_src, "dst": s_dst, "chunks": chunks[2:]})
    for d in directions:
        d["local_sends"] = (d["src"][0] == client) == (view == "client")
    side = draw(st.sampled_from([None, view]))
    return {"view": view, "layout": layout, "mode": mode, "side": side, "directions": directions}


def _render_csv(run: dict[str, Any]) -> str:
    lines = []
    for start, end in ((0, 1), (1, 2), (0, 2)):
        for d in run["directions"]:
            nbytes = sum(d["chunks"]) if (start, end) == (0, 2) else d["chunks"][start]
            src, dst = d["src"], d["dst"]
            if run["layout"] == "plain" and run["view"] == "client" and run["mode"] == "full-duplex":
                dst = dst if d["local_sends"] else ("::", 0)  # 2.1.8: a client's receiving end of a full-duplex stream
            stamp = "+0000:20261206155154.420" if run["layout"] == "enhanced" else "20261206155154"
            rate = nbytes * 8 // (end - start)
            row = f"{stamp},{src[0]},{src[1]},{dst[0]},{dst[1]},{d['id']},{start}.0-{end}.0,{nbytes},{rate}"
            if run["layout"] == "enhanced":
                row += ",900,0,3,1024,120,15" if d["local_sends"] else ",900,1,2,3,4,5,6,7,8"
            lines.append(row)
    return "\n".join(lines) + "\n"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(duplex_csvs())
def test_the_two_directions_of_a_dual_or_full_duplex_csv_are_never_merged(run: dict[str, Any]) -> None:
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf2_csv import parse_iperf2_csv

    result = plain(parse_iperf2_csv(_render_csv(run), side=run["side"]))
    directions = run["directions"]
    items = [*result["per_stream"], *result.get("reverse_per_stream", [])]
    told = (
        run["layout"] == "enhanced"
        or (run["view"] == "client" and run["mode"] == "full-duplex")  # ::,0
        or (run["side"] is not None and len(directions) >= 4 and run["mode"] == "full-duplex")  # the shared end
    )
    # (a dual test's plain lines without the server's banner never say which connection is this host's)
    if told:
        assert result["bidir"] is True
        assert len(items) == len(directions)  # one per direction: never two directions in one transfer
        for d in directions:
            slot, other = ("sent", "received") if d["local_sends"] else ("received", "sent")
            owners = [i for i in items if i["id"] == d["id"] and i[slot] and i[slot]["bytes"] == sum(d["chunks"])]
            assert len(owners) == 1, (d, items)
            assert owners[0][other] is None  # TCP: no peer figure in this host's CSV, never the other direction's
        if len(directions) == 2:
            sends = next(d for d in directions if d["local_sends"])
            takes = next(d for d in directions if not d["local_sends"])
            bytes_of = {
                key: (result.get(key) or {}).get("bytes")
                for key in ("sent", "reverse_sent", "received", "reverse_received")
            }
            assert sum(sends["chunks"]) in (bytes_of["sent"], bytes_of["reverse_sent"])
            assert sum(takes["chunks"]) in (bytes_of["received"], bytes_of["reverse_received"])
    else:
        assert items == [] and result["sent"] is None and result["received"] is None  # nothing claimed
        assert result["complete"] is False
        for d in directions:
            assert any(f"(transfer {d['id']}): {sum(d['chunks'])} bytes" in w for w in result["warnings"])
