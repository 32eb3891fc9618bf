# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lab/nslab/sshd.py without building anything: the generated sshd_config (--host-env on the one SetEnv line,
--host-bind listed so a change restarts sshd, the sessions' no-rc-file settings).

Built for real (root, namespaces, mounts) in tests/integration/test_esxi_e2e.py.
"""

from __future__ import annotations

from pathlib import Path

from lab.nslab.sshd import sshd_config_text
from lab.nslab.state import state_doc
from tests.unit.lab.nslab._specs import host_spec


def test_host_env_goes_on_the_one_setenv_line(tmp_path: Path) -> None:
    spec = host_spec(tmp_path, env=("h1=PATH=/srv/standin:/usr/bin:/bin", "h1=FOO=1", "h1=FOO=2"))
    h1, h2 = spec.hosts
    assert h1.env == (("PATH", "/srv/standin:/usr/bin:/bin"), ("FOO", "2"))  # a later item wins per name
    text1 = sshd_config_text(spec, h1)
    text2 = sshd_config_text(spec, h2)
    setenv1 = [line for line in text1.splitlines() if line.startswith("SetEnv")]
    setenv2 = [line for line in text2.splitlines() if line.startswith("SetEnv")]
    # sshd honours only the first SetEnv directive
    assert setenv1 == ["SetEnv LAB_HOST=h1 LAB_NETNS=eltunit-h1 SHLVL=1 PATH=/srv/standin:/usr/bin:/bin FOO=2"]
    assert setenv2 == ["SetEnv LAB_HOST=h2 LAB_NETNS=eltunit-h2 SHLVL=1"]  # nothing more for hosts without options
    assert "--host-bind" not in text2


def test_sessions_start_no_rc_file(tmp_path: Path) -> None:
    """Like ESXi's busybox sh: sshd runs no ~/.ssh/rc, and bash skips ~/.bashrc as a nested shell (SHLVL=1)."""
    spec = host_spec(tmp_path)
    text = sshd_config_text(spec, spec.hosts[0]).splitlines()
    assert "PermitUserRC no" in text
    assert next(line for line in text if line.startswith("SetEnv")).split()[3] == "SHLVL=1"


def test_host_bind_is_listed_in_sshd_config_so_a_change_restarts_sshd(tmp_path: Path) -> None:
    spec = host_spec(tmp_path, binds=("h1=/tmp/x/../vm:/usr/lib/vmware", "h1=/tmp/opt:/opt/"))
    h1, _h2 = spec.hosts
    assert h1.binds == (("/tmp/vm", "/usr/lib/vmware"), ("/tmp/opt", "/opt"))
    text = sshd_config_text(spec, h1)
    assert "# --host-bind: /tmp/vm on /usr/lib/vmware (private mount namespace of this sshd)" in text
    assert "# --host-bind: /tmp/opt on /opt (private mount namespace of this sshd)" in text
    options = state_doc(spec)["options"]
    assert options["host_bind"] == ["h1=/tmp/vm:/usr/lib/vmware", "h1=/tmp/opt:/opt"]
    assert "host_env" not in options
    assert "host_bind" not in state_doc(host_spec(tmp_path))["options"]  # other labs' lab.json stays the same
