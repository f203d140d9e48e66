package planner

import "github.com/Masterminds/semver/v3"

// parseVersion is semver.NewVersion, trying semver.StrictNewVersion
// first: a strict semantic version ("1.2.3", "1.2.3-rc.1+build") is
// parsed without NewVersion's regular expression, about ten times faster,
// into the same value (FuzzParseVersionIsNewVersion). Anything else (a
// "v", a missing part) is NewVersion's to parse or refuse.
func parseVersion(s string) (*semver.Version, error) {
	if v, err := semver.StrictNewVersion(s); err == nil {
		return v, nil
	}
	return semver.NewVersion(s)
}
