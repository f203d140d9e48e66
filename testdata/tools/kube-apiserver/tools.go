//go:build tools

// Package tools records kube-apiserver as a build dependency of the
// cluster tests.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
