// Package stages times the stages of one module run, for
// ZARF_PLANNER_TRACE (caller.EnvTrace): each stage is named when it
// ends, and the run's stages are written as one line to the module's
// standard error, never its standard output (Ansible reads the result
// there), when the run returns. A run the backstop ends (its timeout)
// exits without it. A run that is not traced keeps no times: every call
// on a nil *Run does nothing.
package stages

import (
	"context"
	"encoding/json"
	"io"
	"time"
)

// Run is one run's stages, from the time it was made.
type Run struct {
	start time.Time
	last  time.Time
	ended []Stage
}

// Stage is one stage, named, and how long it took.
type Stage struct {
	Name string  `json:"stage"`
	Ms   float64 `json:"ms"`
}

// Start begins timing a run when traced is true; else it returns nil,
// which times nothing.
func Start(traced bool) *Run {
	if !traced {
		return nil
	}
	now := time.Now()
	return &Run{start: now, last: now, ended: []Stage{}}
}

// End names the stage that ends now: the time since the last stage
// ended (or the run began).
func (r *Run) End(name string) {
	if r == nil {
		return
	}
	now := time.Now()
	r.ended = append(r.ended, Stage{Name: name, Ms: ms(now.Sub(r.last))})
	r.last = now
}

// Prefix and Suffix enclose the JSON of a run's stages on its line:
//
//	zarf-planner trace: {"zarf_planner_stages":[{"stage":...,"ms":...},...],"total_ms":...} (end of trace)
//
// The line neither starts with { nor ends with }: where Ansible runs a
// module under a terminal, its standard error reaches Ansible with its
// standard output, and Ansible takes the result from the first line that
// starts with { to the last that ends with } (what follows is junk it
// warns about).
const (
	Prefix = "zarf-planner trace: "
	Suffix = " (end of trace)"
)

// Write writes the run's stages and its total so far to w as one line
// (Prefix, the JSON, Suffix).
func (r *Run) Write(w io.Writer) error {
	if r == nil {
		return nil
	}
	b, err := json.Marshal(struct {
		Stages []Stage `json:"zarf_planner_stages"`
		Total  float64 `json:"total_ms"`
	}{r.ended, ms(time.Since(r.start))})
	if err != nil {
		return err
	}
	_, err = w.Write(append(append([]byte(Prefix), b...), Suffix+"\n"...))
	return err
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

type key struct{}

// With is ctx carrying r, for From.
func With(ctx context.Context, r *Run) context.Context {
	return context.WithValue(ctx, key{}, r)
}

// From is the run ctx carries (nil: none, which times nothing).
func From(ctx context.Context) *Run {
	r, _ := ctx.Value(key{}).(*Run)
	return r
}
