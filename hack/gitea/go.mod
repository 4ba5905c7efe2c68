module github.com/knitops/knit/hack/gitea

// The Gitea forge the e2e tests drive (internal/gitea), built from the Go
// module proxy by build.sh; `make gitea` caches it per content of this
// directory (hack/tools.sh). Gitea's version is GITEA_VERSION in build.sh.
// The only Go code here is aliashash, which build.sh uses to check two
// aliased modules against Gitea's own go.sum.

go 1.26.0
