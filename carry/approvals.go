package carry

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/filesum"
	"github.com/colonel-byte/zarf-planner/privdir"
)

// ApprovalSuffix ends every approval's file name; ApprovalFile puts the
// key's fingerprint before it.
const ApprovalSuffix = ".sigstore.json"

// ApprovalFile is where the approval of plan by the key of fingerprint is
// written: beside the plan, named for the plan and the key, so approvals
// by several keys sit side by side and travel with the plan.
func ApprovalFile(plan, fingerprint string) string {
	fp := strings.TrimPrefix(fingerprint, "sha256:")
	if len(fp) > 16 {
		fp = fp[:16]
	}
	return plan + ".approved-by-" + fp + ApprovalSuffix
}

// listBatch is how many names Approvals takes from the directory at a
// time, and maxNamed how many files over contract.MaxApprovals it names
// one by one (any beyond are counted in one note).
const (
	listBatch = 1024
	maxNamed  = 64
)

// Approvals reads the approval files of the saved plan at plan, for the
// daemon to check: the files beside it named as ApprovalFile names them
// (plan's name, ".approved-by-", anything, ApprovalSuffix), each as
// filesum.Named{Name: its path, Data: its bytes}. It never blocks and
// never fails on what it finds: the directory is opened once (following
// a symlink to it: plan_file is the operator's option) and each file is
// opened relative to that directory's descriptor without following a
// symlink and without blocking, then checked on its descriptor
// (privdir.ReadRegularIn): a FIFO, a device, a socket, a directory, a
// symlink, a file over contract.MaxApproval bytes or one anyone may write
// is not read, and is named in ignored with why. At most
// contract.MaxApprovals files are read: first those named for the keys
// (PEM public keys, the approval_keys the caller carried) so that files
// another user adds to the directory cannot push them out, then the
// others in name order; the rest are named as ignored too (at most
// maxNamed more by name, then counted). The error is only that of the
// directory itself (it cannot be opened or listed).
func Approvals(plan string, keys [][]byte) (files []filesum.Named, ignored []string, err error) {
	dirPath, base := filepath.Dir(plan), filepath.Base(plan)
	dir, err := privdir.OpenDirectory(dirPath)
	if err != nil {
		return nil, nil, fmt.Errorf("finding the approvals of %s: %w", plan, err)
	}
	defer dir.Close()
	prefix := base + ".approved-by-"
	listed := map[string]bool{}
	for _, k := range keys {
		if fp := fingerprint(k); fp != "" {
			listed[ApprovalFile(base, fp)] = true
		}
	}
	keep := contract.MaxApprovals + maxNamed
	var named []string // names for a listed key: at most one each
	var rest []string  // the other names, sorted: the first keep of them
	more := 0          // other names beyond rest
	for {
		names, err := dir.Readdirnames(listBatch)
		for _, n := range names {
			if len(n) < len(prefix)+len(ApprovalSuffix) || !strings.HasPrefix(n, prefix) || !strings.HasSuffix(n, ApprovalSuffix) {
				continue
			}
			if listed[n] {
				named = append(named, n)
				continue
			}
			i, _ := slices.BinarySearch(rest, n)
			if i >= keep {
				more++
				continue
			}
			rest = slices.Insert(rest, i, n)
			if len(rest) > keep {
				rest, more = rest[:keep], more+1
			}
		}
		if err == io.EOF || (err == nil && len(names) == 0) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("listing %s for the approvals of %s: %w", dirPath, plan, err)
		}
	}
	slices.Sort(named)
	for i, n := range append(named, rest...) {
		p := filepath.Join(dirPath, n)
		if i >= contract.MaxApprovals {
			ignored = append(ignored, fmt.Sprintf("%s: not read: over the %d approval files read beside a plan (those named for a listed key first, then by name); remove the stale ones", p, contract.MaxApprovals))
			continue
		}
		b, err := privdir.ReadRegularIn(dir, n, contract.MaxApproval, false)
		if err != nil {
			ignored = append(ignored, fmt.Sprintf("%s: not read: %v", p, err))
			continue
		}
		files = append(files, filesum.Named{Name: p, Data: b})
	}
	if more > 0 {
		ignored = append(ignored, fmt.Sprintf("%s: %d more approval files beyond those named here, neither read nor named; remove the stale ones", filepath.Join(dirPath, prefix+"*"+ApprovalSuffix), more))
	}
	return files, ignored, nil
}

// fingerprint is the fingerprint of a PEM public key as the daemon names
// keys ("sha256:" and the hex sha256 of its DER), "" when it is none:
// the daemon checks the key and says what is wrong with it.
func fingerprint(b []byte) string {
	block, _ := pem.Decode(b)
	if block == nil {
		return ""
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return ""
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(der)
	return "sha256:" + hex.EncodeToString(sum[:])
}
