# zarf-planner: build, tools, fixtures, demo and tests.
# `make demo` and `make test` work on a fresh machine (see README.md).

SHELL := /bin/bash
GO ?= go
TOOLS := $(CURDIR)/.tools/bin
VENV := $(CURDIR)/.venv
PYTHON_VERSION := $(shell python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
ZARF := $(TOOLS)/zarf
ZARF_VERSION := v0.84.0
# The build id every binary carries (package buildinfo): a module refuses a
# daemon of another build, and a daemon a chart renderer of another build.
BUILD_ID := $(shell cat go.sum $$(find . -name '*.go' -not -path './.tools/*' -not -path './testdata/tools/*' -not -path './.venv/*' | sort) 2>/dev/null | sha256sum | cut -c1-16)
# The collection's version, which the binaries report beside their build.
VERSION := $(shell sed -n 's/^version: //p' module/collection/galaxy.yml)
# The date the built collection's changelog gives its version: the last
# commit's (today's outside a git checkout).
RELEASE_DATE := $(shell git log -1 --format=%cs 2>/dev/null || date -u +%F)
LDFLAGS := -s -w -X github.com/colonel-byte/zarf-planner/buildinfo.ID=$(BUILD_ID) -X github.com/colonel-byte/zarf-planner/buildinfo.Version=$(VERSION)
# Every binary is static (no libc), so it runs on any Linux of its
# architecture whatever its glibc (RHEL 8, Ubuntu 20.04, Amazon Linux 2).
export CGO_ENABLED := 0
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg

.PHONY: all build tools fixtures demo test test-go vet gate venv proto clean bench-planner bench-inspect bench-cache bench-memory fuzz collection install-collection dist lint sanity molecule demo-cluster host-deps venv-oldest bench-collection bench-catalog bench-registry bench-report bench-fairness docs-screenshots

all: build

MODULES := zarf_bundle_plan zarf_readiness_barrier zarf_bundle_cache zarf_bundle_catalog

# This machine's daemon (which is its own chart renderer) and module
# binary, and each module's generated sidecar doc. Playbooks run
# the modules from the installed collection (make install-collection), not
# from bin/.
build: bin/zarf-planner bin/zarf_planner_module $(addsuffix .yml,$(addprefix bin/docs/,$(MODULES)))

# The test control plane molecule's cluster scenarios and demo-cluster
# start (test support, never shipped): built by the targets that run it,
# not by build.
bin/testcluster: FORCE
	$(GO) build -o $@ ./cluster/clustertest/testcluster

# The daemon and CLI, and the chart renderer: started as
# zarf-planner-render, it renders Helm's templates in processes the daemon
# bounds and kills (inspect/claims/renderproc). Executable but not
# readable by others: a renderer of root's daemon runs as a user of its
# own, which the kernel then makes not dumpable from its start.
bin/zarf-planner: FORCE
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $@ ./cmd/zarf-planner
	chmod 0711 $@

# One module binary for every module: it learns which module it is from
# Ansible's arguments (or ZARF_PLANNER_MODULE).
bin/zarf_planner_module: FORCE
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $@ ./module

# Sidecar documentation: the module's hand-written text with its options
# generated from their declarations (module/docgen).
bin/docs/%.yml: module/docs/%.yml FORCE
	@mkdir -p $(@D)
	$(GO) run ./module/docgen -module $* -template $< > $@.tmp && mv $@.tmp $@

FORCE:

# Static binaries of every platform the collection carries: the module and
# the daemon (its own chart renderer) for each target architecture.
# HOST_PLATFORM is this machine's, the one platform the demo's collection
# carries.
COLLECTION_PLATFORMS ?= linux-amd64 linux-arm64
HOST_PLATFORM := linux-$(shell $(GO) env GOARCH)
DIST := $(CURDIR)/bin/dist
dist_binaries = $(foreach p,$(1),$(DIST)/$(p)/zarf-planner $(DIST)/$(p)/zarf_planner_module)
dist: $(call dist_binaries,$(COLLECTION_PLATFORMS))

$(DIST)/%/zarf-planner: FORCE
	GOOS=$(word 1,$(subst -, ,$*)) GOARCH=$(word 2,$(subst -, ,$*)) $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $@ ./cmd/zarf-planner
	chmod 0711 $@

$(DIST)/%/zarf_planner_module: FORCE
	GOOS=$(word 1,$(subst -, ,$*)) GOARCH=$(word 2,$(subst -, ,$*)) $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $@ ./module

# The installable collection, bin/colonel_byte-zarf_planner-<version>.tar.gz:
# module/collection (action plugins, role, playbook, meta), a small shell
# module per module name with its generated sidecar doc, and the binaries
# of every platform once each, xz-packed (binaries/linux-<arch>/*.xz, and
# binaries/SHA256SUMS of them unpacked: module/packbinaries.py), which the
# action plugins unpack, check and install on each target. See
# module/collection/README.md.
#
# $(call build_collection,STAGING,PLATFORMS,OUTPUT) stages a collection of
# PLATFORMS' binaries in STAGING and builds its tarball into OUTPUT.
#
# The tarball is galaxy.yml's version as released: antsibull-changelog
# release runs in the staging copy only, moving the fragments of the
# version into its changelog.yaml and writing CHANGELOG.rst with every
# release, this one included (a version changelog.yaml already holds is
# left as it is). The repository keeps its fragments until the release is
# cut there (antsibull-changelog release in module/collection, committed);
# keep_fragments stays false, so a released changelog.yaml is the one
# record and the tarball ships no fragment twice. The release date is the
# last commit's, so two builds of one commit make the same changelog.
define build_collection
	rm -rf $(1) && mkdir -p $(1)/plugins/modules $(1)/binaries
	cp -r module/collection/. $(1)/
	cp LICENSE $(1)/
	for m in $(MODULES); do \
		sed -e 's/@MODULE@/'$$m'/g' -e 's/@VERSION@/$(VERSION)/g' module/stub.sh > $(1)/plugins/modules/$$m && \
		cp bin/docs/$$m.yml $(1)/plugins/modules/ || exit 1; \
	done
	for p in $(2); do mkdir -p $(1)/binaries/$$p && cp $(DIST)/$$p/* $(1)/binaries/$$p/ || exit 1; done
	python3 module/packbinaries.py $(1)/binaries $(CURDIR)/.cache/xz
	cd $(1) && PATH=$(VENV)/bin:$$PATH antsibull-changelog release --version $(VERSION) --date $(RELEASE_DATE) >/dev/null
	mkdir -p $(3) && rm -f $(3)/colonel_byte-zarf_planner-*.tar.gz
	cd $(1) && $(VENV)/bin/ansible-galaxy collection build --force --output-path $(3)
endef
COLLECTION_DIR := $(CURDIR)/.cache/collection/ansible_collections/colonel_byte/zarf_planner
COLLECTION := bin/colonel_byte-zarf_planner-$(VERSION).tar.gz
collection: $(COLLECTION)
$(COLLECTION): dist $(addsuffix .yml,$(addprefix bin/docs/,$(MODULES))) venv FORCE
	$(call build_collection,$(COLLECTION_DIR),$(COLLECTION_PLATFORMS),$(CURDIR)/bin)

# The collection installed offline, as an operator installs it, where the
# repository's playbooks, tests and molecule scenarios find it.
COLLECTIONS_PATH := $(CURDIR)/.cache/collections
export ANSIBLE_COLLECTIONS_PATH := $(COLLECTIONS_PATH)
install-collection: $(COLLECTIONS_PATH)/.installed
$(COLLECTIONS_PATH)/.installed: $(COLLECTION)
	$(VENV)/bin/ansible-galaxy collection install --offline --force -p $(COLLECTIONS_PATH) $(COLLECTION)
	touch $@

# The demo's collection: the same collection with this machine's binaries
# only (the demo plans on localhost), built in .cache/demo-collection and
# installed into its own path, so that it never stands in for the
# collection of every platform that the tests install.
DEMO_COLLECTION_DIR := $(CURDIR)/.cache/demo-collection/ansible_collections/colonel_byte/zarf_planner
DEMO_COLLECTION_OUT := $(CURDIR)/.cache/demo-collection/dist
DEMO_COLLECTIONS_PATH := $(CURDIR)/.cache/demo-collections
.PHONY: demo-collection
demo-collection: $(call dist_binaries,$(HOST_PLATFORM)) $(addsuffix .yml,$(addprefix bin/docs/,$(MODULES))) venv
	$(call build_collection,$(DEMO_COLLECTION_DIR),$(HOST_PLATFORM),$(DEMO_COLLECTION_OUT))
	$(VENV)/bin/ansible-galaxy collection install --offline --force -p $(DEMO_COLLECTIONS_PATH) $(DEMO_COLLECTION_OUT)/colonel_byte-zarf_planner-$(VERSION).tar.gz

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

# The real zarf CLI, kube-apiserver and etcd, built once from the Go module
# proxy into .tools/bin (kube-apiserver: ~12 min cold on 2 cores).
ETCD := $(TOOLS)/etcd
tools: $(ZARF) $(KUBE_APISERVER) $(ETCD)

$(ETCD): testdata/tools/etcd/go.mod testdata/tools/etcd/go.sum
	@mkdir -p $(TOOLS)
	cd testdata/tools/etcd && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' \
		-o $(ETCD) go.etcd.io/etcd/server/v3
	$(ETCD) --version

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

# The oldest ansible-core the collection claims (meta/runtime.yml), for
# the test that runs its playbooks there too.
VENV_OLDEST := $(CURDIR)/.venv-oldest
venv-oldest: $(VENV_OLDEST)/.installed
$(VENV_OLDEST)/.installed: playbooks/requirements-oldest.txt
	python3 -m venv $(VENV_OLDEST)
	$(VENV_OLDEST)/bin/pip install --quiet --disable-pip-version-check -r playbooks/requirements-oldest.txt
	touch $@

# The example plan through ansible-playbook, with the demo's collection
# (this machine's binaries only: no other platform, no test support).
demo: venv demo-collection
	ANSIBLE_COLLECTIONS_PATH=$(DEMO_COLLECTIONS_PATH) $(VENV)/bin/ansible-playbook playbooks/plan-example.yml

# The whole flow against a real kube-apiserver: start the test control
# plane, plan the example in cluster mode, deploy each package with the real
# zarf CLI (--connected) and wait for its barrier, then stop it all.
DEMO_CLUSTER := $(CURDIR)/.cache/demo-cluster
demo-cluster: tools build bin/testcluster venv install-collection
	rm -rf $(DEMO_CLUSTER) && mkdir -p $(DEMO_CLUSTER)
	./bin/testcluster --dir $(DEMO_CLUSTER)/cluster > $(DEMO_CLUSTER)/cluster.log 2>&1 & \
	for i in $$(seq 1 900); do [ -f $(DEMO_CLUSTER)/cluster/pid ] && break; sleep 0.2; done; \
	$(VENV)/bin/ansible-playbook colonel_byte.zarf_planner.deploy_bundle \
		-e bundle_dir=$(CURDIR)/examples/bundles/reference-stack -e zarf_bin=$(ZARF) \
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

# The packages under testdata/ (test support, benchmark programs) are
# checked too: ./... leaves them out.
GATE_PACKAGES := ./... ./testdata/craft/... ./testdata/failures/... ./testdata/bench/memory/... ./testdata/bench/cache/profile/...
gate: $(STATICCHECK)
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "not gofmt-clean (run gofmt -w):"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(GATE_PACKAGES)
	$(STATICCHECK) $(GATE_PACKAGES)

# Every Go test. -timeout bounds the whole run; no test bounds its own time.
GO_TEST_TIMEOUT ?= 45m
test-go: build bin/testcluster install-collection venv-oldest
	PATH=$(VENV)/bin:$$PATH $(GO) test -count=1 -timeout $(GO_TEST_TIMEOUT) ./...

# A short fuzz run of every fuzz target: the archive and split readers,
# the prerequisites decoder, the cache's value decoder, the text, DOT
# and mermaid renderers, the plan page, and the saved-plan and policy
# readers. Each runs a number of inputs
# (about 5 s of this machine each), not a duration: Go 1.26's fuzz
# coordinator can fail a run whose -fuzztime deadline passes while a
# worker is busy ("context deadline exceeded", no crasher;
# go.dev/issue/75804, fixed in Go 1.27). `make fuzz FUZZTIME=10m` is the
# long run, every target for that long.
FUZZTIME ?=
FUZZ_TARGETS := ./inspect:FuzzReadStream:200x ./inspect:FuzzSplitReader:150x ./inspect:FuzzFrames:100000x ./inspect/claims:FuzzManifest:3000x \
	./planner/facts:FuzzDecode:8000x ./cache:FuzzDecodeEntry:5000x ./planner:FuzzRenderers:25000x ./render:FuzzRenderText:600x \
	./render:FuzzPlanPage:50x ./savedplan:FuzzDecode:20000x ./planner/policy:FuzzDecode:20000x \
	./daemon/server:FuzzRequestDecoding:5000x ./render:FuzzRenderDocument:2000x
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; n=$${rest#*:}; \
		limit=$(if $(FUZZTIME),$(FUZZTIME),$$n); \
		echo "== fuzz $$name ($$limit)"; \
		$(GO) test $$pkg -run XXX -fuzz "^$$name$$" -fuzztime $$limit -fuzzminimizetime 2s || exit 1; \
	done

# One daemon, DURATION seconds (default 600) of mixed concurrent module
# calls: restarts, RSS, goroutines and descriptors at the start and the
# end, latencies (testdata/bench/soak/soak.py). Not part of make test.
.PHONY: soak
DURATION ?= 600
soak: build
	python3 testdata/bench/soak/soak.py $(DURATION)

# Every fuzz target for FUZZTIME each (default 60s), with the crashes and
# exec-rate stalls of each (testdata/fuzz/long.py). Not part of make test.
.PHONY: fuzz-long print-fuzz-targets
fuzz-long:
	FUZZTIME=$(FUZZTIME) python3 testdata/fuzz/long.py

print-fuzz-targets:
	@echo $(FUZZ_TARGETS)

# ansible-lint (production profile) on the playbooks, the molecule
# scenarios and the collection's role and playbook; then on the installed
# collection, from its directory and with no configuration but its own
# (--project-dir: the repository's .ansible-lint excludes .cache/), as an
# operator or a certification run lints it: its generated docs, changelog,
# sanity ignore files (and its .ansible-lint-ignore, which says why).
INSTALLED_COLLECTION := $(COLLECTIONS_PATH)/ansible_collections/colonel_byte/zarf_planner
lint: venv install-collection
	PATH=$(VENV)/bin:$$PATH ansible-lint --profile production playbooks molecule \
		module/collection/roles module/collection/playbooks
	cd $(INSTALLED_COLLECTION) && PATH=$(VENV)/bin:$$PATH ansible-lint --profile production --project-dir .

# ansible-test sanity on the built tarball, unpacked outside this git
# checkout (ansible-test reads only the files git tracks when it finds a
# repository), with the Python this venv runs and no containers, once for
# each ansible-core of SANITY_VENVS: by default every series
# requires_ansible names, the oldest (.venv-oldest, 2.16), the two between
# (git-ignored venvs of ansible-core alone) and the newest (.venv, 2.19);
# `make sanity SANITY_VENVS="$$PWD/.venv"` runs one. Its
# per-test virtual environments live in .cache/ansible-test/home, with an
# offline pip bootstrap (testdata/tools/ansible-test/get_pip.py) of the pip
# each ansible-test asks for. Each line of tests/sanity/ignore-*.txt (one
# file per series) says why.
SANITY := $(CURDIR)/.cache/ansible-test
CORE_VENVS := $(CURDIR)/.cache/venv-core-2.17 $(CURDIR)/.cache/venv-core-2.18
SANITY_VENVS ?= $(VENV_OLDEST) $(CORE_VENVS) $(VENV)
sanity: collection venv-oldest venv-core-2.17 venv-core-2.18
	mkdir -p $(SANITY)/home/.ansible/test/cache
	@for venv in $(SANITY_VENVS); do \
		pip=$$(sed -n "s/^ *pip='\([0-9.]*\)',/\1/p" $$venv/lib/python*/site-packages/ansible_test/_internal/python_requirements.py 2>/dev/null | head -n1 | tr . _); \
		test -n "$$pip" || { echo "$$venv: ansible-test's pip version not found"; exit 1; }; \
		cp testdata/tools/ansible-test/get_pip.py $(SANITY)/home/.ansible/test/cache/get_pip_$$pip.py; \
		src=$$(mktemp -d) && \
		mkdir -p $$src/ansible_collections/colonel_byte/zarf_planner && \
		tar xzf $(COLLECTION) -C $$src/ansible_collections/colonel_byte/zarf_planner && \
		echo "== ansible-test sanity with ansible-core $$($$venv/bin/python -c "from ansible.release import __version__; print(__version__)")" && \
		(cd $$src/ansible_collections/colonel_byte/zarf_planner && \
		HOME=$(SANITY)/home $$venv/bin/ansible-test sanity --color no --python $(PYTHON_VERSION) --requirements); \
		status=$$?; rm -rf $$src; [ $$status = 0 ] || exit $$status; \
	done

