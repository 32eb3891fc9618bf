# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A hostile iperf3 server: it speaks iperf3's control protocol to a real iperf3 client, lets it send, then lies.

Written from iperf3's protocol as its sources describe it (``src/iperf_api.c``, ``src/iperf_client_api.c`` of
esnet/iperf): the client connects the control connection and sends its cookie (36 characters and a NUL); the server
answers with one-byte states - PARAM_EXCHANGE (the client sends its parameters as JSON, a 4-byte big-endian length
then the text), CREATE_STREAMS (the client connects ``parallel`` data connections, each sending the cookie first),
TEST_START and TEST_RUNNING (the client sends); the client sends TEST_END when its time is up; EXCHANGE_RESULTS (the
client sends its results as length-prefixed JSON, the server answers with its own: ``cpu_util_total``,
``cpu_util_user``, ``cpu_util_system``, ``sender_has_retransmits`` and per stream ``id``, ``bytes``,
``retransmits``, ``jitter``, ``errors``, ``packets``, ``start_time``, ``end_time``); DISPLAY_RESULTS (the client
prints and answers IPERF_DONE).

The lie: the receiver's bytes are ``--inflate`` times what it read, its time ``--time-scale`` times shorter (so the
rate the client computes is both factors too high), and its CPU ``--cpu`` %. ``--tests`` tests (TCP, forward), one
after the other, then it exits; every wait is bounded (``--lifetime`` for each test's first connection, 30 s for each
step after).

Run it in a lab namespace: ``ip netns exec NS python3 hostile_iperf3.py --bind ADDR --port PORT``. It prints one JSON
line per test: what it read, and what it claimed.
"""

from __future__ import annotations

import argparse
import json
import selectors
import socket
import struct
import sys
import time
from typing import Any

COOKIE_SIZE = 37
TEST_START, TEST_RUNNING, TEST_END = 1, 2, 4
PARAM_EXCHANGE, CREATE_STREAMS = 9, 10
EXCHANGE_RESULTS, DISPLAY_RESULTS, IPERF_DONE = 13, 14, 16
STEP_TIMEOUT = 30.0


def _exact(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError(f"the client closed the connection after {len(data)} of {size} bytes")
        data += chunk
    return data


def _read_json(sock: socket.socket) -> Any:
    (size,) = struct.unpack("!I", _exact(sock, 4))
    return json.loads(_exact(sock, size))


def _write_json(sock: socket.socket, value: Any) -> None:
    text = json.dumps(value).encode()
    sock.sendall(struct.pack("!I", len(text)) + text)


def _state(sock: socket.socket, state: int) -> None:
    sock.sendall(bytes([state]))


def serve(listener: socket.socket, *, inflate: float, time_scale: float, cpu: float, lifetime: float) -> dict[str, Any]:
    """Serve one test on ``listener`` and lie about it; return what was read and what was claimed."""
    listener.settimeout(lifetime)
    control, peer = listener.accept()
    listener.settimeout(STEP_TIMEOUT)
    control.settimeout(STEP_TIMEOUT)
    cookie = _exact(control, COOKIE_SIZE)
    _state(control, PARAM_EXCHANGE)
    params = _read_json(control)
    if params.get("udp") or params.get("reverse") or params.get("bidirectional"):
        raise SystemExit(f"only a TCP forward test is served, got {params}")
    streams: list[socket.socket] = []
    _state(control, CREATE_STREAMS)
    for _index in range(int(params.get("parallel") or 1)):
        data, _address = listener.accept()
        data.settimeout(STEP_TIMEOUT)
        if _exact(data, COOKIE_SIZE) != cookie:
            raise SystemExit("a data connection came with another cookie")
        streams.append(data)
    read = dict.fromkeys(range(len(streams)), 0)
    _state(control, TEST_START)
    started = time.monotonic()
    _state(control, TEST_RUNNING)
    selector = selectors.DefaultSelector()
    for index, data in enumerate(streams):
        data.setblocking(False)
        selector.register(data, selectors.EVENT_READ, index)
    control.setblocking(False)
    selector.register(control, selectors.EVENT_READ, None)
    ended: float | None = None
    while ended is None:
        if time.monotonic() - started > STEP_TIMEOUT:
            raise SystemExit("the client did not end its test")
        for key, _events in selector.select(timeout=1.0):
            if key.data is None:
                state = control.recv(1)
                if state != bytes([TEST_END]):
                    raise SystemExit(f"expected TEST_END, got {state!r}")
                ended = time.monotonic()
                break
            chunk = key.fileobj.recv(1 << 17)  # type: ignore[union-attr]
            if chunk:
                read[key.data] += len(chunk)
            else:
                selector.unregister(key.fileobj)
    selector.close()
    control.setblocking(True)
    control.settimeout(STEP_TIMEOUT)
    _state(control, EXCHANGE_RESULTS)
    theirs = _read_json(control)
    seconds = (ended - started) / time_scale
    claimed: dict[str, Any] = {
        "cpu_util_total": cpu,
        "cpu_util_user": cpu,
        "cpu_util_system": 0.0,
        "sender_has_retransmits": 0,
        "congestion_used": "cubic",
        "streams": [
            {
                "id": stream["id"],
                "bytes": int(read.get(index, 0) * inflate),
                "retransmits": -1,
                "jitter": 0,
                "errors": 0,
                "packets": 0,
                "start_time": 0,
                "end_time": seconds,
            }
            for index, stream in enumerate(theirs.get("streams") or [])
        ],
    }
    _write_json(control, claimed)
    _state(control, DISPLAY_RESULTS)
    done = control.recv(1)
    for sock in (*streams, control):
        sock.close()
    return {
        "peer": peer[0],
        "read_bytes": sum(read.values()),
        "claimed_bytes": sum(s["bytes"] for s in claimed["streams"]),
        "client_sent_bytes": sum(int(s.get("bytes") or 0) for s in theirs.get("streams") or []),
        "cpu": cpu,
        "done": done == bytes([IPERF_DONE]),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--bind", required=True)
    parser.add_argument("--port", type=int, default=5201)
    parser.add_argument("--inflate", type=float, default=1000.0)
    parser.add_argument("--time-scale", type=float, default=1000.0)
    parser.add_argument("--cpu", type=float, default=1e9)
    parser.add_argument("--lifetime", type=float, default=120.0)
    parser.add_argument("--tests", type=int, default=1)
    args = parser.parse_args(argv)
    with socket.create_server((args.bind, args.port)) as listener:
        for _test in range(args.tests):
            outcome = serve(
                listener, inflate=args.inflate, time_scale=args.time_scale, cpu=args.cpu, lifetime=args.lifetime
            )
            print(json.dumps(outcome), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
