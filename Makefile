# knit's build. Every tool it needs is built here from the Go module proxy
# into ./bin, pinned, and skipped when already present.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

BIN            := $(CURDIR)/bin
CONTROLLER_GEN := go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0
K8S_VERSION    := 1.37.0
ETCD_VERSION   := 3.6.6
# The release the binaries report, as Kubernetes' own build stamps it.
K8S_LDFLAGS    := -X k8s.io/component-base/version.gitVersion=v$(K8S_VERSION) \
                  -X k8s.io/component-base/version.gitMajor=1 \
                  -X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(K8S_VERSION))) \
                  -X k8s.io/component-base/version.gitTreeState=clean

# envtest (and knit dev) find kube-apiserver and etcd here. Exported only to
# the targets that start a control plane, so `make test-unit` needs no ./bin.
test chart-test run bench bench-scale: export KUBEBUILDER_ASSETS := $(BIN)

.PHONY: all build generate verify-generated tools base-images test test-unit test-reliability fuzz run bench bench-scale vet fmt-check clean-tools host-packages bench-packages

all: build

build: ## knit, and knit-queue beside it (the queue-proxy alone, static: it starts in milliseconds and maps no libc)
	go build -o $(BIN)/ ./cmd/knit
	CGO_ENABLED=0 go build -o $(BIN)/ ./cmd/knit-queue

generate: ## deepcopy and CRDs (charts/knit/crds is the one copy everything uses)
	$(CONTROLLER_GEN) object paths=./api/...
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./api/... output:crd:dir=charts/knit/crds

verify-generated: generate ## fail when committed generated files are stale
	@if [ -n "$$(git status --porcelain -- api charts/knit/crds)" ]; then \
		echo "generated files are stale; run 'make generate' and commit:"; \
		git status --short -- api charts/knit/crds; git diff --stat -- api charts/knit/crds; exit 1; fi

# ---- control-plane and cluster binaries, built here, never downloaded ----
# Built once per go.mod/go.sum into $(TOOLS_CACHE), outside the clone, and
# linked into ./bin (hack/tools.sh): a fresh clone on a warm machine pays
# nothing, a cold machine ~17 min for Kubernetes on 2 cores.
TOOLS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/knit/tools
export TOOLS_CACHE BIN
K8S_BINARIES := kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl
TOOL         := hack/tools.sh

tools: ## kube-apiserver, kube-controller-manager, kubectl and etcd for knit dev and envtest (and the node's binaries beside them), buildkitd, buildctl and the registry for dockerfile:// builds, pebble and pebble-challtestsrv for the ACME tests
	@$(TOOL) kubernetes hack/kubernetes "$(K8S_BINARIES)" -- \
		sh -c 'go build -ldflags "-s -w $(K8S_LDFLAGS)" -o "$$OUT/" $(addprefix k8s.io/kubernetes/cmd/,$(K8S_BINARIES))'
	@$(TOOL) etcd hack/etcd etcd -- sh -c 'go build -ldflags "-s -w" -o "$$OUT/etcd" go.etcd.io/etcd/server/v3'
	@$(TOOL) buildkit hack/buildkit "buildkitd buildctl" -- sh -c 'CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$$OUT/" \
		github.com/moby/buildkit/cmd/buildkitd github.com/moby/buildkit/cmd/buildctl'
	@$(TOOL) registry hack/registry registry -- sh -c 'CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$$OUT/registry" .'
	@$(TOOL) pebble hack/pebble "pebble pebble-challtestsrv" -- sh -c 'CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$$OUT/" \
		github.com/letsencrypt/pebble/v2/cmd/pebble github.com/letsencrypt/pebble/v2/cmd/pebble-challtestsrv'

clean-tools: ## unlink ./bin's tools (the cache outside the clone stays)
	rm -f $(addprefix $(BIN)/,$(K8S_BINARIES)) $(BIN)/etcd $(BIN)/buildkitd $(BIN)/buildctl $(BIN)/registry $(BIN)/pebble $(BIN)/pebble-challtestsrv

# ---- checks ----
vet:
	go vet ./...
	go vet -tags cluster ./e2e/cluster/

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Everything runs plain, then the packages with concurrency on the
# request path and in the runtime (lock-free breaker, pooled timers and
# connections, the replica supervisor, the Git passes) run again under
# the race detector. Tests that count allocations or measure the heap
# carry //go:build !race (the detector's shadow memory allocates on its
# own) and run in the plain pass.
RACE_PKGS := ./dataplane/... ./local/... ./gitsync/...

