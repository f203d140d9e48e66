"""Offline stand-in for the get-pip.py bootstrap script ansible-test downloads.

ansible-test sanity gives each test its own virtual environment, created
without pip, and bootstraps pip into it with get-pip.py fetched from
ci-files.testing.ansible.com, which this enclave cannot reach
(https://github.com/ansible/ansible/issues/77304 names the cache file to
provide instead). This script does the same job with what is at hand: it
installs pip from the Python's own ensurepip, then installs the packages
ansible-test asked for (its pinned pip among them) from the configured
package index. `make sanity` puts it where ansible-test looks.
"""

import ensurepip
import os
import subprocess
import sys

# get-pip.py's own options; pip install does not know them.
GET_PIP_ONLY = {"--no-setuptools", "--no-wheel"}

# ensurepip points PIP_CONFIG_FILE at /dev/null for its own run; the
# install after it must read the machine's pip configuration (its index
# and certificates), so it gets the environment as it was before.
env = dict(os.environ)
ensurepip.bootstrap()
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install"] + [a for a in sys.argv[1:] if a not in GET_PIP_ONLY], env=env))
