// Module planner-bench compares zarf-planner's planner with deppy's solver
// on the same synthetic instances. It is bench-only: the product does not
// depend on deppy. Run it through `make bench-planner`.
module github.com/colonel-byte/zarf-planner/testdata/bench/planner

go 1.26.6

require (
	github.com/colonel-byte/zarf-planner v0.0.0
	github.com/crillab/gophersat v1.4.0
	github.com/operator-framework/deppy v0.3.0
)

require (
	github.com/Masterminds/semver/v3 v3.5.0 // indirect
	github.com/go-air/gini v1.0.4 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/goccy/go-yaml v1.19.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	k8s.io/apimachinery v0.36.3 // indirect
	k8s.io/klog/v2 v2.140.0 // indirect
	k8s.io/utils v0.0.0-20260507154919-ff6756f316d2 // indirect
)

replace github.com/colonel-byte/zarf-planner => ../../..
