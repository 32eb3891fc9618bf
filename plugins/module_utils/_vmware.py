# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""vSphere connection options and helpers shared by this collection's pyVmomi modules.

* :func:`vmware_argument_spec` -- the connection options as one argument-spec dict (document
  them with the ``esxilab.iperf.vmware`` doc fragment); every one falls back to a ``VMWARE_*``
  environment variable and ``password`` is ``no_log``.
* :func:`require_pyvmomi` -- fail with ``missing_required_lib`` when pyVmomi is not installed.
* :func:`vsphere_session` -- log in (context manager; logs out on exit), raising
  :class:`VSphereError` with a message that names the endpoint, the cause and the fix.
* :func:`find_host` -- the ``HostSystem`` to work on: the only one of a direct ESXi
  connection, or the one named ``esxi_hostname`` behind a vCenter.

Module-side code: it imports ``ansible.module_utils`` (for ``env_fallback`` and
``missing_required_lib``) and, guarded, pyVmomi. Private: not part of the public API.
"""

from __future__ import annotations

import contextlib
import ssl
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ansible.module_utils.basic import AnsibleModule, env_fallback, missing_required_lib

try:
    from pyVim import connect
    from pyVmomi import vim, vmodl
except ImportError:
    HAS_PYVMOMI = False
    PYVMOMI_IMPORT_ERROR: str | None = traceback.format_exc()
else:
    HAS_PYVMOMI = True
    PYVMOMI_IMPORT_ERROR = None

__all__ = [
    "HAS_PYVMOMI",
    "PYVMOMI_IMPORT_ERROR",
    "VSphereError",
    "find_host",
    "require_pyvmomi",
    "vmware_argument_spec",
    "vsphere_session",
]


class VSphereError(Exception):
    """Connecting to vSphere or finding the host failed; the message says why and what to do."""


def vmware_argument_spec() -> dict[str, Any]:
    """Return the connection options (a fresh dict: callers may add their own options)."""
    return {
        "hostname": {"type": "str", "fallback": (env_fallback, ["VMWARE_HOST"])},
        "username": {"type": "str", "aliases": ["user", "admin"], "fallback": (env_fallback, ["VMWARE_USER"])},
        "password": {
            "type": "str",
            "aliases": ["pass", "pwd"],
            "no_log": True,
            "fallback": (env_fallback, ["VMWARE_PASSWORD"]),
        },
        "port": {"type": "int", "default": 443, "fallback": (env_fallback, ["VMWARE_PORT"])},
        "validate_certs": {"type": "bool", "default": True, "fallback": (env_fallback, ["VMWARE_VALIDATE_CERTS"])},
        "esxi_hostname": {"type": "str"},
    }


def require_pyvmomi(module: AnsibleModule) -> None:
    """Fail the module the standard way when pyVmomi cannot be imported."""
    if not HAS_PYVMOMI:
        module.fail_json(msg=missing_required_lib("pyvmomi"), exception=PYVMOMI_IMPORT_ERROR)


def _ssl_context(validate_certs: bool) -> ssl.SSLContext:
    if validate_certs:
        return ssl.create_default_context()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


@contextmanager
def vsphere_session(params: Mapping[str, Any]) -> Iterator[Any]:
    """Log in to the vCenter or ESXi API named by the connection options; yield the ServiceInstance."""
    hostname, username, password = params.get("hostname"), params.get("username"), params.get("password")
    for option, value, env in (
        ("hostname", hostname, "VMWARE_HOST"),
        ("username", username, "VMWARE_USER"),
        ("password", password, "VMWARE_PASSWORD"),
    ):
        if not value:
            raise VSphereError(f"{option} is not set: give it in the task or export {env}")
    port = int(params.get("port") or 443)
    where = f"{hostname}:{port}"
    try:
        smart_connect: Any = connect.SmartConnect  # untyped in pyVmomi
        service_instance = smart_connect(
            host=hostname,
            port=port,
            user=username,
            pwd=password,
            sslContext=_ssl_context(bool(params.get("validate_certs", True))),
        )
    except vim.fault.InvalidLogin as err:
        detail = getattr(err, "msg", None) or "invalid user name or password"
        raise VSphereError(f"cannot log in to the vSphere API at {where} as {username}: {detail}") from err
    except ssl.SSLCertVerificationError as err:
        raise VSphereError(
            f"the certificate of {where} is not trusted ({err.verify_message}); install its CA or, for a lab "
            f"host with a self-signed certificate, set validate_certs: false"
        ) from err
    except (OSError, vmodl.MethodFault) as err:
        raise VSphereError(f"cannot connect to the vSphere API at {where}: {err}") from err
    try:
        yield service_instance
    finally:
        disconnect: Any = connect.Disconnect  # untyped in pyVmomi
        with contextlib.suppress(Exception):  # logging out is best effort: the work is done or failed
            disconnect(service_instance)


def find_host(service_instance: Any, esxi_hostname: str | None) -> Any:
    """Return the ``vim.HostSystem`` to configure.

    Connected to an ESXi host directly, that host is used (``esxi_hostname`` is not needed and
    not compared: a standalone host often calls itself ``localhost.localdomain``). Through a
    vCenter, ``esxi_hostname`` is required and must match the host's inventory name.
    """
    try:
        content = service_instance.RetrieveContent()
        view = content.viewManager.CreateContainerView(content.rootFolder, [vim.HostSystem], True)
        try:
            hosts = list(view.view)
            names = [str(h.name) for h in hosts]
        finally:
            view.Destroy()
        api_type = content.about.apiType
    except vmodl.MethodFault as err:
        raise VSphereError(f"cannot list the ESXi hosts: {getattr(err, 'msg', None) or type(err).__name__}") from err
    if api_type == "HostAgent":
        if len(hosts) != 1:
            raise VSphereError(f"the ESXi API reports {len(hosts)} hosts instead of one")
        return hosts[0]
    if not esxi_hostname:
        raise VSphereError("connected to a vCenter: set esxi_hostname to the ESXi host to configure")
    for host, host_name in zip(hosts, names, strict=True):
        if host_name == esxi_hostname:
            return host
    names.sort()
    shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
    raise VSphereError(f"vCenter has no ESXi host named {esxi_hostname} (it has: {shown or 'none'})")
