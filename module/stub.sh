#!/bin/sh
# WANT_JSON
# @MODULE@: a module of the colonel_byte.zarf_planner collection @VERSION@.
# Its action plugin installs the module and daemon binaries of this host's
# architecture (once per collection version), then Ansible runs this script
# with the arguments file; it runs the installed module binary from the
# directory the action plugin installed it in (ZARF_PLANNER_INSTALL_DIR,
# which it sets for this script).
d="${ZARF_PLANNER_INSTALL_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/colonel_byte.zarf_planner/@VERSION@}"
if [ -f "$d/zarf_planner_module" ] && [ ! -x "$d/zarf_planner_module" ]; then
  printf '%s\n' '{"failed": true, "changed": false, "msg": "the zarf-planner binaries of collection @VERSION@ in '"$(printf %s "$d" | tr -d '\000-\037' | sed 's/[\\"]/\\&/g')"' cannot be executed (a filesystem mounted noexec?): set the variable zarf_planner_install_dir or ZARF_PLANNER_INSTALL_DIR in the task environment to a directory on a filesystem that allows execution"}'
  exit 1
fi
if [ ! -x "$d/zarf_planner_module" ]; then
  printf '%s\n' '{"failed": true, "changed": false, "msg": "the zarf-planner binaries of collection @VERSION@ are not installed on this host: run the module by its FQCN, colonel_byte.zarf_planner.@MODULE@, whose action plugin installs them"}'
  exit 1
fi
ZARF_PLANNER_MODULE=@MODULE@ exec "$d/zarf_planner_module" "$1"
