# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A throw-away PostgreSQL cluster for the tests: Debian's initdb/pg_ctl on a Unix socket in a temp dir.

``pg_cluster()`` makes a cluster in a new directory under the temp dir (initdb refuses root: as root the server runs as
the ``postgres`` user of the Debian package, through ``runuser``), with password authentication
(scram-sha-256) for a superuser ``iperf``, listening on no TCP port, only on a socket in ``base``;
it yields the libpq URI without the password, and stops the server (``pg_ctl stop -m immediate``)
afterwards. Every step is bounded in time.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PASSWORD = "s3cret-not-in-any-output"
USER = "iperf"
STEP_TIMEOUT = 60


def pg_bin() -> Path | None:
    """The newest /usr/lib/postgresql/*/bin with initdb and pg_ctl, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def unavailable() -> str | None:
    """Why no cluster can be started here, or None."""
    if pg_bin() is None:
        return "PostgreSQL server binaries are missing (apt-get install postgresql)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no postgres user to run the server as"
        if shutil.which("runuser") is None:
            return "runuser is missing"
    try:
        import psycopg  # noqa: F401  # pylint: disable=unused-import,import-outside-toplevel
    except ImportError:
        return "psycopg is not installed (pip install -r requirements-dev.txt)"
    return None


def _as_owner(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@contextmanager
def pg_cluster() -> Iterator[str]:
    """Start a cluster in a new temp dir; yield ``postgresql:///postgres?host=<socket dir>&user=iperf``."""
    binaries = pg_bin()
    assert binaries is not None
    base = Path(tempfile.mkdtemp(prefix="esxilab-iperf-pg-"))
    try:
        with _started(binaries, base) as uri:
            yield uri
    finally:
        shutil.rmtree(base, ignore_errors=True)


@contextmanager
def _started(binaries: Path, base: Path) -> Iterator[str]:
    data, sockets, pwfile = base / "data", base / "sock", base / "pwfile"
    sockets.mkdir()
    pwfile.write_text(PASSWORD + "\n")
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        for path in (sockets, pwfile):
            os.chown(path, owner.pw_uid, owner.pw_gid)
        os.chown(base, owner.pw_uid, owner.pw_gid)
    subprocess.run(
        _as_owner([str(binaries / "initdb"), "-D", str(data), "-U", USER, f"--pwfile={pwfile}",
                   "--auth=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C"]),
        check=True, capture_output=True, timeout=STEP_TIMEOUT,
    )  # fmt: skip
    options = f"-c listen_addresses='' -k {sockets} -c fsync=off"
    subprocess.run(
        _as_owner([str(binaries / "pg_ctl"), "-D", str(data), "-l", str(base / "log"), "-o", options, "-w",
                   "-t", "30", "start"]),
        check=True, capture_output=True, timeout=STEP_TIMEOUT,
    )  # fmt: skip
    try:
        yield f"postgresql:///postgres?host={sockets}&user={USER}"
    finally:
        subprocess.run(
            _as_owner([str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "-t", "30", "stop"]),
            check=False, capture_output=True, timeout=STEP_TIMEOUT,
        )  # fmt: skip