base-images: ## as root on Debian: the python and node bases dockerfile:// tests and examples build FROM, made from Debian's packages (hack/bases), cached outside the clone, linked at bin/bases
	@hack/bases/make.sh

host-packages: ## as root on Debian: runc, busybox-static and the CNI plugins for knit dev's container images and their tests
	@hack/host-packages.sh

bench-packages: ## as root on Debian: host-packages and nginx, make bench's reference edge proxy
	@hack/host-packages.sh nginx

test: tools host-packages base-images verify-generated vet fmt-check ## everything CI runs: unit, envtest, knit dev e2e, Knative's conformance suite, and the cluster journeys (and the suite there) when root on Linux
	go test -count=1 ./...
	go test -count=1 -race $(RACE_PKGS)
	$(MAKE) --no-print-directory fuzz FUZZTIME=1000x
	$(MAKE) --no-print-directory conformance
	cd hack/images && go test -count=1 ./...
	@if [ "$$(uname -s)" = Linux ] && [ "$$(id -u)" = 0 ]; then \
		$(MAKE) --no-print-directory test-cluster; \
	else \
		echo; echo "*** SKIPPED the cluster journeys (make test-cluster): building and running a single-node"; \
		echo "*** Kubernetes needs root on Linux (network and mount namespaces, cgroups). Run them as root."; echo; \
	fi

# knit dev's reliability journeys, alone: knit dev restarted under load (controllers
# only: 0 failed requests; the whole process: only its own exit), an app
# that ignores SIGTERM replaced under load (0 failed), knit dev killed with
# SIGKILL (no orphan), loopback-only listeners and isolated replicas, and
# an undelivered CloudEvent across a restart. make test runs them within
# go test ./...; this runs them and nothing else (~3 minutes).
RELIABILITY_TESTS := TestRestartingTheControllersFailsNoRequest|TestRestartingKnitDevUnderLoad|TestReplacingAnAppThatIgnoresSIGTERMFailsNoRequest|TestKilledKnitDevLeavesNoOrphans|TestKnitDevListensOnLoopbackOnlyAndIsolatesReplicas|TestUndeliveredEventSurvivesKnitDevRestart

test-reliability: export KUBEBUILDER_ASSETS := $(BIN)
test-reliability: tools ## knit dev's restart, replacement, orphan, isolation and durable-event journeys
	go test -count=1 -run '^($(RELIABILITY_TESTS))$$' ./e2e/

# Every FuzzXxx of the module, each for FUZZTIME: go test fuzzes one
# target per run. Plain `go test` already runs their seeds (f.Add and
# testdata/fuzz/FuzzXxx) as tests; this looks for new inputs. A failing
# input is written to the package's testdata/fuzz/FuzzXxx: fix the code
# and keep it there as a regression seed.
# make test gives each target a count of inputs (1000x), not a duration:
# go1.26's fuzz coordinator can fail a target with a bare "context
# deadline exceeded" when a duration ends while a worker is mid-input on a
# busy machine (go.dev/issue/75804, fixed in go1.27), and a count has no
# deadline to race.
FUZZTIME ?= 10s

fuzz: ## each fuzz target for FUZZTIME (10s; make test runs 1000 inputs each)
	@hack/fuzz.sh $(FUZZTIME)

test-unit: ## pure-logic tests only, no control plane (nothing from ./bin, even with KUBEBUILDER_ASSETS set)
	KUBEBUILDER_ASSETS= go test -tags unit ./...

run: tools build ## knit, locally, embedded
	$(BIN)/knit dev

