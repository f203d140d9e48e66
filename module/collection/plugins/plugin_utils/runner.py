# Copyright: zarf-planner maintainers
# Apache License 2.0 (see LICENSE)
"""Run a zarf-planner module on its target with the binaries of the target's
architecture, installing them there once per collection version.

The collection carries static Linux binaries for amd64 and arm64 (the module,
the zarf-planner daemon and its chart renderer) under ``binaries/linux-<arch>/`` with a
``binaries/SHA256SUMS`` manifest. Each module in ``plugins/modules`` is a small
POSIX shell script that runs the module binary installed in

    ${ZARF_PLANNER_INSTALL_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/colonel_byte.zarf_planner/<version>}

on the target. This action plugin, run on the controller before each module,
asks the target for its architecture and for that directory's install
marker, copies the three binaries of the target's architecture there when the
marker is missing or names other bytes (so a later run of the same version
copies nothing), then runs the module. The module finds the daemon beside
itself (and the daemon its renderer), so no daemon_path is needed.
"""

from __future__ import annotations

import json
import os
import shlex

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

# Binaries of each architecture, as the target's uname -m names it.
ARCHITECTURES = {
    "x86_64": "amd64",
    "amd64": "amd64",
    "aarch64": "arm64",
    "arm64": "arm64",
}

BINARIES = ("zarf_planner_module", "zarf-planner", "zarf-planner-render")

COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The probe prints the target's architecture, the install directory and
# the marker of what is installed there (empty when nothing is).
PROBE = (
    'uname -m; '
    'd="${ZARF_PLANNER_INSTALL_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/colonel_byte.zarf_planner/%s}"; '
    'printf "%%s\\n" "$d"; '
    'cat "$d/.installed" 2>/dev/null || true'
)


def collection_version():
    """The version of this collection, from its MANIFEST.json."""
    with open(os.path.join(COLLECTION_ROOT, "MANIFEST.json"), encoding="utf-8") as f:
        return json.load(f)["collection_info"]["version"]


def manifest():
    """The sha256 of every shipped binary, by its path under binaries/."""
    sums = {}
    with open(os.path.join(COLLECTION_ROOT, "binaries", "SHA256SUMS"), encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                sums[parts[1]] = parts[0]
    return sums


class ZarfPlannerAction(ActionBase):
    """The action plugin of every zarf-planner module."""

    TRANSFERS_FILES = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp  # the module makes and removes its own
        try:
            self._install()
        except AnsibleActionFail as e:
            result.update(failed=True, msg=str(e))
            return result
        result.update(self._execute_module(module_name=self._task.action, module_args=self._task.args, task_vars=task_vars))
        return result

    def _shell(self, cmd, what):
        res = self._low_level_execute_command(cmd)
        if res.get("rc", 1) != 0:
            raise AnsibleActionFail(
                "zarf-planner: %s failed on the target (rc %s): %s" % (what, res.get("rc"), (res.get("stderr") or res.get("stdout") or "").strip())
            )
        return res.get("stdout", "")

    def _install(self):
        """Install this version's binaries for the target's architecture,
        unless they are there already."""
        version = collection_version()
        lines = self._shell(PROBE % shlex.quote(version), "probing the architecture and install directory").splitlines()
        if len(lines) < 2:
            raise AnsibleActionFail("zarf-planner: the target answered the probe with %r" % lines)
        machine, directory = lines[0].strip(), lines[1].strip()
        arch = ARCHITECTURES.get(machine)
        if arch is None:
            raise AnsibleActionFail(
                "zarf-planner: the target's architecture is %s; this collection carries linux/amd64 and linux/arm64 binaries" % machine
            )
        sums = manifest()
        # A collection may carry fewer platforms than every one (make demo
        # builds this machine's only): say so rather than fail on a key.
        missing = [b for b in BINARIES if "linux-%s/%s" % (arch, b) not in sums]
        if missing:
            raise AnsibleActionFail(
                "zarf-planner: the target's architecture is %s; this collection carries no linux/%s binaries (%s)"
                % (machine, arch, ", ".join(missing))
            )
        want = "\n".join("%s  %s" % (sums["linux-%s/%s" % (arch, b)], b) for b in BINARIES)
        installed = "\n".join(l.strip() for l in lines[2:] if l.strip())
        if installed == want:
            return
        remote_tmp = self._make_tmp_path()
        try:
            staged = []
            for b in BINARIES:
                local = os.path.join(COLLECTION_ROOT, "binaries", "linux-%s" % arch, b)
                remote = self._connection._shell.join_path(remote_tmp, b)
                self._transfer_file(local, remote)
                staged.append(remote)
            q = shlex.quote
            marker = self._connection._shell.join_path(remote_tmp, ".installed")
            self._transfer_data(marker, want + "\n")
            # The chart renderer is executable but not readable by others
            # (0711): a daemon run as root runs it as a user of its own,
            # which the kernel then makes not dumpable from its start
            # (the daemon refuses a renderer that user could read).
            # Each file is renamed into place (rename is atomic), the marker
            # last: a concurrent run, or a module starting meanwhile, sees
            # whole files, and the marker only once every file is there.
            script = (
                "set -e; umask 022; d=%(d)s; mkdir -p \"$d\"; "
                "for f in %(files)s; do b=$(basename \"$f\"); cp \"$f\" \"$d/.$b.$$\"; "
                "case \"$b\" in zarf-planner-render) m=0711;; *) m=0755;; esac; "
                "chmod $m \"$d/.$b.$$\"; mv -f \"$d/.$b.$$\" \"$d/$b\"; done; "
                "cp %(marker)s \"$d/..installed.$$\"; chmod 0644 \"$d/..installed.$$\"; mv -f \"$d/..installed.$$\" \"$d/.installed\""
            ) % {"d": q(directory), "files": " ".join(q(s) for s in staged), "marker": q(marker)}
            self._shell("/bin/sh -c %s" % q(script), "installing the zarf-planner binaries in %s" % directory)
        finally:
            self._remove_tmp_path(remote_tmp)
