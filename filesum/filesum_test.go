package filesum

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/options"
)

// The sums are of what the caller carried, each file served once; a
// carried option that decides no plan has no sum.
func TestSumsAreOfWhatWasCarried(t *testing.T) {
	files := options.CarriedFiles(options.Request{Read: options.Read{Policy: "/p.yaml", RegistryCAFile: "/ca.pem"}})
	carried := []Carried{
		{Name: "policy", Path: "/p.yaml", Files: []Named{{Name: "p.yaml", Data: []byte("one")}}},
		{Name: "registry_ca_file", Path: "/ca.pem", Files: []Named{{Name: "ca.pem", Data: []byte("ca")}}},
	}
	r := NewReader(files, carried)
	b, err := r.Bytes("policy")
	if err != nil || string(b) != "one" {
		t.Fatalf("Bytes = %q, %v; want the policy", b, err)
	}
	if _, err := r.Bytes("policy"); err == nil {
		t.Error("served a file twice")
	}
	if _, err := r.Bytes("kubeconfig"); err == nil {
		t.Error("served an option that is not carried")
	}
	if ca, err := r.Bytes("registry_ca_file"); err != nil || string(ca) != "ca" {
		t.Errorf("the CA bundle: %q, %v", ca, err)
	}
	sums, err := r.Sums()
	if err != nil {
		t.Fatal(err)
	}
	one := sha256.Sum256([]byte("one"))
	want := []Sum{{Name: "public_key"}, {Name: "policy", Path: "/p.yaml", SHA256: hex.EncodeToString(one[:])}, {Name: "prerequisites"}, {Name: "snapshot"}}
	if len(sums) != len(want) {
		t.Fatalf("Sums = %v; want %v", sums, want)
	}
	for i := range want {
		if sums[i] != want[i] {
			t.Errorf("Sums[%d] = %v; want %v", i, sums[i], want[i])
		}
	}
	if m := Map(sums); len(m) != 1 || m["policy"] != want[1].SHA256 {
		t.Errorf("Map = %v; want the policy's alone", m)
	}
}

// Nothing given is read from its path: a file the caller did not carry,
// or carried for another path, is an error naming it; what was carried
// over the wire is held to the declaration again.
func TestWhatWasNotCarriedIsNotRead(t *testing.T) {
	files := options.CarriedFiles(options.Request{Read: options.Read{Policy: "/etc/hostname", Prerequisites: "/ops"}})
	if _, err := NewReader(files, nil).Bytes("policy"); err == nil || !strings.Contains(err.Error(), "sent not its content") {
		t.Errorf("not carried: %v; want it refused", err)
	}
	other := []Carried{{Name: "policy", Path: "/elsewhere", Files: []Named{{Name: "x", Data: []byte("x")}}}}
	if _, err := NewReader(files, other).Bytes("policy"); err == nil {
		t.Error("a file carried for another path was served")
	}
	big := []Carried{{Name: "policy", Path: "/etc/hostname", Files: []Named{{Name: "hostname", Data: make([]byte, 1<<20+1)}}}}
	if _, err := NewReader(files, big).Bytes("policy"); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("over the bound: %v; want it refused", err)
	}
	failed := []Carried{{Name: "policy", Path: "/etc/hostname", Err: "/etc/hostname: a FIFO"}}
	if _, err := NewReader(files, failed).Bytes("policy"); err == nil || !strings.Contains(err.Error(), "a FIFO") {
		t.Errorf("a failed read: %v; want its error", err)
	}
	bad := []Carried{{Name: "prerequisites", Path: "/ops", Dir: true, Files: []Named{{Name: "../x.yaml", Data: []byte("x")}}}}
	if _, err := NewReader(files, bad).Contents("prerequisites"); err == nil {
		t.Error("a directory's file named ../x.yaml was served")
	}
	dir := []Carried{{Name: "policy", Path: "/etc/hostname", Dir: true, Files: []Named{{Name: "a.yaml"}}}}
	if _, err := NewReader(files, dir).Bytes("policy"); err == nil {
		t.Error("a directory was served for an option that takes a file")
	}
}

// A directory's sum is of its listing: names and contents.
func TestADirectorysSumIsOfItsListing(t *testing.T) {
	a := Carried{Dir: true, Files: []Named{{Name: "a.yaml", Data: []byte("a")}}}
	b := Carried{Dir: true, Files: []Named{{Name: "b.yaml", Data: []byte("a")}}}
	if SumOf(a) == SumOf(b) {
		t.Error("two directories of one content under other names have one sum")
	}
}

// A path list (approval keys) is served whole, each file by its path.
func TestAllServesAPathList(t *testing.T) {
	files := options.CarriedFiles(options.Request{Approvals: options.Approvals{ApprovalKeys: []string{"/a.pub", "/b.pub"}}})
	carried := []Carried{
		{Name: "approval_keys", Path: "/a.pub", Files: []Named{{Name: "a.pub", Data: []byte("A")}}},
		{Name: "approval_keys", Path: "/b.pub", Files: []Named{{Name: "b.pub", Data: []byte("B")}}},
	}
	got, err := NewReader(files, carried).All("approval_keys")
	if err != nil || len(got) != 2 || got[0].Name != "/a.pub" || string(got[1].Data) != "B" {
		t.Errorf("All = %+v, %v; want both keys by path", got, err)
	}
}
