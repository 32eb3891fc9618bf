# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""iperf3 and iperf (iperf2) from the guest's distribution: the package manager found, the package names.

The one table of package names (``PACKAGES``); the role installs them with ``ansible.builtin.package``
(``use:`` the manager found here), so no fact gathering is needed. Names:

* apt (Debian, Ubuntu): ``iperf3``, ``iperf`` (iperf 2.x);
* dnf / yum (Fedora; RHEL, Rocky, Alma with EPEL for ``iperf``): ``iperf3``, ``iperf`` (iperf 2.x);
* zypper (openSUSE, SLES): ``iperf`` is iperf 3.x there; no iperf 2 in the main repositories is
  known to this table - give ``guest_network_packages`` to add one.

Plain data; no Ansible import, no I/O. Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Sequence

from ansible_collections.esxilab.iperf.plugins.plugin_utils.guest.request import GuestNetworkError, option

__all__ = ["COMMANDS", "MANAGERS", "PACKAGES", "manager_of", "packages_for"]

#: The package managers, in the order the probe looks for them (the first found is used).
MANAGERS = ("apt", "dnf", "yum", "zypper")
#: The command that tells each manager is there.
COMMANDS = {"apt": "apt-get", "dnf": "dnf", "yum": "yum", "zypper": "zypper"}
PACKAGES = {
    "apt": ("iperf3", "iperf"),
    "dnf": ("iperf3", "iperf"),
    "yum": ("iperf3", "iperf"),
    "zypper": ("iperf",),
}


def manager_of(found: Sequence[str]) -> str | None:
    """The package manager of the commands the probe found (``apt-get``, ``dnf``, ...), or ``None``."""
    for manager in MANAGERS:
        if COMMANDS[manager] in found:
            return manager
    return None


def packages_for(manager: str | None, given: Sequence[str] | None) -> list[str]:
    """The packages to install: ``given``, or the table's for ``manager`` (raises when neither is known)."""
    if given:
        return list(given)
    if manager is None:
        raise GuestNetworkError(
            f"{option('install')}: the guest has none of the package managers the role knows ({', '.join(MANAGERS)})."
            f" Fix: install iperf3 (and iperf) on the guest yourself and set {option('install')}: false, or give"
            f" {option('packages')}"
        )
    return list(PACKAGES[manager])
