# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where iperf is looked for on a host: the one ``$PATH`` walker (the ESXi locations: ``esxi/paths.py``).

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

__all__ = ["PATH_WALK", "WHICH"]

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
