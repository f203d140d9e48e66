package document

import (
	"reflect"
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/result"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// Result is a plan's document, the output contract of zarf_bundle_plan:
// a plan (Planned's keys), or a failure with its errors (Failure's).
type Result struct {
	// Plan is set on success.
	Plan *result.Plan
	// Failed, Msg and Errors describe a failure; Errors lists every problem.
	Failed bool
	Msg    string
	Errors []result.Problem
	// Graph is a failure's graph: the packages the plan would have
	// deployed, when planning got as far as choosing them (a plan's graph
	// is Plan.Graph).
	Graph result.Graph
	// Warnings are the failure's warnings (on success they are the plan's).
	Warnings []string
	// Ignored lists the directory's files that are not archive candidates.
	Ignored []FileNote
	// Counts say how the archives were obtained (not part of the
	// document: the cache never changes a plan).
	Counts Counts
	// Approvals say who approved the saved plan a replay checked
	// (approval_keys, require_approvals); nil when none were asked for.
	Approvals *Approvals
}

// Planned is the document of a plan: the plan's keys, the directory's
// ignored files and, for a replay that checked them, the approvals.
type Planned struct {
	*result.Plan
	Ignored   []FileNote `json:"ignored"`
	Approvals *Approvals `json:"approvals,omitempty"`
}

// Failure is the document of a plan that cannot be made: failed (always
// true), msg, every problem, the warnings, the ignored files and the
// graph of the packages the plan would have deployed.
type Failure struct {
	Failed   bool             `json:"failed"`
	Msg      string           `json:"msg"`
	Errors   []result.Problem `json:"errors"`
	Warnings []string         `json:"warnings"`
	Ignored  []FileNote       `json:"ignored"`
	Graph    result.Graph     `json:"graph"`
}

// MarshalJSON renders the contract document: Planned, or Failure (its
// lists never null).
func (r *Result) MarshalJSON() ([]byte, error) {
	ignored := r.Ignored
	if ignored == nil {
		ignored = []FileNote{}
	}
	if r.Plan != nil && !r.Failed {
		return Marshal(Planned{r.Plan, ignored, r.Approvals})
	}
	f := Failure{Failed: true, Msg: r.Msg, Errors: r.Errors, Warnings: r.Warnings, Ignored: ignored, Graph: r.Graph}
	if f.Errors == nil {
		f.Errors = []result.Problem{}
	}
	if f.Warnings == nil {
		f.Warnings = []string{}
	}
	if f.Graph.Nodes == nil {
		f.Graph.Nodes = []result.Node{}
	}
	if f.Graph.Edges == nil {
		f.Graph.Edges = []result.Edge{}
	}
	return Marshal(f)
}

// JSON renders a result as the contract document.
func (r *Result) JSON() ([]byte, error) {
	return r.MarshalJSON()
}

// DecodeResult reads a plan's document back, strictly (package
// strictjson): Failure's keys when failed is true, else Planned's. name
// says what is read, for an error.
func DecodeResult(name string, b []byte) (*Result, error) {
	var probe struct {
		Failed bool `json:"failed"`
	}
	if err := strictjson.UnmarshalPart(name, b, &probe); err != nil {
		return nil, err
	}
	if probe.Failed {
		var f Failure
		if err := strictjson.Unmarshal(name, b, &f); err != nil {
			return nil, err
		}
		return &Result{Failed: true, Msg: f.Msg, Errors: f.Errors, Warnings: f.Warnings, Ignored: f.Ignored, Graph: f.Graph}, nil
	}
	p := Planned{Plan: &result.Plan{}}
	if err := strictjson.Unmarshal(name, b, &p); err != nil {
		return nil, err
	}
	return &Result{Plan: p.Plan, Ignored: p.Ignored, Approvals: p.Approvals}, nil
}

// resultKeys are the top-level keys of a plan's document, Planned's and
// Failure's, read from their declarations.
var resultKeys = func() map[string]bool {
	keys := map[string]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous {
				t := f.Type
				if t.Kind() == reflect.Pointer {
					t = t.Elem()
				}
				walk(t)
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" {
				keys[name] = true
			}
		}
	}
	walk(reflect.TypeFor[Planned]())
	walk(reflect.TypeFor[Failure]())
	return keys
}()

// ResultKey reports whether key is a top-level key of a plan's document,
// planned or failed: the module returns no other key of the daemon's
// document, whatever the document holds.
func ResultKey(key string) bool { return resultKeys[key] }
