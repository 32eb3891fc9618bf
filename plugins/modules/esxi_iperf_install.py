# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation of ``esxilab.iperf.esxi_iperf_install``; the work is done by plugins/action/esxi_iperf_install.py."""

from __future__ import annotations

DOCUMENTATION = r"""
module: esxi_iperf_install
short_description: Make an iperf server binary runnable on an ESXi host, and undo it after the test
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Detects the ESXi release (C(vmware -vl)) and makes an iperf binary available that can run as a server, over the
    host's shell. ESXi needs no Python.
  - B(ESXi 6.x) (O(method=auto) or O(method=vib)) - installs the community iperf 2.0.5 VIB (C(iperf-2.0.5-1), vendor
    DAST, from the V-Front depot) with C(esxcli software vib install), from O(vib_source) or from O(vib_upload)
    uploaded to the host, unless C(esxcli software vib list) already shows it; then copies C(/opt/iperf/bin/iperf) to
    C(/opt/iperf/bin/iperf.copy), the binary this module returns.
  - B(ESXi 7.0 and later) (O(method=auto) or O(method=bundled)) - copies the iperf3 shipped with ESXi,
    C(/usr/lib/vmware/vsan/bin/iperf3), to C(/usr/lib/vmware/vsan/bin/iperf3.copy). The shipped binary itself cannot
    listen (C(unable to start listener for connections - Operation not permitted)); the copy can.
  - B(ESXi 8.0 and later) - the C(execInstalledOnly) runtime option is on by default, and a copy is not a file
    installed from a VIB, so ESXi refuses to run it. The module reads the option and fails with that reason, changing
    nothing, unless O(relax_exec_policy=true). Then, with O(relax_mode=runtime_option), it sets
    C(/User/execInstalledOnly) to C(0) for the test; with O(relax_mode=app_domain) it copies nothing and sets the
    C(appDom) security domain, in which the shipped iperf3 runs, to C(disabled), so the shipped binary can listen.
    The previous value is returned in RV(previous) and RV(restore).
  - When the C(execInstalledOnly) boot (kernel) option is enforced, no runtime setting can override it and the module
    fails with that reason; changing the boot option needs a reboot, which this module never does.
  - Verifies the result by running the binary with C(-v) and returns the version it prints in RV(tool_version).
  - Returns RV(restore), the value that undoes exactly what this task changed - the C(execInstalledOnly) or C(appDom)
    value is put back and the copy it made is removed. Pass it to O(restore) in a later task, for example in an
    C(always) section after the benchmark. Nothing that existed before the task is removed by a restore.
  - Runs nothing that is already in place. A second run reports no change.
options:
  method:
    description:
      - Which iperf to prepare.
    type: str
    choices:
      auto: V(vib) on ESXi 6.x, V(bundled) on ESXi 7.0 and later.
      vib: The community iperf 2.0.5 VIB (iperf2), then C(/opt/iperf/bin/iperf.copy).
      bundled: The iperf3 shipped with ESXi - its copy C(iperf3.copy), or with O(relax_mode=app_domain) the binary
        itself.
    default: auto
  vib_source:
    description:
      - Where the ESXi host reads the VIB - a URL the host can reach (for example
        V(http://vibsdepot.v-front.de/depot/DAST/iperf-2.0.5/iperf-2.0.5-1.x86_64.vib)) or an absolute path on the
        host (for example a datastore path). A name ending in C(.zip) is installed as an offline bundle (C(-d)),
        anything else as a single VIB (C(-v)).
      - The host's outgoing HTTP may be blocked by its firewall (ruleset C(httpClient)); O(vib_upload) avoids that.
      - "Secrets in the URL are never shown: the password of USER:PASSWORD@, every query value (a C(?token=) or a
        signature) and the fragment appear as C(***) in the result and the messages. Such a URL reaches the host on
        the standard input of C(esxcli), so it is in no command line - not in Ansible's C(-vvv) output, not in the
        host's process list."
      - Needed only when the VIB must be installed. Mutually exclusive with O(vib_upload).
    type: str
  vib_upload:
    description:
      - The VIB or offline bundle (C(.zip)) as a file on the controller; a relative path is looked up in the role's or
        playbook's C(files) directory.
      - It is uploaded into a temporary directory on the host, installed from there, and removed with that directory
        at the end of the task. Nothing is uploaded in check mode, or when the VIB is installed already.
      - Mutually exclusive with O(vib_source).
    type: path
  allow_unsigned:
    description:
      - Install the VIB with C(--no-sig-check). The community iperf VIB is not signed, and a host at the default
        acceptance level (C(PartnerSupported)) refuses it with C([AcceptanceConfigError]) otherwise.
      - B(Security risk.) C(--no-sig-check) bypasses the acceptance level and signature checks for this installation.
        esxcli's own help calls this "a large security risk"; vSphere shows a SECURITY ALERT for the host, and hosts
        with Secure Boot may refuse to boot with an unsigned VIB installed. Use it on lab hosts only, and remove the
        VIB after the test (O(restore) with O(remove_vib=true)).
      - The host acceptance level is not changed.
    type: bool
    default: false
  relax_exec_policy:
    description:
      - Allow the module to relax ESXi's protection against running files not installed from a VIB, when it is
        active (ESXi 8.0 default), for the test. How is chosen by O(relax_mode).
      - Without it, on a host where C(execInstalledOnly) is active the task fails, naming the option, and changes
        nothing.
      - vCenter shows warnings for the host while the protection is relaxed. Always restore it after the test.
    type: bool
    default: false
  relax_mode:
    description:
      - What O(relax_exec_policy=true) changes when C(execInstalledOnly) is active.
    type: str
    choices:
      runtime_option: Set the runtime option C(/User/execInstalledOnly) to C(0), so the copy may run
        (C(esxcli system settings advanced set -o /User/execInstalledOnly -i 0)).
      app_domain: Run the shipped C(/usr/lib/vmware/vsan/bin/iperf3) itself (installed, so it may run) and set the
        C(appDom) security domain to C(disabled) so it may listen
        (C(localcli system secpolicy domain set -n appDom -l disabled)). With O(method=bundled) only.
    default: runtime_option
  restore:
    description:
      - The RV(restore) value returned by an earlier C(esxi_iperf_install) task on the same host. Undoes what that
        task did - puts the C(execInstalledOnly) or C(appDom) value back and removes the copy it made - skipping what
        is already back. An empty mapping changes nothing.
      - With O(restore) the install options are ignored. Mutually exclusive with O(vib_source) and O(vib_upload).
    type: dict
  remove_vib:
    description:
      - With O(restore), also remove the VIB the install task installed (C(esxcli software vib remove)). A VIB that
        was installed before that task is never removed. Without it the VIB is kept (with a warning) and so is its
        journal entry, for C(playbooks/restore.yml -e esxilab_restore_remove_vib=true).
    type: bool
    default: false
extends_documentation_fragment:
  - esxilab.iperf.attributes
  - esxilab.iperf.attributes.action
  - esxilab.iperf.attributes.platform_posix_raw
  - esxilab.iperf.journal
  - esxilab.iperf.journal.deadline
attributes:
  check_mode:
    support: full
    details:
      - Reads the host and reports the commands it would run, the binary and the state it would leave; changes and
        uploads nothing. The binary is run with C(-v) only when nothing is pending.
  diff_mode:
    support: full
    details:
      - The diff shows whether the binary exists, the C(execInstalledOnly) runtime value, the C(appDom) level and
        the iperf VIB, before and after.
notes:
  - B(Restore journal.) Before its first change the task records on the host (O(journal_dir)) what undoes it, the
    earliest recorded value winning, and starts the dead-man timer (O(deadline)) for a firewall or exec-policy change.
    If the journal cannot be written, nothing is changed. With O(restore), the task also puts back what the journal
    records and then clears those entries. M(esxilab.iperf.esxi_journal) and C(playbooks/restore.yml) read and
    restore the journal after an interrupted run.
  - Every failure after the first command that changed the host returns RV(restore) and C(changed=true).
  - Runs C(esxcli), C(localcli) and C(cp) with the task's C(become) settings; on ESXi log in as C(root).
  - The files in C(/usr/lib/vmware) and C(/opt) of an ESXi host live in memory; a copy disappears at the next reboot
    (the VIB does not).
  - Tested against C(esxcli) output recorded on ESXi 6.7, 7.0 and 8.0 hosts, replayed by stand-ins over SSH. The
    message ESXi prints when it refuses a non-installed file is not recorded (only its log line); the module
    recognises an exit status of 126 and C(Permission denied) or C(Operation not permitted).
seealso:
  - module: esxilab.iperf.esxi_firewall
    description: Open the firewall for the test window, and restore it.
  - module: esxilab.iperf.iperf_run
    description: Run the binary this module returns (its O(esxilab.iperf.iperf_run#module:binary) option).
"""

