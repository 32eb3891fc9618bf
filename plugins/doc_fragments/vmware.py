# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation of the vSphere connection options (``esxilab.iperf.vmware``).

Kept in sync with ``plugins/module_utils/_vmware.py::vmware_argument_spec``.
Private to this collection: it may change in any release.
"""

from __future__ import annotations


class ModuleDocFragment:
    """vSphere connection options, shared by the collection's pyVmomi modules."""

    DOCUMENTATION = r"""
options:
  hostname:
    description:
      - The vCenter or ESXi host to connect to (name or IP address).
      - If not set in the task, the value of the environment variable E(VMWARE_HOST) is used.
    type: str
  username:
    description:
      - The user name to log in with.
      - If not set in the task, the value of the environment variable E(VMWARE_USER) is used.
    type: str
    aliases: [admin, user]
  password:
    description:
      - The password of O(username).
      - If not set in the task, the value of the environment variable E(VMWARE_PASSWORD) is used.
    type: str
    aliases: [pass, pwd]
  port:
    description:
      - The TCP port of the vSphere API.
      - If not set in the task, the value of the environment variable E(VMWARE_PORT) is used.
    type: int
    default: 443
  validate_certs:
    description:
      - Verify the server's TLS certificate. Set to V(false) only for a lab host with a self-signed certificate.
      - If not set in the task, the value of the environment variable E(VMWARE_VALIDATE_CERTS) is used.
    type: bool
    default: true
  esxi_hostname:
    description:
      - The ESXi host to configure, as named in the vCenter inventory. Required when O(hostname) is a vCenter.
      - Not needed, and not compared, when O(hostname) is the ESXi host itself.
    type: str
requirements:
  - pyvmomi
notes:
  - The module runs on the controller (or wherever the task is delegated); it talks to the vSphere API over HTTPS and
    needs no Python on the ESXi host. Delegate the task to C(localhost) or use a C(local) connection.
  - Writing configuration needs a license with the vSphere API unlocked; the free ESXi license is read-only.
"""
