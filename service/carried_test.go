package service

import (
	"github.com/colonel-byte/zarf-planner/carry"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// carriedRequest is NewRequest with the files its carried options name
// read as its caller reads them (package carry): Read opens none.
func carriedRequest(path string, o options.Request, caller options.Caller) Request {
	r := NewRequest(path, o, caller)
	r.Carried = carry.Files(r.Files())
	return r
}
