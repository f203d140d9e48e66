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
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/privdir"
)

// maxNamed bounds the approval files over contract.MaxApprovals that
// Approvals names one by one; any beyond are counted in one note.
const maxNamed = 16

// listBatch is how many names Approvals takes from the directory at a
// time.
const listBatch = 1024

// Approvals reads the approval files of the saved plan at plan, for the
// daemon to check: the files beside it named as contract.ApprovalFile
// names them (plan's name, ".approved-by-", anything,
// contract.ApprovalSuffix), each as filesum.Named{Name: its path, Data:
// its bytes}. It never blocks and never fails on what it finds: the
// directory is opened once (following a symlink to it: plan_file is the
// operator's option) and each file is opened relative to that
// directory's descriptor without following a symlink and without
// blocking, then checked on its descriptor (privdir.ReadRegularIn): a
// FIFO, a device, a socket, a directory, a symlink, a file over
// contract.MaxApproval bytes or one anyone may write is not read, and is
// named in ignored with why. At most contract.MaxApprovals files are
// read: first those named for keys (the approval_keys the caller carried,
// PEM public keys), so files another user adds to the directory cannot
// push them out, then the others in name order; the rest are named as
// ignored too (maxNamed of them, then counted). A name holding a control
// character (or bytes that are not UTF-8) is named escaped and not
// opened. The error is only that of the directory itself (it cannot be
// opened or listed).
func Approvals(plan string, keys [][]byte) (files []filesum.Named, ignored []contract.IgnoredFile, err error) {
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
			listed[contract.ApprovalFile(base, fp)] = true
		}
	}
	keep := contract.MaxApprovals + maxNamed
	var named []string // names for a listed key: at most one each
	var rest []string  // the other names, sorted: the first keep of them
	more := 0          // other names beyond rest
	for {
		names, err := dir.Readdirnames(listBatch)
		for _, n := range names {
			if len(n) < len(prefix)+len(contract.ApprovalSuffix) || !strings.HasPrefix(n, prefix) || !strings.HasSuffix(n, contract.ApprovalSuffix) {
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
	order := append(named, rest...)
	if len(order) > keep {
		order, more = order[:keep], more+len(order)-keep
	}
	for i, n := range order {
		p := filepath.Join(dirPath, n)
		if shown := facts.Printable(n); shown != n {
			// Named by another user, perhaps to move a terminal's cursor:
			// shown escaped, never opened.
			ignored = append(ignored, contract.IgnoredFile{File: filepath.Join(dirPath, shown), Reason: "not read: its name holds control characters or bytes that are not UTF-8, which no approval's name holds"})
			continue
		}
		if i >= contract.MaxApprovals {
			ignored = append(ignored, contract.IgnoredFile{File: p, Reason: fmt.Sprintf("not read: over the %d approval files read beside a plan (those named for a listed key first, then by name); remove the stale ones", contract.MaxApprovals)})
			continue
		}
		b, err := privdir.ReadRegularIn(dir, n, contract.MaxApproval, false)
		if err != nil {
			ignored = append(ignored, contract.IgnoredFile{File: p, Reason: "not read: " + facts.Printable(err.Error())})
			continue
		}
		files = append(files, filesum.Named{Name: p, Data: b})
	}
	if more > 0 {
		ignored = append(ignored, contract.IgnoredFile{File: filepath.Join(dirPath, prefix+"*"+contract.ApprovalSuffix), Reason: fmt.Sprintf("%d more approval files beyond those named here, neither read nor named; remove the stale ones", more)})
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
