package facts

import "strings"

// The character rules of names, read a byte at a time. They were
// regular expressions; compiling six of them took most of this
// package's start-up (about 0.8 ms of every module's and daemon's start),
// and matching one took longer than reading the name. FuzzRulesReadAsTheirExpressions
// holds each to the expression it replaces, which its doc comment gives.

// lower reports whether c is a lower-case ASCII letter or a digit.
func lower(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// isDNSLabel: ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$
func isDNSLabel(s string) bool {
	if s == "" || !lower(s[0]) || !lower(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if !lower(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

// isDNSSubdomain: ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$
func isDNSSubdomain(s string) bool {
	for {
		label, rest, more := strings.Cut(s, ".")
		if !isDNSLabel(label) {
			return false
		}
		if !more {
			return true
		}
		s = rest
	}
}

// isPackageName: ^[a-z0-9][a-z0-9-]*$
func isPackageName(s string) bool {
	if s == "" || !lower(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !lower(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

// isToken: ^[a-z0-9]([a-z0-9._/-]*[a-z0-9])?$
func isToken(s string) bool {
	if s == "" || !lower(s[0]) || !lower(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		switch c := s[i]; {
		case lower(c), c == '.', c == '_', c == '/', c == '-':
		default:
			return false
		}
	}
	return true
}

// isArchitecture: ^[a-z0-9_]{1,32}$
func isArchitecture(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := range len(s) {
		if !lower(s[i]) && s[i] != '_' {
			return false
		}
	}
	return true
}

// isKindName: ^[A-Za-z][A-Za-z0-9]{0,62}$
func isKindName(s string) bool {
	letter := func(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
	if s == "" || len(s) > 63 || !letter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !letter(s[i]) && !('0' <= s[i] && s[i] <= '9') {
			return false
		}
	}
	return true
}
