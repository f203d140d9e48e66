package facts

import (
	"errors"
	"strings"
	"testing"
)

const header = "apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata: {package: app, version: 1.0.0}\n"

func TestDecodeAcceptsEveryField(t *testing.T) {
	doc := header + `
provides:
  capabilities: [gitops-engine]
  crds: [certificates.cert-manager.io]
  namespaces: [cert-manager]
  storage_classes: [ceph-block]
requires:
  packages:
    - name: init
      version: ">=0.40.0"
    - names: [init, init-slim]
    - id: storage
      name: csi-rook-ceph
      priority: 100
  crds: [certificates.cert-manager.io]
  storage_classes: [ceph-block]
  capabilities: [gitops-engine]
  kubernetes: ">=1.29.0"
`
	p, err := Decode([]byte(doc))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if got := p.Requires.Packages[2]; got.ID != "storage" || got.Priority == nil || *got.Priority != 100 {
		t.Errorf("group entry = %+v; want id storage priority 100", got)
	}
	if got := p.Requires.Packages[1].Alternatives(); strings.Join(got, ",") != "init,init-slim" {
		t.Errorf("aliases = %v; want init,init-slim", got)
	}
	if p.Provides.StorageClasses[0] != "ceph-block" || p.Requires.Kubernetes != ">=1.29.0" {
		t.Errorf("decoded %+v", p)
	}
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name      string
		doc       string
		wantField string
		wantText  string
	}{
		{"unknown top-level field", header + "provide: {}\n", "provide", "valid fields here are apiVersion, kind, metadata, provides, requires"},
		{"unknown nested field names its full path", header + "requires:\n  packages:\n    - name: a\n    - nmae: b\n", "requires.packages[1].nmae", "valid fields here are name, names, id, version, priority"},
		{"wrong apiVersion", strings.Replace(header, "colonel-byte.dev/v1alpha1", "example.com/v1", 1), "apiVersion", `want "colonel-byte.dev/v1alpha1"`},
		{"wrong kind", strings.Replace(header, "PackagePrerequisites", "Prereqs", 1), "kind", "PackagePrerequisites"},
		{"missing package name", "apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata: {version: 1.0.0}\n", "metadata.package", "is required"},
		{"name and names together", header + "requires:\n  packages:\n    - {name: a, names: [b]}\n", "requires.packages[0]", "both name and names"},
		{"requirement naming nothing", header + "requires:\n  packages:\n    - {version: '>=1'}\n", "requires.packages[0]", "names no package"},
		{"bad version constraint", header + "requires:\n  packages:\n    - {name: a, version: 'not a range'}\n", "requires.packages[0].version", "not a semver constraint"},
		{"priority outside a group", header + "requires:\n  packages:\n    - {name: a, priority: 3}\n", "requires.packages[0].priority", "set id as well"},
		{"list where a mapping belongs", header + "requires: [a]\n", "requires", "expected a mapping, got a list"},
		{"bad kubernetes constraint", header + "requires: {kubernetes: 'new'}\n", "requires.kubernetes", "not a semver constraint"},
		{"wrong scalar type", header + "requires:\n  packages:\n    - {id: g, name: a, priority: high}\n", "requires.packages.priority", "expected int"},
		{"a key given twice", header + "requires:\n  crds: [a.example.com]\n  crds: [b.example.com]\n", "", `the document gives the key "crds" twice in one mapping (lines 5 and 6)`},
		{"a second document", header + "---\n" + header, "", "holds 2 YAML documents; a prerequisites file holds exactly one"},
		{"an empty document", "# nothing\n", "", "document is empty"},
		{"a package name zarf refuses", header + "requires:\n  packages:\n    - name: Bad_Name\n", "requires.packages[0].name", `"Bad_Name" is not a zarf package name`},
		{"an alias with a quote", header + "requires:\n  packages:\n    - names: [a, 'b\"; c -> d']\n", "requires.packages[0].names[1]", "is not a zarf package name"},
		{"a name of a thousand letters", header + "requires:\n  packages:\n    - name: " + strings.Repeat("a", 1000) + "\n", "requires.packages[0].name", "… (1000 bytes)"},
		{"metadata.package zarf refuses", strings.Replace(header, "package: app", "package: ../app", 1), "metadata.package", "is not a zarf package name"},
		{"a CRD that is no DNS name", header + "provides:\n  crds: ['x\\ny']\n", "provides.crds[0]", "is not a CRD name"},
		{"a namespace with dots", header + "provides:\n  namespaces: [a.b]\n", "provides.namespaces[0]", "is not a namespace name"},
		{"a capability with a space", header + "requires:\n  capabilities: ['git ops']\n", "requires.capabilities[0]", "is not a capability"},
		{"a group id with a newline", header + "requires:\n  packages:\n    - {id: \"g\\nh\", name: a}\n", "requires.packages[0].id", `"g\nh" is not a group id`},
		{"a constraint with a control character", header + "requires:\n  packages:\n    - {name: a, version: \">=1\\u0007\"}\n", "requires.packages[0].version", "which no semver constraint holds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.doc))
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Decode error = %v; want a *FieldError", err)
			}
			if fe.Field != tt.wantField {
				t.Errorf("field = %q; want %q (error %v)", fe.Field, tt.wantField, err)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q does not say %q", err, tt.wantText)
			}
		})
	}
}

func TestDecodeRejectsNonYAMLAndOversize(t *testing.T) {
	if _, err := Decode([]byte("a: [unclosed")); err == nil || !strings.Contains(err.Error(), "not valid YAML") {
		t.Errorf("Decode(bad yaml) = %v; want a not valid YAML error", err)
	}
	if _, err := Decode([]byte("- just a list")); err == nil || !strings.Contains(err.Error(), "not a mapping") {
		t.Errorf("Decode(list) = %v; want not a mapping", err)
	}
	big := make([]byte, MaxDocumentSize+1)
	if _, err := Decode(big); err == nil || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("Decode(oversize) = %v; want a size error", err)
	}
}

// A byte-order mark (as Windows editors write) is not part of the first key.
func TestDecodeAcceptsAByteOrderMark(t *testing.T) {
	p, err := Decode([]byte("\ufeff" + header))
	if err != nil || p.Metadata.Package != "app" {
		t.Fatalf("Decode(BOM + document) = %+v, %v; want package app", p, err)
	}
}

func TestPrintableEscapesControlCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"plain-name":    "plain-name",
		"a\nb":          `a\nb`,
		"\x1b[31mred":   `\x1b[31mred`,
		"bad\xffutf8":   `bad\xffutf8`,
		"line\u2028sep": `line\u2028sep`,
		`quote "kept"`:  `quote "kept"`,
		"émigré (fine)": "émigré (fine)",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q; want %q", in, got, want)
		}
	}
}
