package service

import (
	"testing"

	"github.com/colonel-byte/zarf-planner/cluster"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/planner/policy"
	"github.com/colonel-byte/zarf-planner/signature"
)

// A content option's declared bound is its reader's own: Read reads each
// file once, within the declaration's bound, for the code that decodes it.
func TestContentBoundsAreTheReadersOwn(t *testing.T) {
	want := map[string]int64{"public_key": signature.MaxKey, "policy": policy.MaxSize, "snapshot": cluster.MaxSnapshot, "prerequisites": facts.MaxOperator}
	files := options.Files(options.Request{})
	if len(files) != len(want) {
		t.Fatalf("content options %v; want those of %v (a new one needs its reader here)", files, want)
	}
	for _, f := range files {
		if f.Max != want[f.Name] {
			t.Errorf("option %s is declared at most %d bytes; its reader allows %d", f.Name, f.Max, want[f.Name])
		}
	}
}
