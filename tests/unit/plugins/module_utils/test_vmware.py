# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""vSphere connection helpers: login errors, logout, and picking the host."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any
from unittest import mock

import pytest
from pyVim import connect  # the module _vmware calls SmartConnect/Disconnect on: patched here
from pyVmomi import vim

from ansible_collections.esxilab.iperf.plugins.module_utils._vmware import VSphereError, find_host, vsphere_session
from tests.unit.plugins.vsphere_fakes import fault

PARAMS = {"hostname": "vc.lab.example", "username": "root", "password": "pw", "port": 443, "validate_certs": True}


class FakeView:
    def __init__(self, hosts: list[Any]) -> None:
        self.view = hosts
        self.destroyed = False

    def Destroy(self) -> None:
        self.destroyed = True


def service_instance(api_type: str, names: list[str]) -> tuple[Any, FakeView, list[Any]]:
    hosts = [SimpleNamespace(name=n) for n in names]
    view = FakeView(hosts)
    requested: list[Any] = []

    def create_view(folder: Any, types: list[Any], recursive: bool) -> FakeView:
        requested.append((folder, types, recursive))
        return view

    content = SimpleNamespace(
        rootFolder="root-folder",
        about=SimpleNamespace(apiType=api_type),
        viewManager=SimpleNamespace(CreateContainerView=create_view),
    )
    return SimpleNamespace(RetrieveContent=lambda: content), view, requested


def test_direct_esxi_connection_uses_its_only_host_whatever_it_is_called() -> None:
    si, view, requested = service_instance("HostAgent", ["localhost.localdomain"])
    host = find_host(si, "esxi01.lab.example")
    assert host.name == "localhost.localdomain"
    assert requested == [("root-folder", [vim.HostSystem], True)]
    assert view.destroyed


def test_vcenter_needs_esxi_hostname_and_finds_it() -> None:
    si, _view, _requested = service_instance("VirtualCenter", ["esxi01.lab.example", "esxi02.lab.example"])
    with pytest.raises(VSphereError, match="connected to a vCenter: set esxi_hostname"):
        find_host(si, None)
    assert find_host(si, "esxi02.lab.example").name == "esxi02.lab.example"
    with pytest.raises(VSphereError) as caught:
        find_host(si, "esxi09")
    assert str(caught.value) == "vCenter has no ESXi host named esxi09 (it has: esxi01.lab.example, esxi02.lab.example)"


@pytest.mark.parametrize(("missing", "env"), [("hostname", "VMWARE_HOST"), ("password", "VMWARE_PASSWORD")])
def test_missing_connection_option_names_the_environment_variable(missing: str, env: str) -> None:
    with (
        pytest.raises(VSphereError, match=f"{missing} is not set: give it in the task or export {env}"),
        vsphere_session({**PARAMS, missing: None}),
    ):
        pass


def test_login_failure_and_logout() -> None:
    with (
        mock.patch.object(connect, "SmartConnect", side_effect=fault("vim.fault.InvalidLogin", "")),
        pytest.raises(VSphereError) as caught,
        vsphere_session(PARAMS),
    ):
        pass
    assert str(caught.value) == (
        "cannot log in to the vSphere API at vc.lab.example:443 as root: invalid user name or password"
    )
    with (
        mock.patch.object(connect, "SmartConnect", return_value="si") as smart_connect,
        mock.patch.object(connect, "Disconnect") as disconnect,
    ):
        with vsphere_session({**PARAMS, "validate_certs": False}) as si:
            assert si == "si"
        context = smart_connect.call_args.kwargs["sslContext"]
        assert context.check_hostname is False
        disconnect.assert_called_once_with("si")


def test_refused_connection_is_reported_with_the_endpoint() -> None:
    with (
        mock.patch.object(connect, "SmartConnect", side_effect=ConnectionRefusedError(111, "Connection refused")),
        pytest.raises(
            VSphereError, match=r"cannot connect to the vSphere API at vc.lab.example:443: .*Connection refused"
        ),
        vsphere_session(PARAMS),
    ):
        pass
