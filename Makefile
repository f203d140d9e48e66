# zarf-planner: build, tools, fixtures, demo and tests.
# `make demo` and `make test` work on a fresh machine (see README.md).

SHELL := /bin/bash
GO ?= go
TOOLS := $(CURDIR)/.tools/bin
VENV := $(CURDIR)/.venv
ZARF := $(TOOLS)/zarf
ZARF_VERSION := v0.84.0
# The build id both binaries carry: a module refuses a daemon of another build.
BUILD_ID := $(shell cat go.sum $$(find . -name '*.go' -not -path './.tools/*' -not -path './testdata/tools/*' -not -path './.venv/*' | sort) 2>/dev/null | sha256sum | cut -c1-16)
LDFLAGS := -s -w -X github.com/colonel-byte/zarf-planner/daemon/contract.BuildID=$(BUILD_ID)
export ANSIBLE_LIBRARY := $(CURDIR)/bin/library
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg

.PHONY: all build tools fixtures demo test test-go vet gate venv proto clean bench-planner bench-inspect bench-cache fuzz collection lint molecule demo-cluster

all: build

MODULES := zarf_bundle_plan zarf_readiness_barrier zarf_bundle_cache

build: bin/zarf-planner $(addprefix bin/library/,$(MODULES)) $(addsuffix .yml,$(addprefix bin/library/,$(MODULES))) bin/testcluster

# The test control plane molecule's cluster scenario starts (test support,
# never shipped).
bin/testcluster: FORCE
	$(GO) build -o $@ ./inspect/cluster/clustertest/testcluster

bin/zarf-planner: FORCE
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $@ ./daemon

# One module binary, installed under each module name.
bin/module: FORCE
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $@ ./module

bin/library/%: bin/module
	@mkdir -p $(@D)
	cp $< $@

# Sidecar documentation: the module's hand-written text with its options
# generated from their declarations (module/docgen).
bin/library/%.yml: module/docs/%.yml FORCE
	@mkdir -p $(@D)
	$(GO) run ./module/docgen -module $* -template $< > $@.tmp && mv $@.tmp $@

FORCE:

# An installable collection tarball: bin/colonel_byte-zarf_planner-<version>.tar.gz
COLLECTION_DIR := $(CURDIR)/.cache/collection
collection: build venv
	rm -rf $(COLLECTION_DIR) && mkdir -p $(COLLECTION_DIR)/plugins/modules
	cp -r module/collection/. $(COLLECTION_DIR)/
	cp $(addprefix bin/library/,$(MODULES)) $(addsuffix .yml,$(addprefix bin/library/,$(MODULES))) $(COLLECTION_DIR)/plugins/modules/
	rm -f bin/colonel_byte-zarf_planner-*.tar.gz
	cd $(COLLECTION_DIR) && $(VENV)/bin/ansible-galaxy collection build --force --output-path $(CURDIR)/bin

KUBE_VERSION := v1.36.3
KUBE_APISERVER := $(TOOLS)/kube-apiserver
KUBE_LDFLAGS := -s -w \
	-X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=36 \
	-X k8s.io/component-base/version.gitTreeState=clean \
	-X k8s.io/component-base/version.buildDate=2026-01-01T00:00:00Z \
	-X k8s.io/client-go/pkg/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/client-go/pkg/version.gitMajor=1 \
	-X k8s.io/client-go/pkg/version.gitMinor=36

# The real zarf CLI and kube-apiserver, built once from the Go module proxy
# into .tools/bin (kube-apiserver: ~12 min cold on 2 cores).
tools: $(ZARF) $(KUBE_APISERVER)

$(KUBE_APISERVER): testdata/tools/kube-apiserver/go.mod testdata/tools/kube-apiserver/go.sum
	@mkdir -p $(TOOLS)
	cd testdata/tools/kube-apiserver && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(KUBE_LDFLAGS)' \
		-o $(KUBE_APISERVER) k8s.io/kubernetes/cmd/kube-apiserver
	$(KUBE_APISERVER) --version

$(ZARF): testdata/tools/zarf/go.mod testdata/tools/zarf/go.sum
	@mkdir -p $(TOOLS)
	cd testdata/tools/zarf && CGO_ENABLED=0 $(GO) build -trimpath \
		-ldflags '-s -w -X github.com/zarf-dev/zarf/src/config.CLIVersion=$(ZARF_VERSION)' \
		-o $(ZARF) github.com/zarf-dev/zarf
	$(ZARF) version

# Rebuild the committed example and test archives from their sources.
fixtures: $(ZARF)
	ZARF=$(ZARF) ./testdata/build-fixtures.sh

# ansible-core (and later molecule) from PyPI into a git-ignored venv.
venv: $(VENV)/.installed

$(VENV)/.installed: playbooks/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r playbooks/requirements.txt
	touch $@

