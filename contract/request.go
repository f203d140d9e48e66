package contract

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// EncodeOptions renders a plan request's options for the wire: the JSON
// object whose keys are the options' names.
func EncodeOptions(o options.Request) ([]byte, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("encoding the plan options: %w", err)
	}
	return b, nil
}

// DecodeOptions reads a plan request's options from the wire, strictly:
// every key must be a declared option. Options not given keep their
// declared defaults.
func DecodeOptions(b []byte) (options.Request, error) {
	o := options.Defaults()
	if len(bytes.TrimSpace(b)) == 0 {
		return o, nil
	}
	if err := strictjson.Unmarshal("the plan options", b, &o); err != nil {
		return o, fmt.Errorf("the plan options are not those this daemon declares: %w", err)
	}
	return o, nil
}
