package planner

import (
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/result"
)

// The plan document's types are declared in package result (a leaf, read
// without the solver); the planner names them as its own.
type (
	// Plan is the result of planning: the output contract of
	// zarf_bundle_plan.
	Plan = result.Plan
	// Item is one archive to deploy, in deployment order.
	Item = result.Item
	// Barrier is what must hold after an item is deployed and before the
	// next one starts.
	Barrier = result.Barrier
	// AlreadyInstalled is a package a cluster-aware plan does not deploy.
	AlreadyInstalled = result.AlreadyInstalled
	// Excluded is a candidate archive that is not planned, with why.
	Excluded = result.Excluded
	// Graph is the dependency graph of the planned packages.
	Graph = result.Graph
	// Node is a planned package.
	Node = result.Node
	// Edge says From deploys before To, of what Kind, and why.
	Edge = result.Edge
	// Source locates the requirement an edge comes from.
	Source = result.Source
	// Problem is one reason no plan is possible.
	Problem = result.Problem
	// Missing is a requirement nothing satisfies.
	Missing = result.Missing
)

// Actions an item can carry.
const (
	ActionDeploy   = "deploy"
	ActionUpgrade  = "upgrade"
	ActionRedeploy = "redeploy"
)

// Edge kinds. A requirement inferred from a use has the use's kind
// (facts.UseCRD, UseStorageClass, UsePriorityClass), the first two
// shared with the declared requirements of the same thing.
const (
	EdgePackage       = "package"
	EdgeAlias         = "alias"
	EdgeGroup         = "group"
	EdgeCRD           = facts.UseCRD
	EdgeStorageClass  = facts.UseStorageClass
	EdgeCapability    = "capability"
	EdgePriorityClass = facts.UsePriorityClass
)

// Who stated a requirement (Source.By).
const (
	ByArchive  = result.ByArchive
	ByOperator = result.ByOperator
	ByInferred = result.ByInferred
)