# Side by side in one run: the app direct, a bare httputil.ReverseProxy
# (default and pooled transport), knit's queue-proxy, ingress →
# queue-proxy, ingress → activator → queue-proxy, then as processes of
# their own knit-queue, Knative's queue-proxy (make knative-queue) and the
# pooled bare proxy, with their memory; then knit's ingress beside nginx
# (Debian's, from bench-packages) at the edge; then cold starts in knit dev.
# Writes docs/benchmarks.md (~7 minutes, the edge ~2.5 of them; -only edge
# in BENCH_FLAGS runs and rewrites its section alone). As root on Linux it adds the
# test cluster (make cluster): knit installed by its chart, a cold start
# on real pods next to a plain pod of the same image, and knit's idle
# footprint (~3 more minutes); without it the last cluster section is kept.
bench: tools knative-queue bench-packages ## request-path and cold-start benchmarks → docs/benchmarks.md
	@mkdir -p docs
	@if [ "$$(uname -s)" = Linux ] && [ "$$(id -u)" = 0 ] && [ -z "$(BENCH_NO_CLUSTER)" ]; then \
		$(MAKE) --no-print-directory cluster cluster-images helm && \
		status=0; go run ./hack/bench -bin-dir $(BIN) -out docs/benchmarks.md -cluster-kubeconfig $(CLUSTER_STATE)/kubeconfig $(BENCH_FLAGS) || status=$$?; \
		[ -n "$(KEEP_CLUSTER)" ] || hack/cluster/down.sh $(CLUSTER_STATE) >/dev/null 2>&1 || true; exit $$status; \
	else \
		echo "bench: not root on Linux (or BENCH_NO_CLUSTER set): the cluster part is skipped"; \
		go run ./hack/bench -bin-dir $(BIN) -out docs/benchmarks.md $(BENCH_FLAGS); \
	fi

# A thousand Services in one knit dev (the scale a team's laptop must hold): apply at
# initial scale 0 → all Ready, knit dev's CPU and memory idle at zero, 200
# more at initial scale 1 (a replica each) → Ready and back to zero, a
# restart → full resync, and a push of a repository of 100 Services.
# Writes its own section of docs/benchmarks.md (~10 minutes).
bench-scale: tools ## a thousand Services in knit dev → docs/benchmarks.md's scale section
	@mkdir -p docs
	go run ./hack/bench -scale -bin-dir $(BIN) -out docs/benchmarks.md $(BENCH_SCALE_FLAGS)

# ---- Knative's queue-proxy, make bench's second reference ----
# knative.dev/serving/cmd/queue at the release hack/knative/go.mod pins,
# built in that module (never in knit's) from the Go module proxy into
# $(TOOLS_CACHE) and linked to ./bin/knative-queue like the tools above,
# with one file replaced so it listens on loopback only (hack/knative/build.sh).
# The script's hash is in the command, so tools.sh's key changes with it.
.PHONY: knative-queue clean-knative-queue

knative-queue: ## Knative Serving's queue-proxy (pinned in hack/knative/go.mod) into ./bin, for make bench
	@$(TOOL) knative-queue hack/knative knative-queue -- env KNATIVE_BUILD_SH=$(shell sha256sum hack/knative/build.sh | cut -c1-16) ./build.sh

clean-tools: clean-knative-queue

clean-knative-queue:
	rm -f $(BIN)/knative-queue

# ---- Helm chart (charts/knit) ----
# Helm v3, pinned by hack/helm/go.mod (a `tool` line), built from the Go
# module proxy into $(TOOLS_CACHE) and linked to ./bin/helm like the
# control-plane binaries. The ldflags stamp what Helm's own release build
# stamps: its version, and the Kubernetes minor its client libraries speak
# (the default .Capabilities.KubeVersion of `helm template` and `helm lint`).
# The chart's tests (charts/knit/charttest, part of `go test ./...`) run it
# from ./bin/helm against envtest's kube-apiserver.
CLUSTER_STATE ?= $(CURDIR)/.cluster
HELM          := $(BIN)/helm
HELM_FLAGS    ?=

.PHONY: helm clean-helm chart-test cluster-install cluster-uninstall

helm: ## Helm v3 (pinned in hack/helm/go.mod) into ./bin
	@$(TOOL) helm hack/helm helm -- sh -c 'v=$$(go list -m -f "{{.Version}}" helm.sh/helm/v3); \
		k=$$(go list -m -f "{{.Version}}" k8s.io/client-go | cut -d. -f2); \
		go build -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$$v \
			-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$$k \
			-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$$k" \
			-o "$$OUT/helm" helm.sh/helm/v3/cmd/helm'

test: helm
clean-tools: clean-helm

clean-helm:
	rm -f $(HELM)

chart-test: tools helm ## lint the chart, render it, and dry-run it against a real kube-apiserver (envtest)
	go test -count=1 ./charts/knit/...

