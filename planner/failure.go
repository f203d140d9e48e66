package planner

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Problem kinds. Each names a class of reason no plan is possible.
const (
	// KindCycle: packages require each other; the message gives the full path
	// and the field behind every edge. Break the cycle in a document.
	KindCycle = "cycle"
	// KindMissing: a requirement that nothing in the directory provides.
	// Add the archive, or plan cluster-aware if the cluster provides it.
	KindMissing = "missing"
	// KindAmbiguous: several archives could satisfy one thing and nothing
	// says which; resolve with the option the message names.
	KindAmbiguous = "ambiguous"
	// KindInvalid: an archive's document or metadata is malformed.
	KindInvalid = "invalid"
	// KindVersionConflict: no version in the directory satisfies every
	// consumer's constraint.
	KindVersionConflict = "version_conflict"
	// KindConflict: a package that lost an alternative group is required
	// directly by another, or the operator excluded what is needed. The
	// service reports it too, after planning (planner/conflicts): two
	// packages of the plan would create the same object or Helm release,
	// or, in cluster mode, the cluster holds one of their objects for
	// another owner. Plan one of them only, or change a package.
	KindConflict = "conflict"
	// KindCRDUpgrade: in cluster mode, a package replaces a CRD the
	// cluster has in a way that would strand what it stores or that the
	// API server refuses: a version objects are still stored in dropped
	// (or no longer served), the scope or the names changed, or a
	// conversion webhook whose Service nothing provides. The service
	// reports it, after planning (planner/crdupgrade). Migrate the stored
	// objects first, or change the package.
	KindCRDUpgrade = "crd_upgrade"
	// KindIntegrity: an archive that fails an integrity check, cannot be
	// read whole or is over a limit, when the operator set integrity to
	// fail. Remove or replace the archive. The service reports it.
	KindIntegrity = "integrity"
	// KindCluster: the cluster (or its saved snapshot) a cluster-aware plan
	// needs could not be read. The service reports it; the planner never
	// sees the cluster it could not read.
	KindCluster = "cluster"
	// KindEmpty: the sources hold no Zarf package archive the plan can
	// use (nothing, only other files, or only archives left out as
	// unusable), and the operator did not say an empty plan is expected
	// (allow_empty). The message names the sources and what they hold.
	// Check the path; the service reports it.
	KindEmpty = "empty"
	// KindSignature: an archive's cosign signature does not verify with
	// the operator's public_key, or, with require_signatures, it is not
	// signed. Replace the archive or give the right key. The service
	// reports it.
	KindSignature = "signature"
	// KindStale: a saved plan no longer holds (an archive, the cluster, an
	// option or the planner changed since it was saved), one problem per
	// difference. Plan and review again. The service reports it.
	KindStale = "stale"
	// KindPolicy: a package the plan would deploy claims more than the
	// operator's maximal policy allows (or the policy itself cannot be
	// read); the message names the package, the claim, the object that
	// makes it (component, file, kind/name) and the policy line it
	// breaks. Change the package or widen the policy. The service
	// reports it, after planning, for every package of the plan at once.
	KindPolicy = "policy"
)

// Kinds lists every problem kind, in the order a summary counts them: a
// new slice each call, so no caller can change another's. A new kind is
// a constant above, its entry in kindOrder, and a test that makes it.
func Kinds() []string { return slices.Clone(kindOrder) }

// kindOrder is the order of Kinds.
var kindOrder = []string{KindStale, KindCluster, KindEmpty, KindSignature, KindIntegrity, KindInvalid, KindCycle, KindMissing, KindAmbiguous, KindVersionConflict, KindConflict, KindCRDUpgrade, KindPolicy}

// Failure is the result when no plan is possible: every problem found, in a
// deterministic order, and the graph of the packages the plan would have
// deployed when planning got as far as choosing them (else empty).
type Failure struct {
	Problems []Problem
	// Graph is the chosen packages and their edges. Levels are the plan's
	// rule with each cycle's closing edge left out: following requirements
	// from the lexically first package, an edge back to a package on the
	// path being followed does not raise a level.
	Graph Graph
	// Warnings are what the planner noticed on the way (uses assumed
	// present, operator documents that apply to no archive), sorted.
	Warnings []string
}

func (f *Failure) Error() string {
	if len(f.Problems) == 1 {
		return f.Problems[0].Message
	}
	msgs := make([]string, len(f.Problems))
	for i, p := range f.Problems {
		msgs[i] = p.Message
	}
	return fmt.Sprintf("%d problems prevent a plan: %s", len(f.Problems), strings.Join(msgs, "; "))
}

// AsFailure returns the *Failure inside err, if any.
func AsFailure(err error) (*Failure, bool) {
	var f *Failure
	ok := errors.As(err, &f)
	return f, ok
}
