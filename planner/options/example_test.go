package options_test

import (
	"fmt"

	"github.com/colonel-byte/zarf-planner/planner/options"
)

// Every option is declared once, as a field of a group with its tags;
// Of lists a group's declarations, which the CLI's flags, the modules'
// argument specs and their docs are generated from.
func ExampleOf() {
	for _, o := range options.Of(options.Cache{}) {
		fmt.Printf("%s (%s) default %q\n", o.Name, o.Kind, o.Default)
	}
	// Output:
	// cache_dir (path) default ""
	// use_cache (bool) default "true"
}
