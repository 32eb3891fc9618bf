# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark: ``parse()`` of a large real iperf3 ``-J`` document against plain ``json.loads``.

Goal: parse time and peak memory at most 2x those of ``json.loads`` on the same text.

The document comes from a real run over loopback (default: ``iperf3 -c 127.0.0.1 -J -t 60
-i 0.1 -P 16 -b 10M`` against ``iperf3 -s -1`` on port 15290: 600 intervals x 16 streams),
or from an existing file (``--file``). Times are the best of ``--repeat`` interleaved runs
(``time.perf_counter``); memory is the ``tracemalloc`` peak of one run. A script, not a
pytest test::

    python tests/bench/bench_parse.py                  # 60 s run, as `make bench` does
    python tests/bench/bench_parse.py --duration 10    # quicker
    python tests/bench/bench_parse.py --file big.json  # an existing document
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.collection_path import ensure_collection_path  # noqa: E402
from tests.processes import end_process  # noqa: E402

ensure_collection_path()

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf3_json import parse_iperf3_json  # noqa: E402

_dispatch_parse: Callable[[str], Any] | None
try:
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse as _imported_parse
except ImportError as exc:  # a sibling parser of the dispatcher is not written yet
    _dispatch_parse = None
    _DISPATCH_MISSING = str(exc)
else:
    _dispatch_parse = _imported_parse
    _DISPATCH_MISSING = ""

PORT = 15290
GOAL = 2.0


def port_listening(port: int) -> bool:
    """Is a TCP socket listening on ``port``? Read from /proc (connecting would start a test)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 3 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                return True
    return False


def wait_for_listening(server: subprocess.Popen[bytes], port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_listening(port):
            return
        if server.poll() is not None:
            break
        time.sleep(0.05)
    raise RuntimeError(f"iperf3 server did not start listening on 127.0.0.1:{port} (rc={server.poll()})")


def generate(iperf3: str, duration: int, bandwidth: str, streams: int, interval: float) -> str:
    """Run a real client against a one-off loopback server and return its ``-J`` document."""
    if port_listening(PORT):
        raise RuntimeError(f"port {PORT} is already in use on this machine")
    server = subprocess.Popen(
        [iperf3, "-s", "-1", "-p", str(PORT), "-B", "127.0.0.1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_listening(server, PORT, 10)
        command = [iperf3, "-c", "127.0.0.1", "-p", str(PORT), "-J", "-t", str(duration), "-i", str(interval)]
        command += ["-P", str(streams)]
        if bandwidth:
            command += ["-b", bandwidth]
        print("running:", " ".join(command), flush=True)
        client = subprocess.run(command, capture_output=True, text=True, timeout=duration + 60, check=False)
        if client.returncode != 0 or not client.stdout.strip():
            raise RuntimeError(f"iperf3 client failed (rc={client.returncode}): {client.stderr or client.stdout[:500]}")
        return client.stdout
    finally:
        end_process(server, 5)


def best_times(funcs: list[Callable[[], Any]], repeat: int) -> list[float]:
    """Best wall time of each function; runs are interleaved so machine load hits all alike."""
    best = [float("inf")] * len(funcs)
    for _round in range(repeat):
        for index, func in enumerate(funcs):
            gc.collect()
            begin = time.perf_counter()
            func()
            best[index] = min(best[index], time.perf_counter() - begin)
    return best


def peak_memory(func: Callable[[], Any]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        result = func()
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return peak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--file", type=Path, help="benchmark this iperf3 -J document instead of running iperf3")
    parser.add_argument("--duration", type=int, default=60, help="iperf3 -t seconds (default 60)")
    parser.add_argument("--bandwidth", default="10M", help="iperf3 -b per stream, '' for unlimited (default 10M)")
    parser.add_argument("--streams", type=int, default=16, help="iperf3 -P (default 16)")
    parser.add_argument("--interval", type=float, default=0.1, help="iperf3 -i seconds (default 0.1)")
    parser.add_argument("--repeat", type=int, default=9, help="timing runs; the best counts (default 9)")
    parser.add_argument("--save", type=Path, help="also write the generated document here")
    parser.add_argument("--iperf3", default=shutil.which("iperf3") or "/usr/bin/iperf3")
    parser.add_argument("--check", action="store_true", help=f"exit 1 when a ratio is above {GOAL}")
    args = parser.parse_args(argv)

    if args.file:
        text = args.file.read_text(encoding="utf-8")
        source = str(args.file)
    else:
        if not os.access(args.iperf3, os.X_OK):
            print(f"no iperf3 at {args.iperf3}; pass --file", file=sys.stderr)
            return 2
        text = generate(args.iperf3, args.duration, args.bandwidth, args.streams, args.interval)
        source = f"live run: -t {args.duration} -i {args.interval} -P {args.streams} -b {args.bandwidth or 'unlimited'}"
        if args.save:
            args.save.write_text(text, encoding="utf-8")

    if _dispatch_parse is not None:
        parse: Callable[[str], Any] = _dispatch_parse
        parse_name = "_parse.parse()"
    else:
        print(f"note: _parse.parse() cannot be imported yet ({_DISPATCH_MISSING}); timing parse_iperf3_json()")

        def parse(data: str) -> Any:
            return parse_iperf3_json(None, data)

        parse_name = "parse_iperf3_json()"

    result = parse(text)
    intervals = len(result.get("intervals") or [])
    if result.get("error"):
        print(f"warning: the document parsed with an error: {result['error']}")

    t_json, t_parse = best_times([lambda: json.loads(text), lambda: parse(text)], args.repeat)
    m_json = peak_memory(lambda: json.loads(text))
    m_parse = peak_memory(lambda: parse(text))
    time_ratio = t_parse / t_json
    mem_ratio = m_parse / m_json

    print()
    print(f"document : {source}")
    print(f"size     : {len(text):,} chars, {intervals} intervals, {result.get('streams')} streams")
    print(f"parser   : {parse_name} (best of {args.repeat})")
    print()
    print(f"{'':<16}{'json.loads':>14}{parse_name:>22}{'ratio':>9}{'goal':>7}")
    print(f"{'time (ms)':<16}{t_json * 1000:>14.1f}{t_parse * 1000:>22.1f}{time_ratio:>9.2f}{GOAL:>7.1f}")
    print(f"{'peak mem (MiB)':<16}{m_json / 2**20:>14.1f}{m_parse / 2**20:>22.1f}{mem_ratio:>9.2f}{GOAL:>7.1f}")
    verdict = "OK" if time_ratio <= GOAL and mem_ratio <= GOAL else "ABOVE GOAL"
    print(f"\nverdict  : {verdict}")
    return 1 if args.check and verdict != "OK" else 0


if __name__ == "__main__":
    sys.exit(main())
