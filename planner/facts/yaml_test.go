package facts

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

var nestings = []struct {
	name  string
	style craft.Nesting
}{
	{"flow sequences", craft.FlowSequences},
	{"flow mappings", craft.FlowMappings},
	{"block sequences", craft.BlockSequences},
	{"block mappings", craft.BlockMappings},
}

// A document nests at most Shape.Depth deep, in every style of YAML
// nesting; one level more is refused, naming the bound and where the
// level too deep starts.
func TestCheckShapeBoundsDepth(t *testing.T) {
	shape := Shape{Nodes: 40000, Keys: 8000, Documents: 8, Depth: 10}
	for _, n := range nestings {
		t.Run(n.name, func(t *testing.T) {
			// The top-level mapping is 1 deep, so its value may nest 9.
			ok := "first: 1\n" + craft.Nested("x", n.style, 9)
			if err := CheckShape([]byte(ok), shape); err != nil {
				t.Errorf("10 deep: %v", err)
			}
			deep := "first: 1\n" + craft.Nested("x", n.style, 10)
			err := CheckShape([]byte(deep), shape)
			if err == nil {
				t.Fatal("11 deep: no error")
			}
			// The 11th level starts on line 2 (flow, and block
			// sequences, which nest on the key's next line) or on the
			// 11th line (a block mapping a line).
			line := 2
			switch n.style {
			case craft.BlockSequences:
				line = 3
			case craft.BlockMappings:
				line = 12
			}
			want := fmt.Sprintf("nests sequences and mappings more than 10 deep (line %d, ", line)
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		})
	}
}

// A Shape that says no depth bounds at MaxDepth.
func TestCheckShapeDefaultsToMaxDepth(t *testing.T) {
	shape := Shape{Nodes: 40000, Keys: 8000, Documents: 8}
	if err := CheckShape([]byte(craft.Nested("x", craft.FlowSequences, MaxDepth-1)), shape); err != nil {
		t.Errorf("%d deep: %v", MaxDepth, err)
	}
	err := CheckShape([]byte(craft.Nested("x", craft.FlowSequences, MaxDepth)), shape)
	if want := fmt.Sprintf("more than %d deep", MaxDepth); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%d deep: error %v; want one saying %q", MaxDepth+1, err, want)
	}
}

// The documents of issue 27: 20 KB of sequences 10,000 deep, and 10,000
// block sequences holding 10,000 flow sequences, cost zarf's parser
// (goccy/go-yaml) 170 MB and 640 MB of allocations. CheckShape refuses
// them in a few megabytes (15 for the second), before that parser sees
// them.
func TestCheckShapeRefusesDeepDocumentsCheaply(t *testing.T) {
	shape := Shape{Nodes: 40000, Keys: 8000, Documents: 8, Depth: MaxDepth}
	for _, tt := range []struct {
		name  string
		style craft.Nesting
		n     int
	}{
		{"sequences 10,000 deep", craft.FlowSequences, 10000},
		{"mappings 7,000 deep (under the key bound)", craft.FlowMappings, 7000},
		{"block sequences 10,000 deep", craft.BlockSequences, 10000},
		{"block mappings 1,400 deep (a megabyte)", craft.BlockMappings, 1400},
		{"10,000 flow in 9,999 block sequences", craft.BlockAndFlow, 9999},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := []byte(craft.Nested("x", tt.style, tt.n))
			var err error
			spent := allocated(func() { err = CheckShape(doc, shape) })
			if err == nil || !strings.Contains(err.Error(), "more than 64 deep") {
				t.Fatalf("error %v; want one saying it nests more than 64 deep", err)
			}
			if spent > 32<<20 {
				t.Errorf("refusing it allocated %d MiB; want at most 32", spent>>20)
			}
		})
	}
}

// allocated is the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
