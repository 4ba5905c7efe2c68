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

# envtest (and knit dev) find kube-apiserver and etcd here.
export KUBEBUILDER_ASSETS := $(BIN)

.PHONY: all build generate verify-generated tools test test-unit run bench vet fmt-check clean-tools

all: build

build: ## knit, and knit-queue beside it (the queue-proxy alone: it starts in milliseconds)
	go build -o $(BIN)/ ./cmd/knit ./cmd/knit-queue

generate: ## deepcopy and CRDs (charts/knit/crds is the one copy everything uses)
	$(CONTROLLER_GEN) object paths=./api/...
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./api/... output:crd:dir=charts/knit/crds

verify-generated: generate ## fail when committed generated files are stale
	@if [ -n "$$(git status --porcelain -- api charts/knit/crds)" ]; then \
		echo "generated files are stale; run 'make generate' and commit:"; \
		git status --short -- api charts/knit/crds; git diff --stat -- api charts/knit/crds; exit 1; fi

# ---- control-plane binaries, built here, never downloaded ----
tools: $(BIN)/kube-apiserver-$(K8S_VERSION).stamp $(BIN)/etcd-$(ETCD_VERSION).stamp

$(BIN)/kube-apiserver-$(K8S_VERSION).stamp: hack/kube-apiserver/go.mod hack/kube-apiserver/go.sum
	@mkdir -p $(BIN)
	@echo "building kube-apiserver, kube-controller-manager and kubectl v$(K8S_VERSION) from the Go module proxy (cold: ~10 min on 2 cores)"
	cd hack/kube-apiserver && go build -ldflags "$(K8S_LDFLAGS)" -o $(BIN)/ k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl
	@rm -f $(BIN)/kube-apiserver-*.stamp && touch $@

$(BIN)/etcd-$(ETCD_VERSION).stamp: hack/etcd/go.mod hack/etcd/go.sum
	@mkdir -p $(BIN)
	@echo "building etcd v$(ETCD_VERSION) from the Go module proxy"
	cd hack/etcd && go build -o $(BIN)/etcd go.etcd.io/etcd/server/v3
	@rm -f $(BIN)/etcd-*.stamp && touch $@

clean-tools:
	rm -f $(BIN)/kube-apiserver $(BIN)/kube-controller-manager $(BIN)/kubectl $(BIN)/etcd $(BIN)/*.stamp

# ---- checks ----
vet:
	go vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

test: tools verify-generated vet fmt-check ## everything CI runs
	go test -count=1 ./...

test-unit: ## pure-logic tests only, no control plane
	go test -short ./...

run: tools build ## knit, locally, embedded
	$(BIN)/knit dev

# Side by side in one run: the app direct, a bare httputil.ReverseProxy,
# queue-proxy, ingress → queue-proxy, ingress → activator → queue-proxy,
# then cold starts in knit dev. Writes docs/benchmarks.md (~2 minutes).
bench: tools ## request-path and cold-start benchmarks → docs/benchmarks.md
	@mkdir -p docs
	go run ./hack/bench -bin-dir $(BIN) -out docs/benchmarks.md $(BENCH_FLAGS)
