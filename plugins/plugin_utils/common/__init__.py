# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What every controller-side concern shares, whatever host or tool it is about.

* :mod:`.argspec` -- an action's argument spec, read from its module's ``DOCUMENTATION``;
* :mod:`.controller` -- the start every controller-only action shares (check mode, validation);
* :mod:`.csv_cells` -- the CSV cell convention and the CSV injection guard;
* :mod:`.secrets` -- the one masker of secrets in URLs (``mask_url``, ``mask_text``, ``redact``);
* :mod:`.role_vars` -- role variables no role option matches (likely typos), with the closest name.

Only :mod:`.controller` imports Ansible; the rest is plain data.

Private package: not part of the collection's public API.
"""
