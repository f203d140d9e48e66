package stages

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestAnUntracedRunKeepsAndWritesNothing: Start(false) is nil, and every
// call on it, through a context or not, does nothing.
func TestAnUntracedRunKeepsAndWritesNothing(t *testing.T) {
	r := Start(false)
	if r != nil {
		t.Fatalf("Start(false) = %v; want nil", r)
	}
	From(With(context.Background(), r)).End("arguments")
	From(context.Background()).End("arguments")
	var b bytes.Buffer
	if err := r.Write(&b); err != nil || b.Len() != 0 {
		t.Errorf("Write of an untraced run: %q, %v; want nothing", b.String(), err)
	}
}

// TestATracedRunWritesItsStagesInOrderOnOneLine: the stages, in the order
// they ended, as one line between Prefix and Suffix, none longer than the
// run.
func TestATracedRunWritesItsStagesInOrderOnOneLine(t *testing.T) {
	ctx := With(context.Background(), Start(true))
	From(ctx).End("arguments")
	From(ctx).End("request")
	var b bytes.Buffer
	if err := From(ctx).Write(&b); err != nil {
		t.Fatal(err)
	}
	line, ok := strings.CutSuffix(b.String(), "\n")
	if !ok || strings.Contains(line, "\n") || strings.HasPrefix(line, "{") || strings.HasSuffix(line, "}") {
		t.Fatalf("not one line that neither starts with { nor ends with }: %q", b.String())
	}
	var got struct {
		Stages []Stage `json:"zarf_planner_stages"`
		Total  float64 `json:"total_ms"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(line, Prefix), Suffix)), &got); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	if len(got.Stages) != 2 || got.Stages[0].Name != "arguments" || got.Stages[1].Name != "request" {
		t.Fatalf("stages %+v; want arguments then request", got.Stages)
	}
	if sum := got.Stages[0].Ms + got.Stages[1].Ms; sum < 0 || sum > got.Total+0.001 {
		t.Errorf("stages sum to %v ms, the run took %v", sum, got.Total)
	}
}
