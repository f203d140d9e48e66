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
	go.yaml.in/yaml/v2 v2.4.4 // indirect
	sigs.k8s.io/yaml v1.6.0 // indirect
)

replace github.com/colonel-byte/zarf-planner => ../../..
