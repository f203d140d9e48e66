//go:build zpfault

package inspect

import "strings"

// faultPoint panics on an archive whose name asks for it: a test build
// only (-tags zpfault), never the shipped binary.
func faultPoint(file string) {
	if strings.Contains(file, "zp-fault-panic-archive") {
		panic("zpfault: a panic this test build was asked for, reading " + file)
	}
}
