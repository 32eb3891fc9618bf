# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Backend of the ``esxilab.iperf.iperf_run`` action plugin: run iperf2/iperf3 over a plain shell.

Everything here runs on the controller and is pure: it builds POSIX ``sh`` scripts (every
argument through ``shlex.quote``), reads their output, and tells what went wrong and how to
fix it. The one effect, running a script on the host, is the ``execute`` callable the action
plugin passes in (``_low_level_execute_command``), so the whole flow is unit-testable with a
fake host. No Ansible import: the scripts need only a POSIX shell (busybox ``ash`` on ESXi,
``dash``/``bash`` on Linux) and no Python on the host.

Output protocol of every script: the host layer's framing (``plugin_utils/host/framing.py``)
with the tag ``@@ESXILAB:<token>``: a marker line ``@@ESXILAB:<token> <name> <args>`` starts a
section, the lines up to the next marker are its text, byte for byte.

Remote files live in a *private directory* ``<state_dir>/esxilab-iperf-<uid>``; how it is made,
checked and used, and how a server is told from another process: ``state.py``.

The package is cut by concern: ``common`` (types, constants, the error, the framing bound to
a token), ``options`` (which option applies to which mode, ranges, formats, and the iperf command lines
they become), ``state`` (the private directory, pidfiles, process checks), ``probe`` (the host's
tools and binaries, choosing one, listening sockets), ``scripts`` (the shell scripts),
``diagnosis`` (a failure in iperf's own words -> cause and fix), ``interpret`` (the client's
output -> the task result) and ``flow`` (server, client, stop). This file re-exports what the
action plugin and the tests use.

Private package: not part of the collection's public API.
"""

from __future__ import annotations

from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import CommandOutput
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.framing import Section, parse_kv
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.common import (
    DEFAULT_BINARIES,
    DEFAULT_PORTS,
    MARKER,
    IperfRunError,
    marker,
    parse_sections,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.diagnosis import (
    Context,
    Diagnosis,
    diagnose,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.flow import (
    run,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.interpret import (
    distrust_esxi_server_sending,
    interpret_client,
    parse_started_at,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.options import (
    APPLIES,
    MUTUALLY_EXCLUSIVE,
    REQUIRED_IF,
    build_client_argv,
    build_server_argv,
    check_raw_args,
    check_start_at,
    default_timeout,
    validate_params,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.probe import (
    HEAD5,
    Binary,
    HostCaps,
    Listener,
    Probe,
    build_probe_script,
    given_caps,
    given_probe,
    in_shell,
    parse_caps,
    parse_listeners,
    parse_probe,
    port_conflicts,
    probe_result,
    select_binary,
    with_bash_clock,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.scripts import (
    BANNER_SEEN,
    WAIT_FOR_GO,
    barrier_method,
    build_barrier,
    build_client_script,
    build_server_script,
    build_stop_port_script,
    build_stop_script,
    listener_function,
    now_us,
    poll_nap,
    port_taken,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.state import (
    ISOURS,
    PIDFILE_FIELDS,
    cmdline_function,
    is_our_server,
    read_pidfile,
    state_error,
    state_paths,
    state_snippet,
)

__all__ = [
    "APPLIES",
    "BANNER_SEEN",
    "DEFAULT_BINARIES",
    "DEFAULT_PORTS",
    "HEAD5",
    "ISOURS",
    "MARKER",
    "MUTUALLY_EXCLUSIVE",
    "PIDFILE_FIELDS",
    "REQUIRED_IF",
    "WAIT_FOR_GO",
    "Binary",
    "CommandOutput",
    "Context",
    "Diagnosis",
    "HostCaps",
    "IperfRunError",
    "Listener",
    "Probe",
    "Section",
    "barrier_method",
    "build_barrier",
    "build_client_argv",
    "build_client_script",
    "build_probe_script",
    "build_server_argv",
    "build_server_script",
    "build_stop_port_script",
    "build_stop_script",
    "check_raw_args",
    "check_start_at",
    "cmdline_function",
    "default_timeout",
    "diagnose",
    "distrust_esxi_server_sending",
    "given_caps",
    "given_probe",
    "in_shell",
    "interpret_client",
    "is_our_server",
    "listener_function",
    "marker",
    "now_us",
    "parse_caps",
    "parse_kv",
    "parse_listeners",
    "parse_probe",
    "parse_sections",
    "parse_started_at",
    "poll_nap",
    "port_conflicts",
    "port_taken",
    "probe_result",
    "read_pidfile",
    "run",
    "select_binary",
    "state_error",
    "state_paths",
    "state_snippet",
    "validate_params",
    "with_bash_clock",
]
