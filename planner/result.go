package planner

import (
	"fmt"

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
}

// Actions an item can carry.
const (
	ActionDeploy   = "deploy"
	ActionUpgrade  = "upgrade"
	ActionRedeploy = "redeploy"
)

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

func (s Source) String() string {
	switch s.By {
	case ByInferred:
		return fmt.Sprintf("inferred from %s in %s", s.Field, s.Archive)
	case ByOperator:
		return fmt.Sprintf("%s of the operator's %s, for %s", s.Field, s.Document, s.Archive)
	}
	return fmt.Sprintf("%s in %s", s.Field, s.Archive)
}
