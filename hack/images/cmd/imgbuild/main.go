// Command imgbuild packs files into a single-layer linux image with no base
// image (package pack) and writes it as a `docker save` tarball that
// `ctr -n k8s.io images import` reads, or pushes it to a registry.
//
//	imgbuild -ref knit.local/knit:dev -file bin/knit:/knit -entrypoint /knit -out knit.tar
//	imgbuild -ref knit.local/knit-gitserver:dev -file bin/knit:/knit \
//	    -file /usr/bin/git -file /usr/lib/git-core/git -file /usr/lib/git-core/git-http-backend \
//	    -env PATH=/usr/bin:/usr/lib/git-core -entrypoint /knit -out gitserver.tar
//	imgbuild -ref registry.example/knit/knit:v1 -file bin/knit:/knit -entrypoint /knit -push
//
// A dynamically linked program given with -file brings its shared
// libraries and the loader (ldd's closure). It prints one line per
// reference: <ref>@<digest> when it pushed, <ref> id <config digest> ->
// <tarball> when it wrote one (a docker save tarball has no manifest, so
// the image ID is the digest that survives an import).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/knitops/knit/hack/images/pack"
)

// list is a repeatable string flag.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "imgbuild:", err)
		os.Exit(1)
	}
}

// run is the command: it parses args and prints its result to stdout.
func run(args []string, stdout io.Writer) error {
	fl := flag.NewFlagSet("imgbuild", flag.ContinueOnError)
	var refs, files, entrypoint, cmd, env, ports list
	fl.Var(&refs, "ref", "image reference, e.g. knit.local/knit:dev (repeatable: more tags of the same image)")
	fl.Var(&files, "file", "SRC[:DEST] file or directory to copy in (repeatable); DEST defaults to SRC if absolute, else /<base name of SRC>")
	fl.Var(&entrypoint, "entrypoint", "one element of the entrypoint (repeatable, in order)")
	fl.Var(&cmd, "cmd", "one element of the default arguments (repeatable, in order)")
	fl.Var(&env, "env", "KEY=VALUE (repeatable); PATH defaults to "+pack.DefaultPath)
	fl.Var(&ports, "port", "exposed TCP port, recorded in the config (repeatable)")
	user := fl.String("user", fmt.Sprintf("%d:%d", pack.NonRootUID, pack.NonRootUID), "user[:group] the entrypoint runs as")
	workdir := fl.String("workdir", "/", "working directory")
	baseDir := fl.String("base", "", "an OCI image layout holding one image to put the layer on (default: none)")
	caBundle := fl.String("ca-bundle", pack.CABundlePath, "the build machine's CA bundle, copied to "+pack.CABundlePath+` ("" for none)`)
	mtime := fl.Int64("mtime", epochDefault(), "creation time and every file's mtime, Unix seconds (default $SOURCE_DATE_EPOCH or 0)")
	out := fl.String("out", "", "write a docker save tarball here")
	push := fl.Bool("push", false, "push to the registry of -ref (credentials from the Docker config, authn.DefaultKeychain)")
	insecure := fl.Bool("insecure", false, "allow a plain-HTTP registry with -push")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fl.Args())
	}
	if len(refs) == 0 || len(entrypoint) == 0 || (*out != "") == *push {
		fl.Usage()
		return errors.New("need -ref, -entrypoint and exactly one of -out or -push")
	}

	var opts []name.Option
	if *insecure {
		opts = append(opts, name.Insecure)
	}
	var parsed []name.Reference
	for _, r := range refs {
		ref, err := name.ParseReference(r, opts...)
		if err != nil {
			return fmt.Errorf("reference %q: %w", r, err)
		}
		parsed = append(parsed, ref)
	}

	spec := pack.Spec{
		Entrypoint: entrypoint,
		Cmd:        cmd,
		Env:        env,
		User:       *user,
		WorkingDir: *workdir,
		Ports:      ports,
		CABundle:   *caBundle,
		Created:    time.Unix(*mtime, 0),
	}
	for _, f := range files {
		spec.Files = append(spec.Files, parseFile(f))
	}
	if *baseDir != "" {
		base, err := layoutImage(*baseDir)
		if err != nil {
			return err
		}
		spec.Base = base
	}
	img, err := pack.Image(spec)
	if err != nil {
		return fmt.Errorf("pack %s: %w", refs[0], err)
	}
	if *push {
		return pushAll(stdout, img, parsed)
	}
	return writeTarball(stdout, img, parsed, *out)
}

// pushAll pushes img under every reference (blobs go once) and prints
// <ref>@<digest> for each.
func pushAll(stdout io.Writer, img v1.Image, refs []name.Reference) error {
	digest, err := img.Digest()
	if err != nil {
		return fmt.Errorf("digest of %s: %w", refs[0], err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	for _, ref := range refs {
		if err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return fmt.Errorf("push %s: %w", ref, err)
		}
	}
	for _, ref := range refs {
		fmt.Fprintf(stdout, "%s@%s\n", ref, digest)
	}
	return nil
}

// writeTarball writes the docker save tarball out and prints, for each
// reference, the image ID: a docker save tarball carries no manifest, the
// importer writes its own (ctr: a Docker schema 2 one, with another
// digest), so the config's digest is what survives an import, the ID
// kubelet and crictl report.
func writeTarball(stdout io.Writer, img v1.Image, refs []name.Reference, out string) error {
	id, err := img.ConfigName()
	if err != nil {
		return fmt.Errorf("image ID: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	// Written beside and renamed, so a stopped build leaves no
	// half-written tarball that looks up to date.
	tmp := out + ".tmp"
	tagged := map[name.Reference]v1.Image{}
	for _, ref := range refs {
		tagged[ref] = img
	}
	if err := tarball.MultiRefWriteToFile(tmp, tagged); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", out, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	for _, ref := range refs {
		fmt.Fprintf(stdout, "%s id %s -> %s\n", ref, id, out)
	}
	return nil
}

// layoutImage is the one image of the OCI image layout at dir.
func layoutImage(dir string) (v1.Image, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("base %s: %w", dir, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("base %s: %w", dir, err)
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("base %s holds %d images, want one", dir, len(m.Manifests))
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		return nil, fmt.Errorf("base %s: %w", dir, err)
	}
	return img, nil
}

// parseFile reads SRC[:DEST].
func parseFile(v string) pack.File {
	src, dest, ok := strings.Cut(v, ":")
	if !ok {
		dest = src
		if !path.IsAbs(src) {
			dest = "/" + filepath.Base(src)
		}
	}
	return pack.File{Src: src, Dest: dest}
}

// epochDefault is $SOURCE_DATE_EPOCH (the reproducible-builds convention)
// or 0.
func epochDefault() int64 {
	n, err := strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64)
	if err != nil {
		return 0
	}
	return n
}
