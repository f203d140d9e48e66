package inspect

import "testing"

// place says the same of a member's name to both readers: each member
// planning keeps lands in its own field of members with its own cap, a
// component tarball gives its component, and anything else is skipped.
func TestPlaceSaysWhatIsKeptAndWhere(t *testing.T) {
	kept := []struct {
		member string
		limit  int64
		field  func(m *members) []byte
	}{
		{"zarf.yaml", MaxZarfYAML, func(m *members) []byte { return m.zarfYAML }},
		{"documentation.tar", MaxDocumentationTar, func(m *members) []byte { return m.docTar }},
		{"checksums.txt", MaxChecksums, func(m *members) []byte { return m.checksums }},
		{"zarf.bundle.sig", MaxSignature, func(m *members) []byte { return m.bundleSig }},
		{"zarf.yaml.sig", MaxSignature, func(m *members) []byte { return m.legacySig }},
	}
	for _, k := range kept {
		var m members
		slot, limit, component := m.place(k.member)
		if slot == nil || component != "" || limit != k.limit {
			t.Errorf("place(%q) = slot %v, limit %d, component %q; want a slot, limit %d, no component", k.member, slot != nil, limit, component, k.limit)
			continue
		}
		*slot = []byte(k.member)
		for _, other := range kept {
			got := string(other.field(&m))
			if want := map[bool]string{true: k.member, false: ""}[other.member == k.member]; got != want {
				t.Errorf("after storing %s through its slot, the field of %s holds %q; want %q", k.member, other.member, got, want)
			}
		}
	}
	for member, want := range map[string]string{
		"components/flux.tar":       "flux",
		"components/a.b-c.tar":      "a.b-c",
		"components/.tar":           "",
		"components/flux.tar.zst":   "",
		"components/flux":           "",
		"components/sub/flux.tar":   "",
		"images/index.json":         "",
		"images/blobs/sha256/ab12":  "",
		"sboms.tar":                 "",
		"zarf.yaml.bak":             "",
		"docs/zarf.yaml":            "",
		"checksums.txt.sig":         "",
		"documentation.tar.gz":      "",
		"components.tar":            "",
		"other/components/flux.tar": "",
	} {
		var m members
		slot, limit, component := m.place(member)
		if slot != nil || limit != 0 || component != want {
			t.Errorf("place(%q) = slot %v, limit %d, component %q; want no slot, no limit, component %q", member, slot != nil, limit, component, want)
		}
	}
}