cluster-install: helm ## install or upgrade knit on the cluster at $(CLUSTER_STATE)/kubeconfig (extra flags: HELM_FLAGS)
	KUBECONFIG=$(CLUSTER_STATE)/kubeconfig $(HELM) upgrade --install knit charts/knit -n knit-system --create-namespace \
		--wait --timeout 5m --set image.repository=knit.local --set image.tag=dev $(HELM_FLAGS)

cluster-uninstall: helm ## remove knit from that cluster (CRDs, their objects and the webhook Secret stay)
	KUBECONFIG=$(CLUSTER_STATE)/kubeconfig $(HELM) uninstall knit -n knit-system --wait

# ---- images ----
# knit's images, packed by hack/images (go-containerregistry) from static
# binaries: no Docker, no base image. With IMAGE_REPO=knit.local (the
# default) they are docker save tarballs in bin/images/<name>.tar, for
# `ctr images import` (make cluster-images); any other IMAGE_REPO is a
# registry they are pushed to (credentials from ~/.docker/config.json),
# printing <ref>@<digest>. PUSH=0 writes tarballs under such a name instead.
IMAGE_REPO   ?= knit.local
IMAGE_TAG    ?= dev
PUSH         ?= $(if $(filter knit.local,$(IMAGE_REPO)),0,1)
IMAGE_FLAGS  ?=
IMAGES_DIR   := $(BIN)/images
IMAGES_BUILD := $(IMAGES_DIR)/build
IMGBUILD     := $(BIN)/imgbuild
STATIC_BUILD := CGO_ENABLED=0 go build -trimpath -ldflags "-s -w"
# Debian's git for the git server image: git, the exec path's git (what
# http-backend runs receive-pack and upload-pack with), http-backend, and
# the templates `git init` copies; imgbuild adds their shared libraries.
GIT_FILES    := /usr/bin/git /usr/lib/git-core/git /usr/lib/git-core/git-http-backend /usr/share/git-core/templates
# $(call pack,NAME,REF,IMGBUILD ARGS): bin/images/NAME.tar, or a push.
pack = $(IMGBUILD) -ref $(2) $(if $(filter 1,$(PUSH)),-push,-out $(IMAGES_DIR)/$(1).tar) $(IMAGE_FLAGS) $(3)

.PHONY: image-tool images example-images

image-tool: ## bin/imgbuild (packs images), bin/pause (the test cluster's sandbox program) and bin/knit-builder, from hack/images
	@$(TOOL) images hack/images "imgbuild pause knit-builder" -- \
		sh -c 'CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$$OUT/" ./cmd/imgbuild ./cmd/pause ./cmd/knit-builder'

images: image-tool toolchain-image buildkit-image ## knit, knit-queue, knit-gitserver, knit-toolchain and knit-buildkit images: tarballs in bin/images, or pushed (IMAGE_REPO, IMAGE_TAG, PUSH)
	@if [ "$(PUSH)" = 1 ] && [ "$(IMAGE_REPO)" = knit.local ]; then echo "knit.local is not a registry: set IMAGE_REPO to push"; exit 1; fi
	@mkdir -p $(IMAGES_BUILD)
	$(STATIC_BUILD) -o $(IMAGES_BUILD)/ ./cmd/knit ./cmd/knit-queue
	@$(call pack,knit,$(IMAGE_REPO)/knit:$(IMAGE_TAG),-file $(IMAGES_BUILD)/knit:/knit -entrypoint /knit)
	@$(call pack,knit-queue,$(IMAGE_REPO)/knit-queue:$(IMAGE_TAG),-file $(IMAGES_BUILD)/knit-queue:/knit-queue -entrypoint /knit-queue)
	@$(call pack,knit-gitserver,$(IMAGE_REPO)/knit-gitserver:$(IMAGE_TAG),-file $(IMAGES_BUILD)/knit:/knit \
		$(addprefix -file ,$(GIT_FILES)) -env PATH=/usr/bin:/usr/lib/git-core -entrypoint /knit)

