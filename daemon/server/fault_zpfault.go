//go:build zpfault

package server

import "strings"

// faultPoint panics on a request whose directory asks for it: a test
// build only (-tags zpfault), never the shipped binary.
func faultPoint(dir string) {
	if strings.Contains(dir, "zp-fault-panic-request") {
		panic("zpfault: a panic this test build was asked for, planning " + dir)
	}
}
