# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where iperf lives on an ESXi host: the paths the install, journal and run code probe.

Sources: the shipped iperf3 path is the one VMware's "Troubleshooting the vSAN Network" page
names (vSAN Network Design, techdocs.broadcom.com, VCF 9.0 "vSAN Deployment, Administration and
Monitoring" > "vSAN Network Design");
its listener error and the ``.copy`` / security-domain workarounds are the subject of Dell KB
000212752 "VxRail: iperf3 error - unable to start listener for connections: Operation not
permitted". The iperf2 path is where the V-Front community VIB ``iperf-2.0.5-1`` installs
(recorded: ``6.0__opt-iperf-bin-iperf-v.txt`` and ``6.7__software-vib-install__iperf-offline-bundle.txt``
in ``tests/fixtures/esxi/``, rows of its ``SOURCES.md``).
"""

from __future__ import annotations

#: iperf3 shipped with ESXi (vSAN tooling); present since 6.5 U2 according to several write-ups.
BUNDLED_IPERF3 = "/usr/lib/vmware/vsan/bin/iperf3"
#: The copy that can listen ("unable to start listener ... Operation not permitted" otherwise).
BUNDLED_IPERF3_COPY = BUNDLED_IPERF3 + ".copy"
#: iperf2 installed by the V-Front community VIB ``iperf-2.0.5-1`` (vendor DAST).
VIB_IPERF = "/opt/iperf/bin/iperf"
VIB_IPERF_COPY = VIB_IPERF + ".copy"
#: The paths whose presence :func:`plan_iperf_install` needs to know (``test -e`` each).
INSTALL_PROBE_PATHS: tuple[str, ...] = (BUNDLED_IPERF3, BUNDLED_IPERF3_COPY, VIB_IPERF, VIB_IPERF_COPY)

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