demo: build venv
	$(VENV)/bin/ansible-playbook playbooks/plan-example.yml

# The whole flow against a real kube-apiserver: start the test control
# plane, plan the example in cluster mode, deploy each package with the real
# zarf CLI (--connected) and wait for its barrier, then stop it all.
DEMO_CLUSTER := $(CURDIR)/.cache/demo-cluster
demo-cluster: tools build venv
	rm -rf $(DEMO_CLUSTER) && mkdir -p $(DEMO_CLUSTER)
	./bin/testcluster --dir $(DEMO_CLUSTER)/cluster > $(DEMO_CLUSTER)/cluster.log 2>&1 & \
	for i in $$(seq 1 900); do [ -f $(DEMO_CLUSTER)/cluster/pid ] && break; sleep 0.2; done; \
	$(VENV)/bin/ansible-playbook playbooks/deploy-bundle.yml -e zarf_planner_mode=cluster \
		-e kubeconfig=$(DEMO_CLUSTER)/cluster/kubeconfig -e '{"zarf_deploy_args": ["--connected"]}' \
		-e zarf_planner_state_dir=$(DEMO_CLUSTER)/state -e zarf_planner_cache_dir=$(DEMO_CLUSTER)/cache; \
	status=$$?; ./bin/zarf-planner daemon stop --state-dir $(DEMO_CLUSTER)/state >/dev/null 2>&1; \
	kill $$(cat $(DEMO_CLUSTER)/cluster/pid) 2>/dev/null; wait; exit $$status

vet:
	$(GO) vet ./...

# The Go gate: gofmt-clean, go vet and staticcheck (pinned) on every package.
STATICCHECK := $(TOOLS)/staticcheck
STATICCHECK_VERSION := v0.8.2
$(STATICCHECK):
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

gate: $(STATICCHECK)
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "not gofmt-clean (run gofmt -w):"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...

# Every Go test. -timeout bounds the whole run; no test bounds its own time.
GO_TEST_TIMEOUT ?= 45m
test-go:
	PATH=$(VENV)/bin:$$PATH $(GO) test -count=1 -timeout $(GO_TEST_TIMEOUT) ./...

# A short fuzz run of each input reader (archives, prerequisites documents).
FUZZTIME ?= 10s
fuzz:
	$(GO) test ./inspect -run XXX -fuzz FuzzReadStream -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./planner/facts -run XXX -fuzz FuzzDecode -fuzztime $(FUZZTIME) -fuzzminimizetime 2s

# ansible-lint (production profile) on the playbooks and molecule scenarios.
lint: build venv
	PATH=$(VENV)/bin:$$PATH ansible-lint --profile production playbooks molecule

# Every molecule scenario (default driver, localhost), full test sequence.
MOLECULE_SCENARIOS := default failures airgap-cache cluster
molecule: build venv
	@for s in $(MOLECULE_SCENARIOS); do \
		echo "== molecule test -s $$s"; \
		PATH=$(VENV)/bin:$$PATH molecule test -s $$s || exit 1; \
	done

test: tools build venv collection gate test-go fuzz lint molecule

# Planner speed on synthetic problems, against deppy and a bare gophersat
# Solve of the same clauses, in one run (bench-only module: the product
# does not depend on deppy). Results: docs/benchmarks.md.
bench-planner:
	cd testdata/bench/planner && $(GO) run .

# The planner against the reference planner of planner/reference_test.go
# (README's "Planning rules") on many random bundles, with a fixed seed
# (go test runs 500 of them). Counts: docs/benchmarks.md.
PROPERTY_CHECKS ?= 20000
PROPERTY_SEED ?= 1
.PHONY: planner-property
planner-property:
	$(GO) test ./planner -count=1 -timeout 60m -run TestPlannerAgreesWithReference -v \
		-rapid.checks=$(PROPERTY_CHECKS) -rapid.seed=$(PROPERTY_SEED)

# Archive inspection speed against zstd -dc and the zarf CLI, one run.
# Builds its archives with the zarf CLI once (.cache/bench/inspect).
bench-inspect: tools bin/zarf-planner
	python3 testdata/bench/inspect/bench.py

# Warm planning against a bare stat walk over 1,000 distinct archives, one
# run. Builds the archives with the zarf CLI once (.cache/bench/cache).
bench-cache: tools build
	python3 testdata/bench/cache/bench.py

# Regenerate the gRPC contract from daemon/contract/plannerpb/planner.proto.
proto:
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
	GOBIN=$(TOOLS) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
	cd daemon/contract/plannerpb && PATH=$(TOOLS):$$PATH protoc --go_out=. --go_opt=paths=source_relative \
		--go-grpc_out=. --go-grpc_opt=paths=source_relative planner.proto

clean:
	rm -rf bin
