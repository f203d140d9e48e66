package inspect_test

import (
	"testing"

	"github.com/colonel-byte/zarf-planner/inspect"
)

// Which reads a kept outcome answers: its own source always; a success
// or an invalid zarf.yaml any source of the same kind; a failure no
// other source; a registry's outcome never an archive, nor an archive's a
// registry; an outcome that names no source, or of an undeclared kind,
// nothing.
func TestAKeptOutcomeAnswersTheReadsItsKindAllows(t *testing.T) {
	a, b := inspect.RepositorySource("a.example", "ns/init"), inspect.RepositorySource("b.example", "ns/init")
	other := inspect.RepositorySource("a.example", "ns/other")
	file, copied := "/bundle/init.tar.zst", "/elsewhere/init.tar.zst"
	for _, tc := range []struct {
		name         string
		kind, source string
		read         string
		want         bool
	}{
		{"a success answers its own registry", inspect.OutcomeOK, a, a, true},
		{"a success answers another registry's same digest", inspect.OutcomeOK, a, b, true},
		{"an invalid zarf.yaml answers another registry's same digest", inspect.OutcomeInvalid, a, b, true},
		{"an integrity failure answers its own registry", inspect.OutcomeIntegrity, a, a, true},
		{"an integrity failure answers no other registry", inspect.OutcomeIntegrity, a, b, false},
		{"an integrity failure answers no other repository of its registry", inspect.OutcomeIntegrity, a, other, false},
		{"not a package answers no other registry", inspect.OutcomeNotZarf, a, b, false},
		{"an archive's failure answers no copy of it", inspect.OutcomeIntegrity, file, copied, false},
		{"an archive's success answers a copy of it", inspect.OutcomeOK, file, copied, true},
		{"a registry's success answers no archive", inspect.OutcomeOK, a, file, false},
		{"an archive's success answers no registry", inspect.OutcomeOK, file, a, false},
		{"an outcome that names no source answers nothing", inspect.OutcomeOK, "", a, false},
		{"an outcome of an undeclared kind answers nothing", "partly-ok", a, a, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := inspect.Outcome{Kind: tc.kind, Source: tc.source}
			if got := o.Answers(tc.read); got != tc.want {
				t.Errorf("a %s outcome read from %q answers a read of %q: got %v; want %v", tc.kind, tc.source, tc.read, got, tc.want)
			}
		})
	}
	for _, kind := range []string{inspect.OutcomeOK, inspect.OutcomeInvalid, inspect.OutcomeIntegrity, inspect.OutcomeNotZarf} {
		if _, ok := inspect.OutcomeKinds()[kind]; !ok {
			t.Errorf("the outcome kind %q is not in the table of kinds and the reads they answer", kind)
		}
	}
}
