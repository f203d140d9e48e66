# Copyright: zarf-planner maintainers
# Apache License 2.0 (see LICENSE)
"""Action plugin of colonel_byte.zarf_planner.zarf_bundle_catalog: installs the binaries of the
target's architecture once per collection version, then runs the module
(see plugins/plugin_utils/runner.py)."""

from __future__ import annotations

from ansible_collections.colonel_byte.zarf_planner.plugins.plugin_utils.runner import ZarfPlannerAction


class ActionModule(ZarfPlannerAction):
    """Runs zarf_bundle_catalog with the binaries of the target's architecture."""
