package caller

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/privdir"
	"github.com/colonel-byte/zarf-planner/savedplan"
)

// Replay prepares the replay of a saved plan, when o names one
// (plan_file): it reads the file, and every saved option the caller did
// not give (given says which it gave) takes its saved value, so a replay
// repeats the saved request and only what the caller changes on purpose
// differs. It returns the file's bytes for contract.PlanRequest.SavedPlan (nil
// without plan_file). The daemon decides whether the plan still holds; a
// file that is not a saved plan is refused here, naming it.
func Replay(o *options.Request, given func(name string) bool) ([]byte, error) {
	if o.PlanFile == "" {
		return nil, nil
	}
	// Opened without blocking and fstat-checked: a FIFO or a device at
	// plan_file is refused at once; a symlink there is the caller's own
	// and is followed.
	b, err := privdir.ReadRegular(o.PlanFile, savedplan.MaxSize, true)
	if err != nil {
		return nil, fmt.Errorf("reading the saved plan: %w", err)
	}
	d, err := savedplan.Decode(o.PlanFile, bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("the saved plan %s: %w", o.PlanFile, err)
	}
	from, to := reflect.ValueOf(&d.Options), reflect.ValueOf(o)
	for _, opt := range options.Of(&d.Options) {
		if given(opt.Name) {
			continue
		}
		dst, ok := options.Find(o, opt.Name)
		if !ok {
			continue
		}
		dst.Field(to).Set(opt.Field(from))
	}
	return b, nil
}
