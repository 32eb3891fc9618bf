# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation of ``esxilab.iperf.role_vars_check``; the work is done by plugins/action/role_vars_check.py."""

from __future__ import annotations

DOCUMENTATION = r"""
module: role_vars_check
short_description: Warn about role variables that no option of the role matches (likely typos)
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Looks at the variables defined for the host (play, inventory, C(include_role) and extra vars) whose name starts
    with O(prefix), and warns about each one the role does not know - naming the closest valid name, for example
    C(paired_test_stream) - C(did you mean paired_test_streams?). Ansible itself ignores such a variable silently.
  - 'The valid names are read from the role in O(role_path), never copied: the options of every entry point of its
    C(meta/argument_specs.yml), the names in its C(defaults/main.yml) and C(vars/main.yml), and the facts and results
    its task files set (C(set_fact) keys and C(register) names, such as C(paired_test_results) or C(report_files)).'
  - Never fails for an unknown name (an unrelated variable may share the prefix); it warns. Runs on the controller only.
  - Also warns when more than one copy of the collection C(esxilab.iperf) is on Ansible's collection search paths
    (the C(collections) directory next to the playbook, the configured C(collections_path) /
    E(ANSIBLE_COLLECTIONS_PATH), and Python's C(sys.path) unless C(collections_scan_sys_path) is false - where
    Ansible itself looks), for example a checkout and a copy installed by C(ansible-galaxy) in
    C(~/.ansible/collections). Ansible uses the first one and says nothing about the others; the warning names the
    copy in use (the one this plugin was loaded from) and each other copy with its version. Copies are compared by
    real path, so a link to the checkout is the checkout. The text is the same for every host and role, so Ansible
    prints it once.
  - Used by the preflight of every role of this collection.
options:
  role_path:
    description: Directory of the role, normally C({{ role_path }}).
    type: path
    required: true
  prefix:
    description: Variables starting with this are checked. Default the role directory's name followed by C(_).
    type: str
  role_name:
    description: Name of the role in the warnings. Default C(esxilab.iperf.) followed by the role directory's name.
    type: str
  known:
    description:
      - More valid names, for variables the role reads by a configurable name (for example the host variable named by
        C(paired_test_address_var)).
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - esxilab.iperf.attributes
  - esxilab.iperf.attributes.action
attributes:
  check_mode:
    support: full
    details:
      - Only reads; runs unchanged in check mode.
  diff_mode:
    support: none
    details:
      - Nothing changes; there is nothing to diff.
  platform:
    support: full
    platforms: posix
    details:
      - Runs on the controller only; the host is not contacted.
"""

EXAMPLES = r"""
---
- name: Warn about paired_test_* variables the role does not know
  esxilab.iperf.role_vars_check:
    role_path: "{{ role_path }}"
    known: ["{{ paired_test_address_var }}"]
"""

RETURN = r"""
unknown:
  description: The unknown variables, sorted by name, each with the closest valid name.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The variable.
      type: str
      sample: paired_test_stream
    suggestion:
      description: The closest valid name; V(null) when none is close.
      type: str
      sample: paired_test_streams
shadowing:
  description: The warning about other copies of the collection; V(null) when only one copy is found.
  returned: always
  type: str
  sample: >-
    esxilab.iperf is loaded from /src/esxilab.iperf (a checkout, 1.0.0); another copy is on the collection paths and
    not used: /home/u/.ansible/collections/ansible_collections/esxilab/iperf (installed, 0.9.0). ...
msg:
  description: What was found.
  returned: always
  type: str
  sample: 1 unknown variable(s) of esxilab.iperf.paired_test
"""