# ansible-core of the series between the oldest and the newest, in
# git-ignored venvs, for make sanity.
CORE_2.17 := 2.17.14
CORE_2.18 := 2.18.19
venv-core-%: $(CURDIR)/.cache/venv-core-%/.installed ;
# Kept: make would remove them as intermediate files of the rule above.
.PRECIOUS: $(CURDIR)/.cache/venv-core-%/.installed
$(CURDIR)/.cache/venv-core-%/.installed:
	python3 -m venv $(@D)
	$(@D)/bin/pip install --quiet --disable-pip-version-check ansible-core==$(CORE_$*)
	touch $@

# Every molecule scenario, full test sequence: localhost with the default
# driver, and `ssh`, a target reached over real SSH.
MOLECULE_SCENARIOS := default failures airgap-cache cluster ssh
molecule: tools build bin/testcluster venv install-collection
	@for s in $(MOLECULE_SCENARIOS); do \
		echo "== molecule test -s $$s"; \
		PATH=$(VENV)/bin:$$PATH molecule test -s $$s || exit 1; \
	done

test: host-deps tools build bin/testcluster venv venv-oldest install-collection gate test-go fuzz lint sanity molecule

# The Debian packages the tests run, installed when missing (as root, with
# apt): a real sshd on the loopback (molecule's ssh scenario),
# qemu-user-static, which runs the arm64 binaries without binfmt, and
# chromium, the browser the report pages are opened in (headless).
host-deps:
	@need=""; [ -x /usr/sbin/sshd ] || need="$$need openssh-server"; \
	command -v ssh >/dev/null || need="$$need openssh-client"; \
	command -v qemu-aarch64-static >/dev/null || need="$$need qemu-user-static"; \
	command -v chromium >/dev/null || need="$$need chromium"; \
	[ -x /usr/bin/docker-registry ] || need="$$need docker-registry"; \
	if [ -n "$$need" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "apt-get install$$need"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$need; \
		else echo "make test needs the Debian packages$$need: install them as root (apt-get install$$need)"; exit 1; fi; \
	fi

# Planner speed on synthetic problems, against deppy and a bare gophersat
# Solve of the same clauses, in one run (bench-only module: the product
# does not depend on deppy). Results: docs/benchmarks.md.
bench-planner:
	cd testdata/bench/planner && $(GO) run .

# Peak memory of reading a directory of crafted archives at GOMAXPROCS=8,
# against the example bundle; then of directories whose charts render 15 MiB
# or without end, the renderer processes counted with the reader (goal: 256
# MiB together). Results: docs/security.md.
bench-memory: bin/zarf-planner
	$(GO) run ./testdata/bench/memory -bin bin/zarf-planner
	$(GO) run ./testdata/bench/rendermemory -bin bin/zarf-planner

# The planner against the reference planner of planner/reference_test.go
# (README's "Planning rules") on many random bundles, with a fixed seed
# (go test runs 500 of them). Counts: docs/benchmarks.md.
PROPERTY_CHECKS ?= 20000
PROPERTY_SEED ?= 1
.PHONY: planner-property
planner-property:
	$(GO) test ./planner -count=1 -timeout 60m -run TestPlannerAgreesWithReference -v \
		-rapid.checks=$(PROPERTY_CHECKS) -rapid.seed=$(PROPERTY_SEED)

# The collection as a new operator meets it: tarball size, offline
# install, first and second plan, against one ping task, one run.
bench-collection: collection
	python3 testdata/bench/collection/bench.py

# The plan page of a 200-package synthetic plan: time and size, against
# the contract document of the same plan. Results: docs/benchmarks.md.
bench-report:
	$(GO) test ./render -run '^$$' -bench PlanPage200 -benchmem -count 5

# The screenshots (and pages) of the example bundle's plan and of the
# cycle fixture's failure in docs/report, taken by headless chromium
# (make host-deps installs it) in the browser test.
docs-screenshots:
	@mkdir -p docs/report
	$(GO) test ./render -count=1 -run '^TestPagesInABrowser$$' -args -screenshots=$(CURDIR)/docs/report

# Cold archive inspection (cache off, its own cache and state directories)
# against zstd -dc of the same bytes (CPU and wall, GOMAXPROCS=1 and every
# core) and the zarf CLI, one run of 5 rounds. Builds its archives with the
# zarf CLI once (.cache/bench/inspect).
bench-inspect: tools bin/zarf-planner
	python3 testdata/bench/inspect/bench.py

# Planning against a bare stat walk over 1,000 distinct archives, one run:
# cold and warm caches, memo hits and misses, and the operator's first plan
# with no daemon running. Its own cache and state directories. Builds the
# archives with the zarf CLI once (.cache/bench/cache).
bench-cache: tools build
	python3 testdata/bench/cache/bench.py

# The catalog: a cold catalog against a cold plan of bench-inspect's large
# directory, a warm one against a stat walk of bench-cache's 1,000
# archives, one run. Results: docs/benchmarks.md.
bench-catalog: build
	python3 testdata/bench/catalog/bench.py

# Planning from an OCI registry (issue 33): bytes fetched against zarf
# package pull, cold against a directory, warm against a bare listing, on
# 100 published packages with images. Results: docs/benchmarks.md.
bench-registry: tools build
	python3 testdata/bench/registry/bench.py

# What a hostile neighbour costs a trusted plan through one daemon (issue
# 44): the upstream bundle's cold plan alone, then beside a dripping
# registry, looping charts, deep manifests, a 15 MiB render and a listing
# without end, each neighbour's end and the daemon's and renderers' peak
# memory. Builds its archives with the zarf CLI once (.cache/bench/fairness).
# Results: docs/benchmarks.md.
bench-fairness: tools build
	$(GO) run ./testdata/bench/fairness -bin bin/zarf-planner

# Regenerate the gRPC contract from contract/plannerpb/planner.proto.
proto:
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
	GOBIN=$(TOOLS) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
	cd contract/plannerpb && PATH=$(TOOLS):$$PATH protoc --go_out=. --go_opt=paths=source_relative \
		--go-grpc_out=. --go-grpc_opt=paths=source_relative planner.proto

clean:
	rm -rf bin
