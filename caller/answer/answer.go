// Package answer decodes the daemon's answers to their documents' types
// (package document), once, strictly (package strictjson): a plan's
// result, a barrier's, a warm-up's, an inspection, a catalog. A front end
// that reads the documents (the CLI) decodes them here; the module passes
// most of them through unchanged.
package answer

import (
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/document"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// Plan is the result of a plan, planned or failed.
func Plan(a *contract.PlanAnswer) (*document.Result, error) {
	return document.DecodeResult("the daemon's result", a.Result)
}

// Barrier is the result of a barrier's wait, with the message of a
// barrier that did not hold.
func Barrier(a *contract.BarrierAnswer) (*document.Barrier, error) {
	var res document.Barrier
	if err := strictjson.Unmarshal("the barrier's result", a.Result, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Warmed is what a warm-up or forgetting did (or would do).
func Warmed(a *contract.CacheAnswer) (*document.Warmed, error) {
	var w document.Warmed
	if err := strictjson.Unmarshal("the daemon's answer", a.Result, &w); err != nil {
		return nil, err
	}
	return &w, nil
}

// Catalog is the catalog of a directory.
func Catalog(d *contract.Document) (*document.Catalog, error) {
	var c document.Catalog
	if err := strictjson.Unmarshal("the catalog", d.Result, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// Inspection is the inspection of a directory.
func Inspection(d *contract.Document) (*document.Inspection, error) {
	var in document.Inspection
	if err := strictjson.Unmarshal("the inspection", d.Result, &in); err != nil {
		return nil, err
	}
	return &in, nil
}
