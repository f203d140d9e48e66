package specs

import "testing"

// Lookup and All build each spec afresh: a caller that changes the spec
// it got changes no other caller's; an unknown module is not found.
func TestSpecsCannotBeChangedByACaller(t *testing.T) {
	for _, name := range []string{Plan, Barrier, Cache, Catalog} {
		s, ok := Lookup(name)
		if !ok || len(s.Options) == 0 {
			t.Fatalf("Lookup(%s) = %d options, %v", name, len(s.Options), ok)
		}
		for k := range s.Options {
			delete(s.Options, k)
		}
		if again, _ := Lookup(name); len(again.Options) == 0 {
			t.Errorf("emptying one caller's spec of %s emptied the next Lookup's", name)
		}
		all := All()
		if len(all[name].Options) == 0 {
			t.Errorf("emptying one caller's spec of %s emptied All's", name)
		}
	}
	if len(All()) != 4 {
		t.Errorf("All() has %d modules; want 4", len(All()))
	}
	if _, ok := Lookup("zarf_no_such_module"); ok {
		t.Error("an unknown module was found")
	}
}
