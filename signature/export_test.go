package signature

import "github.com/colonel-byte/zarf-planner/privdir"

// LoadKey reads a public key file as a caller reads one (open-then-check,
// within MaxKey) and checks it: for tests, which name key files; the
// daemon takes the bytes its caller carried (KeyOf).
func LoadKey(path string) (*Key, error) {
	b, err := privdir.ReadRegular(path, MaxKey, true)
	return KeyOf(path, b, err)
}
