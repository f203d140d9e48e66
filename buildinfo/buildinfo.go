// Package buildinfo names the build and the release every binary of
// zarf-planner carries: the daemon, the module and the chart renderer.
// The Makefile sets both (with -X) in every binary it builds, so one
// binary can tell another of a different build and refuse it. It imports
// nothing, so the smallest binary can carry it.
package buildinfo

// ID identifies the build: the Makefile sets it to a digest of the
// sources. Unset, it is "dev".
var ID = "dev"

// Version is the release (the collection's version) a binary belongs to,
// set by the Makefile; "dev" unset. Messages about a binary of another
// build name both versions.
var Version = "dev"
