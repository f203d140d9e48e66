package inspect

import "sync"

// Decoders of the big windows zarf writes (a power of two up to 8 MiB) are
// reused too, each size from its own pool: building one allocates and
// clears its whole window, which for a directory of big packages is a
// good part of the reading. A window of another size (a frame may ask
// for any) gets a decoder of its own, closed after its archive, so there
// are never more than a few pools.
var (
	decoders2M = sync.Pool{}
	decoders4M = sync.Pool{}
	decoders8M = sync.Pool{}
)

// pooled returns the pool of decoders of exactly window bytes, or nil.
func pooled(window int64) *sync.Pool {
	switch window {
	case 2 << 20:
		return &decoders2M
	case 4 << 20:
		return &decoders4M
	case 8 << 20:
		return &decoders8M
	}
	return nil
}
