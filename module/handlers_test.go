package main

import (
	"testing"

	"github.com/colonel-byte/zarf-planner/module/specs"
)

// TestEveryModuleHasAHandler: every module specs declares (and only
// those) has a row in handlers, so a module added to one and not the
// other fails here, not in a play.
func TestEveryModuleHasAHandler(t *testing.T) {
	declared := specs.All()
	for name := range declared {
		if handlers[name] == nil {
			t.Errorf("module %s has a spec and no handler", name)
		}
	}
	for name := range handlers {
		if _, ok := declared[name]; !ok {
			t.Errorf("module %s has a handler and no spec", name)
		}
	}
	if len(handlers) != 4 {
		t.Errorf("%d handlers, want the four modules", len(handlers))
	}
}
