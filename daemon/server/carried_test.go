package server

import (
	"github.com/colonel-byte/zarf-planner/carry"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// carried is req as its caller sends it: with the files its carried
// options name read now, as the caller (package carry), and the
// approvals beside its saved plan. The daemon opens none of them, so a
// test that rewrites a file sends the request through carried again.
func carried(req *contract.PlanRequest) *contract.PlanRequest {
	r := *req
	r.Carried = carry.Files(options.CarriedFiles(r.Options))
	if o := r.Options; o.PlanFile != "" && (o.RequireApprovals > 0 || len(o.ApprovalKeys) > 0) {
		var keys [][]byte
		for _, c := range r.Carried {
			if c.Name == "approval_keys" && len(c.Files) == 1 {
				keys = append(keys, c.Files[0].Data)
			}
		}
		r.Approvals, r.ApprovalsIgnored, _ = carry.Approvals(o.PlanFile, keys)
	}
	return &r
}

// carriedCatalog is a catalog request with the files it names read as
// its caller reads them.
func carriedCatalog(req *contract.CatalogRequest) *contract.CatalogRequest {
	r := *req
	r.Carried = carry.Files(options.CarriedFiles(options.Read{PublicKey: r.PublicKey, Prerequisites: r.Prerequisites}))
	return &r
}