# The toolchain image build Jobs run (values build.*): this machine's Go,
# without its tests, test data and docs, and knit-builder, with git (and
# git-remote-http's libraries) for fetching the commit. Packed again only
# when Go, knit-builder or the name changed: it is ~200 MB.
GO_ROOT      := $(shell go env GOROOT)
GO_VERSION   := $(shell go env GOVERSION)
TOOLCHAIN_FILES := /usr/bin/git /usr/lib/git-core/git /usr/lib/git-core/git-remote-http /usr/share/git-core/templates
.PHONY: toolchain-image
toolchain-image: image-tool ## knit-toolchain: Go and knit-builder, what in-cluster builds of ko:// images run
	@stamp="$(GO_VERSION) $$(sha256sum $(BIN)/knit-builder | cut -c1-16) $(IMAGE_REPO) $(IMAGE_TAG) $(PUSH)"; \
	if [ "$(PUSH)" = 1 ] || [ "$$(cat $(IMAGES_DIR)/knit-toolchain.stamp 2>/dev/null)" != "$$stamp" ]; then \
		echo "packing knit-toolchain ($(GO_VERSION))"; \
		rm -rf $(IMAGES_BUILD)/goroot && mkdir -p $(IMAGES_BUILD)/goroot && \
		tar -C $(GO_ROOT) --exclude=./test --exclude=./api --exclude=./doc --exclude=./misc \
			--exclude=testdata --exclude='*_test.go' -cf - . | tar -C $(IMAGES_BUILD)/goroot -xf - && \
		$(call pack,knit-toolchain,$(IMAGE_REPO)/knit-toolchain:$(IMAGE_TAG),-file $(BIN)/knit-builder:/knit-builder \
			-file $(IMAGES_BUILD)/goroot:/usr/local/go $(addprefix -file ,$(TOOLCHAIN_FILES)) \
			-env PATH=/usr/local/go/bin:/usr/bin:/usr/lib/git-core -env GOTOOLCHAIN=local -entrypoint /knit-builder) && \
		rm -rf $(IMAGES_BUILD)/goroot && echo "$$stamp" >$(IMAGES_DIR)/knit-toolchain.stamp; \
	fi

# The image cluster builds of dockerfile:// images run BuildKit in: the
# buildkit base (hack/bases: runc, rootlesskit, uidmap and the CNI plugins
# from Debian's packages, nonroot's subordinate ids) with buildkitd and
# buildctl (make tools), knit-builder and knit-build-proxy (the allow-list
# proxy of RUN steps) on top, run as nonroot.
.PHONY: buildkit-image
buildkit-image: image-tool tools base-images ## knit-buildkit: rootless BuildKit, knit-builder and the RUN steps' proxy, what in-cluster builds of dockerfile:// images run
	@mkdir -p $(IMAGES_BUILD)
	$(STATIC_BUILD) -o $(IMAGES_BUILD)/ ./cmd/knit-build-proxy
	@$(call pack,knit-buildkit,$(IMAGE_REPO)/knit-buildkit:$(IMAGE_TAG),-base $(BIN)/bases/buildkit -ca-bundle "" \
		-file $(BIN)/buildkitd:/usr/local/bin/buildkitd -file $(BIN)/buildctl:/usr/local/bin/buildctl \
		-file $(IMAGES_BUILD)/knit-build-proxy:/usr/local/bin/knit-build-proxy \
		-file $(BIN)/knit-builder:/usr/local/bin/knit-builder -env PATH=/usr/local/bin:/usr/bin:/usr/sbin:/bin \
		-entrypoint /usr/local/bin/knit-builder)

example-images: image-tool ## $(IMAGE_REPO)/examples/helloworld:latest (bin/images/helloworld.tar, or pushed)
	@mkdir -p $(IMAGES_BUILD)
	$(STATIC_BUILD) -o $(IMAGES_BUILD)/helloworld ./examples/helloworld
	@$(call pack,helloworld,$(IMAGE_REPO)/examples/helloworld:latest,-file $(IMAGES_BUILD)/helloworld:/helloworld -entrypoint /helloworld -port 8080)

# ---- test cluster ----
# A real single-node Kubernetes on this machine (hack/cluster/up.sh, root):
# the control plane and node binaries from `tools`, containerd 2.x and
# CoreDNS built here, Debian's runc and CNI plugins, all in its own network
# and mount namespace and cgroup. State in $(CLUSTER_STATE);
# `make cluster-down` removes everything it added to the machine.
CLUSTER_STATE      ?= $(CURDIR)/.cluster
CLUSTER_DOWN_FLAGS ?=
CLUSTER_IMAGES     := knit knit-queue knit-gitserver knit-toolchain knit-buildkit helloworld

