package contract

// planResultKeys are the top-level keys of a plan result, planned or
// failed (service.Result): the module returns no other key of the
// daemon's document, whatever the document holds.
var planResultKeys = map[string]bool{
	"zarf_packages_to_deploy": true, "already_installed": true, "installed_not_in_bundle": true,
	"excluded": true, "warnings": true, "graph": true, "mermaid": true, "plan_digest": true,
	"ignored": true, "approvals": true, "failed": true, "msg": true, "errors": true,
}

// PlanResultKey reports whether key is a top-level key of a plan result.
func PlanResultKey(key string) bool { return planResultKeys[key] }