EXAMPLES = r"""
---
- name: Benchmark with an ESXi 8 host as iperf3 server, then put the host back
  block:
    - name: Make iperf3 runnable (relaxes execInstalledOnly for the test)
      esxilab.iperf.esxi_iperf_install:
        relax_exec_policy: true
      register: esxi_iperf

    - name: Start the server with the binary it returned
      esxilab.iperf.iperf_run:
        mode: server
        binary: "{{ esxi_iperf.binary }}"
        bind: 198.18.0.21

  always:
    - name: Put execInstalledOnly back and remove the copy
      esxilab.iperf.esxi_iperf_install:
        restore: "{{ esxi_iperf.restore | default({}) }}"

- name: ESXi 8 - use the shipped iperf3 itself with the appDom domain disabled for the test
  esxilab.iperf.esxi_iperf_install:
    method: bundled
    relax_exec_policy: true
    relax_mode: app_domain
  register: esxi_iperf

- name: ESXi 6.7 - upload the community VIB from the controller and install it unsigned (lab hosts only)
  esxilab.iperf.esxi_iperf_install:
    vib_upload: files/iperf-2.0.5-1-offline_bundle.zip
    allow_unsigned: true
  register: esxi_iperf

- name: ESXi 6.7 - install the VIB from the V-Front depot (the host needs outgoing HTTP)
  esxilab.iperf.esxi_iperf_install:
    vib_source: http://vibsdepot.v-front.de/depot/DAST/iperf-2.0.5/iperf-2.0.5-1.x86_64.vib
    allow_unsigned: true

- name: Remove the copy and the VIB again
  esxilab.iperf.esxi_iperf_install:
    restore: "{{ esxi_iperf.restore }}"
    remove_vib: true
"""

