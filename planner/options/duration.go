package options

import (
	"fmt"
	"time"
)

// The duration rule (docs/vocabulary.md): a timeout is a duration. The
// CLI takes it as a Go duration (90s, 10m); the Ansible modules take
// whole seconds, Ansible's habit; the wire carries whole seconds. These
// two functions are the only conversions between them, used by both
// front ends.

// Seconds is a timeout given in whole seconds (a module's timeout, the
// wire's timeout_seconds) as a duration. It must be positive.
func Seconds(n int64) (time.Duration, error) {
	if n <= 0 {
		return 0, fmt.Errorf("timeout must be a positive number of seconds, got %d", n)
	}
	if n > int64(time.Duration(1<<63-1)/time.Second) {
		return 0, fmt.Errorf("timeout of %d seconds is too long", n)
	}
	return time.Duration(n) * time.Second, nil
}

// WholeSeconds is a timeout given as a duration (a CLI --timeout) in the
// whole seconds the wire carries, rounded up: a positive duration never
// becomes 0, which the daemon would take as its default. It must be
// positive.
func WholeSeconds(d time.Duration) (int64, error) {
	if d <= 0 {
		return 0, fmt.Errorf("timeout must be a positive duration, got %s", d)
	}
	n := int64(d / time.Second)
	if d%time.Second != 0 {
		n++
	}
	return n, nil
}
