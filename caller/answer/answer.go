// Package answer decodes the daemon's answers to the documents' types,
// once, strictly (package strictjson): a plan's result, a barrier's, a
// warm-up's, an inspection, a catalog. A front end that reads the
// documents (the CLI) decodes them here; the module, which passes them
// through unchanged, does not import it, so its binary holds no planner
// or Kubernetes code.
package answer

import (
	"github.com/colonel-byte/zarf-planner/barrier"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/daemon/server"
	"github.com/colonel-byte/zarf-planner/service"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// Plan is the result of a plan, planned or failed.
func Plan(a *contract.PlanAnswer) (*service.Result, error) {
	return service.DecodeResult("the daemon's result", a.Result)
}

// BarrierResult is the result of a wait: each check's last state, and the
// message of a barrier that did not hold.
type BarrierResult struct {
	barrier.Result
	Msg string `json:"msg"`
}

// Barrier is the result of a wait; only the keys BarrierResult declares
// are read (strictjson.UnmarshalPart).
func Barrier(a *contract.BarrierAnswer) (*BarrierResult, error) {
	var res BarrierResult
	if err := strictjson.UnmarshalPart("the barrier's result", a.Result, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Warmed is what a warm-up or forgetting did (or would do).
func Warmed(a *contract.CacheAnswer) (*server.Warmed, error) {
	var w server.Warmed
	if err := strictjson.Unmarshal("the daemon's answer", a.Result, &w); err != nil {
		return nil, err
	}
	return &w, nil
}

// Catalog is the catalog of a directory.
func Catalog(d *contract.Document) (*service.Catalog, error) {
	var c service.Catalog
	if err := strictjson.Unmarshal("the catalog", d.Result, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// Inspection is the inspection of a directory.
func Inspection(d *contract.Document) (*service.Inspection, error) {
	var in service.Inspection
	if err := strictjson.Unmarshal("the inspection", d.Result, &in); err != nil {
		return nil, err
	}
	return &in, nil
}
