package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"

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

// Resolve fills in what only the caller knows, before a request leaves
// it: every path option made absolute against the caller's working
// directory, and, for a cluster-aware plan of a live cluster, the
// caller's kubeconfig (see CallerKubeconfig). Both front ends call it, so
// the daemon never reads its own environment for a caller.
func Resolve(o *options.Request) error {
	v := reflect.ValueOf(o)
	for _, opt := range options.Of(o) {
		if opt.Kind == options.PathList {
			var list []string
			for _, p := range opt.Field(v).Interface().([]string) {
				abs, err := filepath.Abs(p)
				if err != nil {
					return fmt.Errorf("resolving %s %s: %w", opt.Name, p, err)
				}
				list = append(list, abs)
			}
			opt.Field(v).Set(reflect.ValueOf(list))
			continue
		}
		if opt.Kind != options.Path {
			continue
		}
		f := opt.Field(v)
		if f.String() == "" {
			continue
		}
		abs, err := filepath.Abs(f.String())
		if err != nil {
			return fmt.Errorf("resolving %s %s: %w", opt.Name, f.String(), err)
		}
		f.SetString(abs)
	}
	if o.Mode == options.ModeCluster && o.Snapshot == "" {
		o.Kubeconfig = CallerKubeconfig(o.Kubeconfig)
		o.Context = CallerContext(o.Context)
	}
	return nil
}
