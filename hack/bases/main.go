// Command bases builds the base images knit's dockerfile:// tests and
// examples build FROM, python and node, and the base of the image
// cluster builds of dockerfile:// images run (buildkit), as OCI image
// layouts.
//
// Why: nothing may come from a container registry outside this machine,
// so the bases cannot be pulled; they are made here from Debian's own
// packages, the one source besides the Go module proxy and npm a build
// may download from. Each base is the dependency closure (Depends and
// Pre-Depends, no Recommends) of its root packages as apt would install
// it into an empty system, taken only from this Debian release's own
// archives (a pinned preferences file hides every other origin, such as
// a third-party nodejs), plus the few files every image needs: dash as
// /bin/sh, coreutils, /etc/passwd and /etc/group with root and nonroot
// (65532), /tmp, and ca-certificates' bundle (without its dependencies).
//
// The .debs are downloaded with apt-get download into -cache and reused
// (checked against the archive's SHA-256), unpacked with dpkg-deb
// --fsys-tarfile into an in-memory tree (maintainer scripts do not run:
// configure.go does the few things theirs would that an image needs),
// and packed as one deterministic layer (sorted entries, fixed times,
// owners from the packages) with go-containerregistry. The same package
// versions give the same image digest.
//
// `make base-images` (make.sh) runs it once per content into
// $TOOLS_CACHE/bases-<key>, outside the clone, and links bin/bases there;
// internal/baseimages finds and pushes the layouts for the tests.
//
//	go run ./hack/bases -cache DIR -out DIR [-check] python node
//	go run ./hack/bases -versions python node
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// base is one image: its root packages and how to run it.
type base struct {
	roots []string
	cmd   []string
	// check runs in a chroot of the image (-check, as root) and must
	// succeed.
	check string
}

// common are the root packages of every base: a shell for RUN steps and
// shell-form CMD, coreutils for RUN mkdir/cp/ls, base-files' layout and
// os-release, netbase's /etc/services and /etc/protocols.
var common = []string{"base-files", "dash", "coreutils", "netbase"}

// certsPackage is unpacked for its certificates alone (its dependencies,
// openssl, debconf and perl-base, are not): configure builds the bundle
// its postinst would.
const certsPackage = "ca-certificates"

var bases = map[string]base{
	"python": {
		roots: []string{"python3"},
		cmd:   []string{"python3"},
		check: `python3 -c 'import http.server, json, socketserver, ssl, sqlite3; assert ssl.create_default_context().cert_store_stats()["x509_ca"] > 50; print("python ok")'`,
	},
	"node": {
		roots: []string{"nodejs"},
		cmd:   []string{"node"},
		check: `node -e 'require("http"); require("https"); console.log("node ok", process.version)'`,
	},
	// buildkit is what a cluster's dockerfile:// build runs BuildKit on
	// without root (make images adds buildkitd, buildctl and
	// knit-builder): runc for the steps, rootlesskit for the user
	// namespace buildkitd runs in, uidmap's newuidmap/newgidmap
	// (configure gives them file capabilities in place of the setuid bit)
	// to map nonroot's subordinate ids (configure writes /etc/subuid)
	// into it, and the CNI plugins that give each step a network
	// namespace of its own.
	"buildkit": {
		roots: []string{"runc", "rootlesskit", "uidmap", "containernetworking-plugins"},
		check: `runc --version && rootlesskit --version && test -x /usr/bin/newuidmap -a -x /usr/bin/newgidmap && ` +
			`test -x /usr/lib/cni/loopback && test "$(cat /etc/subuid /etc/subgid)" = "$(printf 'nonroot:100000:65536\nnonroot:100000:65536')" && echo "buildkit ok"`,
	},
}

// shellCheck runs in every base: the shell and coreutils a RUN step uses,
// and the nonroot user.
const shellCheck = `set -e; mkdir -p /x && cp /etc/passwd /x/ && ls /x >/dev/null && rm -r /x && test "$(id -un 65532)" = nonroot && test -d /tmp -a -k /tmp && echo "shell ok"`

func main() {
	log.SetFlags(0)
	log.SetPrefix("bases: ")
	cache := flag.String("cache", "", "directory the .debs are downloaded to and reused from")
	out := flag.String("out", "", "directory to write OUT/<base> (an OCI image layout) into")
	versions := flag.Bool("versions", false, "print the packages (name=version) of each base, and exit")
	check := flag.Bool("check", false, "as root: run each base's interpreter and shell in a chroot of it")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: bases -cache DIR -out DIR [-check] BASE...\n       bases -versions BASE...\nbases: %s\n", strings.Join(baseNames(), ", "))
		flag.PrintDefaults()
	}
	flag.Parse()
	names := flag.Args()
	if len(names) == 0 || !*versions && (*cache == "" || *out == "") {
		flag.Usage()
		os.Exit(2)
	}
	for _, n := range names {
		if _, ok := bases[n]; !ok {
			log.Fatalf("unknown base %q (known: %s)", n, strings.Join(baseNames(), ", "))
		}
	}
	if err := run(names, *cache, *out, *versions, *check); err != nil {
		log.Fatal(err)
	}
}

func baseNames() []string {
	var names []string
	for n := range bases {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func run(names []string, cache, out string, versionsOnly, check bool) error {
	if cache != "" {
		if err := os.MkdirAll(cache, 0o755); err != nil {
			return err
		}
	}
	a, err := newApt(cache)
	if err != nil {
		return err
	}
	defer a.close()

	// ca-certificates' candidate first: it also builds apt's cache for
	// the closures that follow in parallel.
	certs, err := a.uris([]string{certsPackage})
	if err != nil {
		return err
	}
	closures := make([][]pkg, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			closures[i], errs[i] = a.closure(append(append([]string{}, bases[n].roots...), common...))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("%s: %w", names[i], err)
		}
	}
	if versionsOnly {
		for i, n := range names {
			fmt.Println(n, strings.Join(specs(append(closures[i], certs[0].Pkg)), " "))
		}
		return nil
	}

	// One download of everything missing, for all the bases.
	var all []string
	seen := map[string]bool{}
	for _, c := range closures {
		for _, s := range specs(c) {
			if !seen[s] {
				seen[s] = true
				all = append(all, s)
			}
		}
	}
	files, err := a.uris(all)
	if err != nil {
		return err
	}
	byName := map[string]debFile{certsPackage: certs[0]}
	for _, f := range files {
		byName[f.Pkg.Name] = f
	}
	if err := a.download(cache, append(files, certs[0])); err != nil {
		return err
	}

	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	check = check && canChroot()
	for i, n := range names {
		debs := make([]debFile, 0, len(closures[i]))
		for _, p := range closures[i] {
			f, ok := byName[p.Name]
			if !ok {
				return fmt.Errorf("%s: no .deb for %s", n, p)
			}
			debs = append(debs, f)
		}
		errs[i] = build(n, bases[n], debs, byName[certsPackage], cache, filepath.Join(out, n), check)
		if errs[i] != nil {
			return fmt.Errorf("%s: %w", n, errs[i])
		}
	}
	if !check {
		log.Printf("not checked in a chroot (needs -check, root on Linux)")
	}
	return nil
}

// canChroot reports whether the checks can run.
func canChroot() bool {
	return runtime.GOOS == "linux" && os.Geteuid() == 0
}

// specs are the packages as apt-get spells a version, name=version,
// sorted.
func specs(pkgs []pkg) []string {
	s := make([]string, len(pkgs))
	for i, p := range pkgs {
		s[i] = p.String()
	}
	sort.Strings(s)
	return s
}
