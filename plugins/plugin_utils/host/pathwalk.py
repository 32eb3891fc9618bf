# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where iperf is looked for on a host: the one ``$PATH`` walker and the ESXi iperf locations.

:data:`PATH_WALK` defines the shell function ``_pathwalk FN NAME...``: for each directory of
``$PATH`` in order (an empty entry is kept as the empty string) and each ``NAME``, it calls
``FN DIR NAME`` and stops at the first call that returns 0 (then returns 0 itself; 1 when none
did). An explicit walk with ``[ -x ]``/``[ -f ]`` tests rather than ``command -v``, which stops
at the first hit and behaves differently between old busybox builds. :data:`WHICH` builds
``_which NAME`` on it: print the first executable ``NAME`` of ``$PATH`` (an empty entry is the
current directory, as for the shell itself).

Plain shell text (POSIX ``sh``; busybox ``ash`` on ESXi runs it); no Ansible import.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from ansible_collections.esxilab.iperf.plugins.module_utils._esxcli import (
    BUNDLED_IPERF3,
    BUNDLED_IPERF3_COPY,
    VIB_IPERF,
    VIB_IPERF_COPY,
)

__all__ = ["ESXI_IPERF_PATHS", "PATH_WALK", "WHICH"]

#: The vSAN iperf2 some ESXi releases ship next to the bundled iperf3, and its copy.
VSAN_IPERF = "/usr/lib/vmware/vsan/bin/iperf"

#: Fixed iperf locations on ESXi, in the order a runnable binary is preferred: the ``.copy``
#: binaries (the shipped vSAN iperf3 cannot listen on 7.x/8.x; ``esxi_iperf_install`` makes the
#: copies), then the bundled vSAN iperf3 and the community iperf 2.0.5 VIB, then the vSAN iperf2.
ESXI_IPERF_PATHS: tuple[str, ...] = (
    BUNDLED_IPERF3_COPY,
    VIB_IPERF_COPY,
    BUNDLED_IPERF3,
    VIB_IPERF,
    VSAN_IPERF + ".copy",
    VSAN_IPERF,
)

#: ``_pathwalk FN NAME...`` (see the module docstring). IFS and globbing are restored before
#: each ``FN`` call, so ``FN`` runs in the caller's usual shell state.
PATH_WALK = (
    "_pathwalk() { _wf=$1; shift; _wi=$IFS; IFS=:; set -f; for _wd in $PATH; do IFS=$_wi; set +f; "
    'for _wn in "$@"; do if "$_wf" "$_wd" "$_wn"; then return 0; fi; done; IFS=:; set -f; done; '
    "IFS=$_wi; set +f; return 1; }"
)

#: ``_which NAME``: the first executable (not a directory) called ``NAME`` in ``$PATH``; needs :data:`PATH_WALK`.
WHICH = "\n".join(
    [
        PATH_WALK,
        '_wx() { [ -x "${1:-.}/$2" ] && [ ! -d "${1:-.}/$2" ] && echo "${1:-.}/$2"; }',
        '_which() { _pathwalk _wx "$1"; }',
    ]
)
