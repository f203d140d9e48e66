package claims

import "time"

// SetArchiveRenderBudget shortens ArchiveRenderBudget for a test; the
// returned function restores it.
func SetArchiveRenderBudget(d time.Duration) (restore func()) {
	old := archiveRenderBudget
	archiveRenderBudget = d
	return func() { archiveRenderBudget = old }
}

// BuiltinRoles is the table of the ClusterRoles Kubernetes makes.
var BuiltinRoles = builtinRoles

// Aggregation is how a built-in role aggregates others.
type Aggregation = aggregation

// BuiltinAggregations are the built-in roles that aggregate others.
var BuiltinAggregations = builtinAggregations

// BuiltinLabels are the labels of the built-in roles.
var BuiltinLabels = builtinLabels

// HelmDocuments cuts a rendered template as Helm cuts it.
var HelmDocuments = helmDocuments
