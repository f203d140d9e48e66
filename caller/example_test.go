package caller_test

import (
	"fmt"
	"path/filepath"

	"github.com/colonel-byte/zarf-planner/caller"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// A front end builds a plan request with NewPlan, from the options the
// operator gave (here the defaults and an architecture) and which of
// them were given (here none); it then asks a contract.Planner (the
// daemon, or a server in process) with p.Request and writes the answer
// with p.Write.
func ExampleNewPlan() {
	o := options.Defaults()
	o.Architecture = "amd64"
	p, err := caller.NewPlan("../examples/bundles/reference-stack", o, options.CLICaller, func(string) bool { return false }, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(filepath.Base(p.Request.Path), p.Request.Caller, p.Request.Options.Architecture)
	// Output: reference-stack cli amd64
}
