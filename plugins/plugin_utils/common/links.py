# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Another host's connection inside one action: what ``delegate_to`` does, for several hosts at once.

One task of ``esxilab.iperf.paired_test_host`` drives every host of a run. For each
it needs what Ansible would give a task on that host: the host's variables (inventory, play, role
and task variables, facts and registered results, from Ansible's own variable manager, as for a
delegated task), its connection plugin with that host's options (``ansible_host``, ``ansible_user``,
the SSH arguments, the shell), its become plugin when the task or host asks for one, and an action
plugin built on them. These are the steps ``TaskExecutor`` takes for ``delegate_to``; with SSH's
ControlMaster the session is the one the host's own tasks opened.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import copy
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ansible import constants as C
from ansible.errors import AnsibleConnectionFailure, AnsibleError
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

__all__ = ["HostLink", "LinkError", "link"]

_BUILD = threading.Lock()  # the loaders and the variable manager are not made for threads: one user at a time


class LinkError(RuntimeError):
    """A host of the play cannot be reached from this task (unknown, or its connection cannot be set up)."""


@dataclass
class HostLink:
    """A host's connection, play context, templar and variables, as a task on that host would have them."""

    host: str
    connection: Any
    play_context: Any
    templar: Any
    variables: dict[str, Any]
    lost: str | None = None  # the connection was lost in a step: no later step is tried
    other: HostLink | None = field(default=None, repr=False)  # twin()

    def twin(self) -> HostLink:
        """The host's link over a copy of its connection plugin, for a step made while another runs on the host: a
        connection plugin keeps its command's state in itself (the ssh plugin: its prompts and password pipe), so two
        commands at once take two plugins; the ssh plugin's ControlMaster gives both the host's one SSH connection."""
        with _BUILD:
            if self.other is None or self.other.lost:
                self.other = HostLink(
                    self.host, copy.copy(self.connection), self.play_context, self.templar, self.variables
                )
            return self.other

    def step(self, action: ActionBase, name: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """The result of the action ``esxilab.iperf.<name>`` with ``args`` on this host (``action``: the running
        task's action plugin, whose task and loaders it borrows)."""
        if self.lost:
            return {"unreachable": True, "msg": self.lost}
        # as TaskExecutor copies a task for each item of a loop: the task alone, on the same parent (a full copy
        # duplicated every block above it with all their tasks - the role's whole tree - for every step)
        task = action._task.copy(exclude_parent=True, exclude_tasks=True)
        task._parent = action._task._parent
        task.args = dict(args)
        task.action = f"esxilab.iperf.{name}"
        with _BUILD:  # the plugin loader imports a plugin's file on first use: not from two threads at once
            handler = action._shared_loader_obj.action_loader.get(
                f"esxilab.iperf.{name}",
                task=task,
                connection=self.connection,
                play_context=self.play_context,
                loader=action._loader,
                templar=self.templar,
                shared_loader_obj=action._shared_loader_obj,
            )
        try:
            result: dict[str, Any] = handler.run(task_vars=self.variables)
        except AnsibleConnectionFailure as exc:
            self.lost = f"{exc}"
            return {"unreachable": True, "msg": self.lost}
        finally:
            handler.cleanup()
        return result

    def value(self, name: str) -> Any:
        """The host's variable ``name``, templated for the host (None when it has none)."""
        if name not in self.variables:
            return None
        with _BUILD:
            return self.templar.template(self.variables[name])


def _plugin_options(plugin: Any, kind: str, variables: Mapping[str, Any], templar: Any) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for name in C.config.get_plugin_vars(kind, plugin._load_name):
        if name in variables:
            options[name] = templar.template(variables[name])
    return options


#: The links made by this worker process, per task and host: the items of a loop (the runs of a series) share them.
_MADE: dict[tuple[str, str], HostLink] = {}


def link(action: ActionBase, task_vars: Mapping[str, Any], host: str) -> HostLink:
    """``host``'s link: its variables and a connection set up as Ansible sets one up for a task on it; the same link
    for every item of the task's loop (a connection that was lost is set up again)."""
    key = (str(action._task._uuid), host)
    with _BUILD:
        made = _MADE.get(key)
        if made is None or made.lost:
            made = _MADE[key] = _link(action, task_vars, host)
        return made


def _link(action: ActionBase, task_vars: Mapping[str, Any], host: str) -> HostLink:
    if host == task_vars.get("inventory_hostname") and not action._task.delegate_to:
        return HostLink(host, action._connection, action._play_context, action._templar, dict(task_vars))
    hostvars = task_vars.get("hostvars")
    manager = getattr(hostvars, "_variable_manager", None)
    inventory = getattr(hostvars, "_inventory", None)
    found = inventory.get_host(host) if inventory is not None else None
    if manager is None or found is None:
        raise LinkError(f"{host} is not a host of the inventory this play runs with")
    task = action._task
    variables: dict[str, Any] = manager.get_vars(play=task.get_play(), host=found, task=task, include_hostvars=True)
    templar = action._templar.copy_with_new_env(available_variables=variables)
    try:
        play_context = action._play_context.set_task_and_variable_override(
            task=task, variables=variables, templar=templar
        )
        play_context.post_validate(templar=templar)
        if not play_context.remote_addr:
            play_context.remote_addr = found.address
        play_context.update_vars(variables)
        kind = (
            templar.template(variables["ansible_connection"])
            if variables.get("ansible_connection")
            else task.connection
        )
        play_context.connection = kind
        loaders = action._shared_loader_obj
        connection = loaders.connection_loader.get(
            kind, play_context, None, task_uuid=task._uuid, ansible_playbook_pid=str(os.getppid())
        )
        if connection is None:
            raise LinkError(f"the connection plugin {kind!r} of {host} was not found")
        become = (
            boolean(templar.template(variables["ansible_become"]))
            if variables.get("ansible_become") is not None
            else task.become
        )
        plugin = None
        if become:
            method = (
                templar.template(variables["ansible_become_method"])
                if variables.get("ansible_become_method")
                else task.become_method
            )
            plugin = loaders.become_loader.get(method)
            if plugin is None:
                raise LinkError(f"the become plugin {method!r} of {host} was not found")
        connection.set_become_plugin(plugin)
        play_context.set_attributes_from_plugin(connection)
        task_keys = task.dump_attrs()
        task_keys["timeout"] = play_context.timeout
        task_keys.pop("retries", None)
        if play_context.password:
            task_keys["password"] = play_context.password
        connection.set_options(
            task_keys=task_keys, var_options=connection._resolve_option_variables(variables, templar)
        )
        connection._shell.set_options(
            task_keys=task_keys, var_options=_plugin_options(connection._shell, "shell", variables, templar)
        )
        if connection.become is not None:
            if play_context.become_pass:
                task_keys["become_pass"] = play_context.become_pass
            connection.become.set_options(
                task_keys=task_keys, var_options=_plugin_options(connection.become, "become", variables, templar)
            )
        copy = dict(variables)
        connection.update_vars(copy)
        templar = templar.copy_with_new_env(available_variables=copy)
        connection._play_context = play_context.set_task_and_variable_override(
            task=task, variables=copy, templar=templar
        )
    except AnsibleError as exc:
        raise LinkError(f"the connection to {host} cannot be set up: {exc}") from exc
    return HostLink(host, connection, connection._play_context, templar, copy)