.PHONY: cluster-tools cluster cluster-down cluster-images

cluster-tools: tools image-tool ## containerd, containerd-shim-runc-v2, ctr and CoreDNS into ./bin (besides `tools`)
	@$(TOOL) containerd hack/containerd "containerd containerd-shim-runc-v2 ctr" -- \
		sh -c 'v=$$(go list -m -f "{{.Version}}" github.com/containerd/containerd/v2); \
			CGO_ENABLED=0 go build -trimpath -tags "no_btrfs no_devmapper no_zfs" \
			-ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=$$v" -o "$$OUT/" \
			github.com/containerd/containerd/v2/cmd/containerd \
			github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
			github.com/containerd/containerd/v2/cmd/ctr'
	@$(TOOL) coredns hack/coredns coredns -- sh -c 'CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$$OUT/coredns" .'

cluster: cluster-tools ## start the test cluster (idempotent: starts only what is not running) and print its KUBECONFIG
	KNIT_K8S_BIN=$(BIN) hack/cluster/up.sh $(CLUSTER_STATE)

cluster-down: ## stop the test cluster and remove it from the machine (CLUSTER_DOWN_FLAGS=--keep keeps its state, --purge deletes it all)
	hack/cluster/down.sh $(CLUSTER_STATE) $(CLUSTER_DOWN_FLAGS)

cluster-images: PUSH := 0
cluster-images: images example-images ## build the images and import them into the test cluster's containerd
	KNIT_K8S_BIN=$(BIN) hack/cluster/import.sh $(CLUSTER_STATE) $(addprefix $(IMAGES_DIR)/,$(addsuffix .tar,$(CLUSTER_IMAGES)))

# ---- cluster journeys ----
# e2e/cluster (build tag cluster) on the test cluster: helm install with the
# images just built, the user journeys, helm uninstall. The cluster is
# started if needed and, unless KEEP_CLUSTER=1, taken down afterwards (its
# binaries stay cached; its state and logs too when a journey failed), so
# nothing of it outlives the run.
KEEP_CLUSTER ?=

.PHONY: test-cluster
test-cluster: cluster cluster-images helm conformance-images ## the cluster journeys and Knative's conformance suite on a real single-node Kubernetes (root, Linux)
	@status=0; go test -count=1 -tags cluster -timeout 30m -v ./e2e/cluster/ 2>&1 | tee $(CLUSTER_STATE)/journey.log || status=$$?; \
	$(MAKE) --no-print-directory conformance-on-cluster || status=$$?; \
	keep=; [ $$status = 0 ] || keep=--keep; \
	if [ -z "$(KEEP_CLUSTER)" ]; then hack/cluster/down.sh $(CLUSTER_STATE) $$keep >/dev/null 2>&1 || true; fi; \
	exit $$status

# ---- Knative Serving's conformance suite ----
# hack/conformance (its own module: Knative's code never enters knit's
# go.mod) runs the api/v1 and runtime packages of the Knative Serving
# release its go.mod pins, then the e2e feature packages Knative's CI runs
# with config-features flags switched on (initcontainers,
# multicontainerprobing, pvc, securedefaults, tagheader: each with its
# flags on in knit-system/config-features for its run, the ConfigMap's
# data put back after) and the tests of test/e2e itself that
# hack/conformance/features.go names, test code unmodified, and rewrites
# its mode's column of docs/conformance.md (two tables: conformance,
# feature packages). It fails on any failure that is not one of the
# mode's documented exceptions (hack/conformance/exceptions.go).
# CONFORMANCE_FLAGS="-suites features" runs the feature packages only
# ("-suites conformance", or package names such as e2e/pvc, likewise).
# knit dev pulls the suite's test images from a registry on loopback that
# the harness fills from conformance-binaries; the cluster pulls them from
# its registry (conformance-images pushes them). On the cluster, e2e/pvc's
# claim gets a hostPath PersistentVolume in CONFORMANCE_PV_DIR, under the
# cluster's state (the node shares this machine's filesystem).
CONFORMANCE       := cd hack/conformance && go run .
CONFORMANCE_FLAGS ?=
KNATIVE_RELEASE   := $(shell cd hack/conformance && go list -m -f '{{.Version}}' knative.dev/serving)
CLUSTER_REGISTRY  ?= 10.250.0.2:5000
CLUSTER_NODE_IP   ?= 10.250.0.2
CONFORMANCE_IMAGES = $(CLUSTER_REGISTRY)/conformance/{{.Name}}:$(KNATIVE_RELEASE)
CONFORMANCE_PV_DIR = $(CLUSTER_STATE)/volumes/knative-pv-claim

