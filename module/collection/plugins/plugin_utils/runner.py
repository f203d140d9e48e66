# Copyright: zarf-planner maintainers
# Apache License 2.0 (see LICENSE)
"""Run a zarf-planner module on its target with the binaries of the target's
architecture, installing them there once per collection version.

The collection carries static Linux binaries for amd64 and arm64 (the module
and the zarf-planner daemon, which is also its chart renderer), xz-packed,
under ``binaries/linux-<arch>/<binary>.xz``, with a ``binaries/SHA256SUMS``
manifest of them unpacked. Each module in ``plugins/modules`` is a small
POSIX shell script that runs the module binary installed in the install
directory on the target, the first of:

1. ``ZARF_PLANNER_INSTALL_DIR`` in the task's ``environment`` (task, block
   or play);
2. the variable ``zarf_planner_install_dir`` (inventory, play or task vars);
3. ``ZARF_PLANNER_INSTALL_DIR`` in the target's own environment;
4. ``${XDG_DATA_HOME:-$HOME/.local/share}/colonel_byte.zarf_planner/<version>``.

This action plugin, run on the controller before each module, asks the
target for its architecture, for that directory, whether the binaries there
can run, and for its install marker; when the marker is missing or names
other bytes (so a later run of the same version copies nothing), unpacks the
two binaries of the target's architecture on the controller, checks each
against SHA256SUMS and copies them there; then runs the module
with ``ZARF_PLANNER_INSTALL_DIR`` set to that directory, so the module runs
the very binaries installed. A directory on a filesystem mounted ``noexec``
(where a hardened host often puts ``$HOME``) is refused, naming what to set.
The module finds the daemon beside itself, so no daemon_path is needed.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import lzma
import os
import shlex
import tempfile

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

# Binaries of each architecture, as the target's uname -m names it.
ARCHITECTURES = {
    "x86_64": "amd64",
    "amd64": "amd64",
    "aarch64": "arm64",
    "arm64": "arm64",
}

BINARIES = ("zarf_planner_module", "zarf-planner")

COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The environment variable and the variable that name the install directory.
ENV_INSTALL_DIR = "ZARF_PLANNER_INSTALL_DIR"
VAR_INSTALL_DIR = "zarf_planner_install_dir"

# The probe prints the target's architecture, the install directory,
# "exec" or "not-exec" (the installed module binary is there and the kernel
# would not run it: a noexec mount, or a mode without x, which an install
# repairs), and the marker of what is installed there (empty when nothing is).
PROBE = (
    'uname -m; '
    'd="${ZARF_PLANNER_INSTALL_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/colonel_byte.zarf_planner/%s}"; '
    'printf "%%s\\n" "$d"; '
    'if [ -f "$d/zarf_planner_module" ] && [ ! -x "$d/zarf_planner_module" ]; then echo not-exec; else echo exec; fi; '
    'cat "$d/.installed" 2>/dev/null || true'
)

# Exit codes of the install script: the kernel will not execute the files
# it installed (a noexec mount), or the installed daemon did not run.
NOEXEC, NORUN = 3, 4

# What to set, said whenever the install directory cannot be used.
WHAT_TO_SET = (
    "set the variable %s (inventory, play or task vars) or %s in the task's environment "
    "to an absolute directory on a filesystem that allows execution, such as /opt/zarf-planner or /var/lib/zarf-planner"
) % (VAR_INSTALL_DIR, ENV_INSTALL_DIR)


def collection_version():
    """The version of this collection, from its MANIFEST.json."""
    with open(os.path.join(COLLECTION_ROOT, "MANIFEST.json"), encoding="utf-8") as f:
        return json.load(f)["collection_info"]["version"]


def unpack(name, digest, into):
    """Unpack binaries/<name>.xz into the directory into, check it against
    its sha256 from SHA256SUMS, and return its path."""
    packed = os.path.join(COLLECTION_ROOT, "binaries", name + ".xz")
    out = os.path.join(into, os.path.basename(name))
    h = hashlib.sha256()
    try:
        with lzma.open(packed) as src, open(out, "wb") as dst:
            for chunk in iter(lambda: src.read(1 << 20), b""):
                h.update(chunk)
                dst.write(chunk)
    except (OSError, lzma.LZMAError, EOFError) as e:
        raise AnsibleActionFail(
            "zarf-planner: the collection's binaries/%s.xz cannot be unpacked (%s): reinstall the collection" % (name, e)
        )
    if h.hexdigest() != digest:
        raise AnsibleActionFail(
            "zarf-planner: the collection's binaries/%s.xz unpacks to bytes of sha256 %s, not the %s binaries/SHA256SUMS names: reinstall the collection"
            % (name, h.hexdigest(), digest)
        )
    return out


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

    # The install directory the binaries were found or installed in, which
    # the module is then run with (ZARF_PLANNER_INSTALL_DIR); None before.
    _install_dir = None

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp  # the module makes and removes its own
        try:
            self._install_dir = self._install(self._install_env(task_vars or {}))
        except AnsibleActionFail as e:
            result.update(failed=True, msg=str(e))
            return result
        result.update(self._execute_module(module_name=self._task.action, module_args=self._task.args, task_vars=task_vars))
        return result

    def _compute_environment_string(self, raw_environment_out=None):
        """The task's environment, with ZARF_PLANNER_INSTALL_DIR set to the
        directory the binaries were installed in, so that the module runs
        those and no others."""
        env = {}
        super()._compute_environment_string(env)
        if self._install_dir:
            env[ENV_INSTALL_DIR] = self._install_dir
        if isinstance(raw_environment_out, dict):
            raw_environment_out.clear()
            raw_environment_out.update(env)
        return self._connection._shell.env_prefix(**env)

    def _install_env(self, task_vars):
        """The environment the probe and the install run in: the task's
        own, with ZARF_PLANNER_INSTALL_DIR from zarf_planner_install_dir
        unless the task's environment sets it. Either must be absolute."""
        env = {}
        super()._compute_environment_string(env)
        source = "%s in the task's environment" % ENV_INSTALL_DIR
        value = env.get(ENV_INSTALL_DIR)
        if value in (None, ""):
            env.pop(ENV_INSTALL_DIR, None)
            value = task_vars.get(VAR_INSTALL_DIR)
            if value is not None:
                value = self._templar.template(value)
            source = "the variable %s" % VAR_INSTALL_DIR
        if value in (None, ""):
            return env
        if not isinstance(value, str) or not value.startswith("/") or "\n" in value:
            raise AnsibleActionFail(
                "zarf-planner: %s is %s; the install directory must be an absolute path on the target (%s)"
                % (source, json.dumps(value, default=str), WHAT_TO_SET)
            )
        env[ENV_INSTALL_DIR] = value
        return env

    def _shell(self, cmd, what, env=None):
        res = self._low_level_execute_command(self._with_env(cmd, env))
        if res.get("rc", 1) != 0:
            raise AnsibleActionFail(
                "zarf-planner: %s failed on the target (rc %s): %s" % (what, res.get("rc"), (res.get("stderr") or res.get("stdout") or "").strip())
            )
        return res.get("stdout", "")

    def _with_env(self, script, env):
        """script run by /bin/sh with env set."""
        prefix = self._connection._shell.env_prefix(**env) if env else ""
        return ("%s /bin/sh -c %s" % (prefix, shlex.quote(script))).strip()

    def _install(self, env):
        """Install this version's binaries for the target's architecture in
        the install directory env names (else the default), unless they are
        there already, and return that directory."""
        version = collection_version()
        lines = self._shell(PROBE % shlex.quote(version), "probing the architecture and install directory", env).splitlines()
        if len(lines) < 3:
            raise AnsibleActionFail("zarf-planner: the target answered the probe with %r" % lines)
        machine, directory, runs = lines[0].strip(), lines[1].strip(), lines[2].strip()
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
        installed = "\n".join(l.strip() for l in lines[3:] if l.strip())
        if installed == want and runs == "exec":
            return directory
        remote_tmp = self._make_tmp_path()
        try:
            staged = []
            with tempfile.TemporaryDirectory(prefix="zarf-planner-") as local_tmp:
                # Unpacked side by side (lzma lets go of the GIL while it
                # decompresses): the daemon's ~1 s is the wait.
                names = ["linux-%s/%s" % (arch, b) for b in BINARIES]
                with concurrent.futures.ThreadPoolExecutor(len(names)) as pool:
                    locals_ = list(pool.map(lambda n: unpack(n, sums[n], local_tmp), names))
                for b, local in zip(BINARIES, locals_):
                    remote = self._connection._shell.join_path(remote_tmp, b)
                    self._transfer_file(local, remote)
                    staged.append(remote)
            q = shlex.quote
            marker = self._connection._shell.join_path(remote_tmp, ".installed")
            self._transfer_data(marker, want + "\n")
            # zarf-planner, which is also the chart renderer, is
            # executable but not readable by others (0711): a daemon run
            # as root runs its renderers as users of their own, which the
            # kernel then makes not dumpable from their start (the daemon
            # refuses a renderer that user could read).
            # Each file is renamed into place (rename is atomic), the marker
            # last: a concurrent run, or a module starting meanwhile, sees
            # whole files, and the marker only once every file is there.
            # Before the marker, the binaries must run where they are: a
            # file with its x bits that the kernel still will not execute
            # is on a noexec mount.
            script = (
                "set -e; umask 022; d=%(d)s; mkdir -p \"$d\"; "
                "for f in %(files)s; do b=$(basename \"$f\"); cp \"$f\" \"$d/.$b.$$\"; "
                "case \"$b\" in zarf-planner) m=0711;; *) m=0755;; esac; "
                "chmod $m \"$d/.$b.$$\"; mv -f \"$d/.$b.$$\" \"$d/$b\"; done; "
                "[ -x \"$d/zarf_planner_module\" ] || exit %(noexec)d; "
                "\"$d/zarf-planner\" version >/dev/null || exit %(norun)d; "
                "cp %(marker)s \"$d/..installed.$$\"; chmod 0644 \"$d/..installed.$$\"; mv -f \"$d/..installed.$$\" \"$d/.installed\""
            ) % {"d": q(directory), "files": " ".join(q(s) for s in staged), "marker": q(marker), "noexec": NOEXEC, "norun": NORUN}
            res = self._low_level_execute_command(self._with_env(script, None))
            rc = res.get("rc", 1)
            said = (res.get("stderr") or res.get("stdout") or "").strip()
            if rc == NOEXEC:
                raise AnsibleActionFail(
                    "zarf-planner: the install directory %s is on a filesystem mounted noexec: the binaries copied there cannot run; %s"
                    % (directory, WHAT_TO_SET)
                )
            if rc == NORUN:
                raise AnsibleActionFail(
                    "zarf-planner: the zarf-planner binary installed in %s does not run there (%s); %s" % (directory, said, WHAT_TO_SET)
                )
            if rc != 0:
                raise AnsibleActionFail(
                    "zarf-planner: installing the zarf-planner binaries in %s failed on the target (rc %s): %s" % (directory, rc, said)
                )
        finally:
            self._remove_tmp_path(remote_tmp)
        return directory
