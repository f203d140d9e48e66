// Package result declares the plan document's types: what the planner
// returns (Plan, its items, barriers, graph and edges) and what a failure
// lists (Problem). They are a leaf of the planner, with no logic beyond
// saying where a requirement came from, so that whatever reads a plan (the
// documents' package, the module, the renderers) reads it without the
// solver; package planner refers to them under their own names.
package result

import (
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Plan is the result of planning: the output contract of zarf_bundle_plan.
type Plan struct {
	Packages []Item `json:"zarf_packages_to_deploy"`
	// AlreadyInstalled lists the packages a cluster-aware plan does not
	// deploy because they are installed, healthy and of the same build.
	// (Not "skipped": Ansible reserves that key.)
	AlreadyInstalled []AlreadyInstalled `json:"already_installed"`
	// InstalledNotInBundle lists packages installed on the cluster that the
	// directory does not hold; they are reported, never planned for removal.
	InstalledNotInBundle []facts.InstalledPackage `json:"installed_not_in_bundle"`
	Excluded             []Excluded               `json:"excluded"`
	Warnings             []string                 `json:"warnings"`
	Graph                Graph                    `json:"graph"`
	Mermaid              string                   `json:"mermaid"`
	PlanDigest           string                   `json:"plan_digest"`
}

// Item is one archive to deploy, in deployment order.
type Item struct {
	Name         string   `json:"name"`
	Version      string   `json:"version"`
	Path         string   `json:"path"`
	SHA256       string   `json:"sha256"`
	Architecture string   `json:"architecture"`
	Flavor       string   `json:"flavor"`
	Level        int      `json:"level"`
	After        []string `json:"after"`
	Reasons      []string `json:"reasons"`
	Action       string   `json:"action"`
	Barrier      Barrier  `json:"barrier"`
	// Signature is verified (its cosign signature holds with public_key)
	// or unsigned; absent when no public_key was given.
	Signature string `json:"signature,omitempty"`
	// Waivers are the checks the operator's policy waived for this item
	// (crd_upgrade_waivers), each with what it would have refused and
	// the policy's reason; absent when none.
	Waivers []string `json:"waivers,omitempty"`
}

// Barrier is what must hold after an item is deployed and before the next
// one starts.
type Barrier struct {
	// CRDs must be Established and NamesAccepted.
	CRDs []string `json:"crds"`
	// StorageClasses must exist (and their CSI driver, for a CSI provisioner).
	StorageClasses []string `json:"storage_classes"`
	// Namespaces must be Active.
	Namespaces []string `json:"namespaces"`
	// Package names the zarf deployed-package state that must be healthy.
	Package string `json:"package"`
}

// AlreadyInstalled is a package a cluster-aware plan does not deploy: the
// cluster has it installed, healthy and of the same build.
type AlreadyInstalled struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Path    string `json:"path"`
	Reason  string `json:"reason"`
}

// Excluded is a candidate archive that is not planned, with why (the
// exclude option is one reason among several).
type Excluded struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Path    string `json:"path"`
	Reason  string `json:"reason"`
}

// Graph is the dependency graph of the planned packages.
type Graph struct {
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
}

// Node is a planned package.
type Node struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Level   int    `json:"level"`
}

// Edge says From deploys before To, of what Kind, and which field of which
// archive asked for it.
type Edge struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Kind   string `json:"kind"`
	Source Source `json:"source"`
}

// Who stated a requirement (Source.By).
const (
	// ByArchive: the PackagePrerequisites document the archive carries.
	ByArchive = "archive"
	// ByOperator: an operator's document (the prerequisites option),
	// which replaced the archive's.
	ByOperator = "operator"
	// ByInferred: read from what the package's objects use (the CRD of
	// a custom resource, the class a claim or pod names).
	ByInferred = "inferred"
)

// Source locates the requirement an edge comes from.
type Source struct {
	// Archive is the base name of the consumer's archive.
	Archive string `json:"archive"`
	// Field is the requirement's path in the document, e.g.
	// requires.crds[0]; for an inferred requirement, the object that
	// uses what is required, as facts.Origin writes it.
	Field string `json:"field"`
	// Value is what was required (a package name, CRD, class or capability).
	Value string `json:"value"`
	// By says who stated it: ByArchive, ByOperator or ByInferred.
	By string `json:"by"`
	// Document names the operator's document (ByOperator): its file,
	// and its place in the file when it holds several.
	Document string `json:"document,omitempty"`
	// Object is the object an inferred requirement was read from
	// (ByInferred).
	Object *facts.Origin `json:"object,omitempty"`
}

// String says where the requirement was stated, for a message.
func (s Source) String() string {
	// Joined, not formatted: a plan says it for every edge.
	switch s.By {
	case ByInferred:
		return "inferred from " + s.Field + " in " + s.Archive
	case ByOperator:
		return s.Field + " of the operator's " + s.Document + ", for " + s.Archive
	}
	return s.Field + " in " + s.Archive
}

// Problem is one reason no plan is possible. Beside its sentence it says,
// for the kinds that have one, the same in structure, so a failure can be
// drawn as well as told: a cycle's edges, a missing requirement's owner.
type Problem struct {
	Kind     string   `json:"kind"`
	Packages []string `json:"packages"`
	Message  string   `json:"message"`
	// Edges are a cycle's edges, in the order of its path (KindCycle).
	Edges []Edge `json:"edges,omitempty"`
	// Missing is the requirement nothing provides (KindMissing).
	Missing *Missing `json:"missing,omitempty"`
}

// Missing is a requirement no archive in the directory (nor the cluster)
// satisfies: the package that has it and what it asks for.
type Missing struct {
	// Package and Version name the archive that requires it.
	Package string `json:"package"`
	Version string `json:"version"`
	// Kind is the requirement's edge kind (package, alias, group, crd,
	// storage_class, capability).
	Kind string `json:"kind"`
	// What is the thing required, as the message says it: "CRD
	// gadgets.example.com", "database >=2.0.0", "group storage
	// (csi-rook-ceph or csi-longhorn)".
	What string `json:"what"`
	// Source locates the requirement; its Value is the name required (the
	// names, comma-separated, of an alias set or group).
	Source Source `json:"source"`
}