.PHONY: conformance conformance-cluster conformance-on-cluster conformance-images conformance-binaries
conformance: export KUBEBUILDER_ASSETS := $(BIN)
conformance: tools build image-tool conformance-binaries ## Knative Serving's conformance suite and e2e feature packages against knit dev, its real test images pulled from a registry on loopback → docs/conformance.md
	$(CONFORMANCE) -mode dev -knit $(BIN)/knit -bin-dir $(BIN) -images $(IMAGES_BUILD)/conformance -imgbuild $(IMGBUILD) \
		-out $(CURDIR)/docs/conformance.md $(CONFORMANCE_FLAGS)

conformance-binaries: ## the test images' programs (every main under test/test_images: the feature packages' volumes, readiness, servingcontainer, grpc-ping too), static, from the pinned release
	@mkdir -p $(IMAGES_BUILD)/conformance
	cd hack/conformance && $(STATIC_BUILD) -o $(IMAGES_BUILD)/conformance/ \
		$$(go list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' knative.dev/serving/test/test_images/...)

conformance-images: image-tool conformance-binaries ## the suite's test images, built from the pinned release, pushed to the test cluster's registry
	@for bin in $(IMAGES_BUILD)/conformance/*; do n=$$(basename $$bin); \
		$(IMGBUILD) -push -insecure -ref $(subst {{.Name}},$$n,$(CONFORMANCE_IMAGES)) -file $$bin:/ko-app/$$n \
			-entrypoint /ko-app/$$n -env KO_DATA_PATH=/var/run/ko -port 8080 >/dev/null || exit 1; done
	@echo "pushed $$(ls $(IMAGES_BUILD)/conformance | wc -l) test images to $(CLUSTER_REGISTRY)/conformance"

conformance-cluster: cluster cluster-images helm conformance-images ## Knative Serving's conformance suite and e2e feature packages against the test cluster → docs/conformance.md
	@status=0; $(MAKE) --no-print-directory conformance-on-cluster || status=$$?; \
	if [ -z "$(KEEP_CLUSTER)" ]; then hack/cluster/down.sh $(CLUSTER_STATE) >/dev/null 2>&1 || true; fi; exit $$status

# The suite on a running test cluster with its images pushed: knit
# installed afresh with the chart (an install left from before would keep
# running the images it started with: their tag does not change), the
# run, knit uninstalled.
conformance-on-cluster: helm
	@KUBECONFIG=$(CLUSTER_STATE)/kubeconfig $(HELM) uninstall knit -n knit-system --wait --ignore-not-found >/dev/null
	@$(MAKE) --no-print-directory cluster-install HELM_FLAGS="-f hack/conformance/values.yaml"
	@status=0; ($(CONFORMANCE) -mode cluster -kubeconfig $(CLUSTER_STATE)/kubeconfig -ingress $(CLUSTER_NODE_IP) \
		-image-template '$(CONFORMANCE_IMAGES)' -pv-dir $(CONFORMANCE_PV_DIR) -out $(CURDIR)/docs/conformance.md $(CONFORMANCE_FLAGS)) || status=$$?; \
	$(MAKE) --no-print-directory cluster-uninstall >/dev/null || true; exit $$status

# ---- Gitea, the real forge of the pull-request journeys ----
# Gitea (its version is GITEA_VERSION in hack/gitea/build.sh) built from the
# Go module proxy and linked to ./bin/gitea like the control-plane binaries:
# once per machine into $(TOOLS_CACHE) (cold ~4 min on 2 idle cores, ~1.4 GB
# of modules), a no-op afterwards. internal/gitea starts it for the tests.
# The script's hash is in the command, so tools.sh's key changes with it.
.PHONY: gitea clean-gitea

gitea: ## Gitea, the forge the e2e tests drive, into ./bin
	@$(TOOL) gitea hack/gitea gitea -- env GITEA_BUILD_SH=$(shell sha256sum hack/gitea/build.sh | cut -c1-16) ./build.sh

test: gitea
clean-tools: clean-gitea

clean-gitea:
	rm -f $(BIN)/gitea
