// Package caller is the client side of a request: what only the caller
// knows and does. Both front ends (package cli and the Ansible module)
// build their requests here from the options they parsed: paths made
// absolute against the caller's working directory, the caller's cluster
// and time from its environment (read here and nowhere else), a saved
// plan replayed, the files that stay with the caller taken out. A plan
// asked before is answered here from the kept plans, without a daemon,
// and the files a plan's answer holds (a saved plan, a page) are written
// here, where the caller runs.
//
// The package stays small: it imports the wire contract, not the planner
// or Kubernetes, so the module binary can use it. The daemon's answers
// read their documents as package document's types themselves
// (contract's answers.go).
package caller

// ArgError is a request the caller's own arguments or environment make
// impossible (an option's value, SOURCE_DATE_EPOCH): a usage error, for a
// front end that tells those apart.
type ArgError struct{ Err error }

func (e *ArgError) Error() string { return e.Err.Error() }
func (e *ArgError) Unwrap() error { return e.Err }