RETURN = r"""
left:
  description:
    - With O(restore), what could not be put back and stays in the restore journal - entry and reason (for example a
      ruleset the host no longer has). The rest is put back, then the task fails naming these.
  returned: when something could not be put back
  type: dict
  sample: {}
journal_clear_failed:
  description:
    - With O(restore), true when the host was put back but the journal could not be cleared (a lost session, after 3
      attempts); every value put back by a command has already left the journal with it.
  returned: when clearing the journal failed
  type: bool
journal_restored:
  description:
    - With O(restore), what the restore journal on the host recorded and this task put back too (the journal's
      values win over O(restore) because they are the earliest).
  returned: when the journal recorded something
  type: dict
  sample: {}
binary:
  description:
    - Absolute path of the iperf binary to run on the host, for example as
      O(esxilab.iperf.iperf_run#module:binary).
  returned: when installing
  type: str
  sample: /usr/lib/vmware/vsan/bin/iperf3.copy
source_binary:
  description: The installed binary that was copied (the same as RV(binary) with O(relax_mode=app_domain)).
  returned: when installing
  type: str
  sample: /usr/lib/vmware/vsan/bin/iperf3
tool:
  description: The iperf family of RV(binary).
  returned: when installing
  type: str
  choices: [iperf2, iperf3]
  sample: iperf3
tool_version:
  description:
    - The version RV(binary) printed when run with C(-v), for example C(3.9) or C(2.0.5).
    - C(null) in check mode when something is still to be done (the binary is not run then).
  returned: when installing
  type: str
  sample: "3.9"
verified:
  description: Whether RV(binary) was run and printed an iperf version banner.
  returned: when installing
  type: bool
  sample: true
esxi_version:
  description: The ESXi release, as printed by C(vmware -v).
  returned: when installing
  type: str
  sample: 8.0.3
esxi_build:
  description: The ESXi build number.
  returned: when installing
  type: int
  sample: 24585383
method:
  description: The method used, O(method=auto) resolved.
  returned: when installing
  type: str
  sample: bundled
commands:
  description: The commands run, in order (in check mode, those that would run).
  returned: always
  type: list
  elements: str
  sample: ["esxcli system settings advanced set -o /User/execInstalledOnly -i 0",
           "cp /usr/lib/vmware/vsan/bin/iperf3 /usr/lib/vmware/vsan/bin/iperf3.copy"]
changes:
  description: What was changed (in check mode, would be), one item per command.
  returned: always
  type: list
  elements: dict
  contains:
    action:
      description:
        - C(vib_install), C(copy_binary), C(relax_exec_policy), C(app_domain) when installing;
          C(restore_exec_policy), C(app_domain), C(remove_copy), C(vib_remove) when restoring.
      type: str
    description:
      description: What the command does, in words.
      type: str
    command:
      description: The command.
      type: str
previous:
  description:
    - The state before the task. When installing - C(binary_present), C(exec_installed_only) (the
      C(/User/execInstalledOnly) value, C(null) where the option does not exist, before ESXi 8.0),
      C(exec_installed_only_active), C(app_domain) (the C(appDom) level, C(null) when not read) and C(vib) (the iperf
      VIB's version, an empty string when it is not installed, C(null) when not read).
    - When restoring - C(created_files) (path to whether it exists), C(exec_installed_only), C(app_domain) and C(vib).
  returned: always
  type: dict
  sample: {"binary_present": false, "exec_installed_only": 1, "exec_installed_only_active": true,
           "app_domain": null, "vib": null}
current:
  description: The same keys after the task, read back from the host (predicted in check mode).
  returned: success
  type: dict
  sample: {"binary_present": true, "exec_installed_only": 0, "exec_installed_only_active": false,
           "app_domain": null, "vib": null}
restore:
  description:
    - What undoes this task; give it to O(restore) later. Only keys with something to undo are present, and it is
      empty when nothing changed (or when restoring).
    - C(created_files) - the copies this task made; C(installed_vib) - the VIB it installed;
      C(exec_installed_only_previous) - the C(/User/execInstalledOnly) value before; C(app_domain_previous) - the
      C(appDom) level before.
    - When the task fails halfway, it holds what the commands run so far changed.
  returned: always
  type: dict
  sample: {"created_files": ["/usr/lib/vmware/vsan/bin/iperf3.copy"], "exec_installed_only_previous": 1}
"""
