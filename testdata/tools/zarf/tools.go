//go:build tools

// Package tools records the zarf CLI as a build dependency of the fixtures.
package tools

import _ "github.com/zarf-dev/zarf"
