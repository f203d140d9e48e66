//go:build tools

// Package tools records etcd as a build dependency of the cluster tests.
package tools

import _ "go.etcd.io/etcd/server/v3"
