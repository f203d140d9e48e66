package contract

import (
	"github.com/colonel-byte/zarf-planner/document"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// Each answer reads its document as its type here, strictly (package
// strictjson): a key no document has, or a key given twice, is refused.
// The documents were written by document.Marshal, the one encoding.

// Plan is the plan's document, planned or failed.
func (a *PlanAnswer) Plan() (*document.Result, error) {
	return document.DecodeResult("the daemon's result", a.Result)
}

// Inspection is the directory's inspection.
func (a *InspectAnswer) Inspection() (*document.Inspection, error) {
	return decode[document.Inspection]("the inspection", a.Result)
}

// Catalog is the directory's catalog.
func (a *CatalogAnswer) Catalog() (*document.Catalog, error) {
	return decode[document.Catalog]("the catalog", a.Result)
}

// Warmed is what the warm-up or forgetting did (or would do).
func (a *CacheAnswer) Warmed() (*document.Warmed, error) {
	return decode[document.Warmed]("the daemon's answer", a.Result)
}

// Barrier is the barrier's outcome, with why it did not hold.
func (a *BarrierAnswer) Barrier() (*document.Barrier, error) {
	return decode[document.Barrier]("the barrier's result", a.Result)
}

// decode reads b as a T, strictly; name says what is read, for an error.
func decode[T any](name string, b []byte) (*T, error) {
	var v T
	if err := strictjson.Unmarshal(name, b, &v); err != nil {
		return nil, err
	}
	return &v, nil
}
