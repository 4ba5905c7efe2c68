// Command aliashash prints the go.sum hash ("h1:…") a module zip would
// have under another module path. build.sh fetches two of Gitea's
// dependencies under the path the Go module proxy serves them at
// (code.gitea.io/…) instead of the one Gitea requires (gitea.dev/…), which
// the checksum database does not know; recomputing the hash under the
// required path and comparing it with Gitea's go.sum proves the bytes are
// the ones Gitea pinned.
//
// Usage: aliashash ZIP FROM_PATH@VERSION TO_PATH@VERSION
//
// It is golang.org/x/mod/sumdb/dirhash.Hash1 over the zip's files with
// their FROM prefix renamed to TO, with the standard library only.
package main

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: aliashash ZIP FROM_PATH@VERSION TO_PATH@VERSION")
		os.Exit(2)
	}
	h, err := hash(os.Args[1], os.Args[2]+"/", os.Args[3]+"/")
	if err != nil {
		fmt.Fprintln(os.Stderr, "aliashash:", err)
		os.Exit(1)
	}
	fmt.Println(h)
}

func hash(zipPath, from, to string) (string, error) {
	z, err := zip.OpenReader(zipPath)
	if err != nil {
		return "", fmt.Errorf("open module zip: %w", err)
	}
	defer z.Close()
	files := append([]*zip.File(nil), z.File...)
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	var lines strings.Builder
	for _, f := range files {
		name, ok := strings.CutPrefix(f.Name, from)
		if !ok {
			return "", fmt.Errorf("%s: file %q is outside %s", zipPath, f.Name, from)
		}
		r, err := f.Open()
		if err != nil {
			return "", fmt.Errorf("%s: %w", f.Name, err)
		}
		sum := sha256.New()
		_, err = io.Copy(sum, r)
		r.Close()
		if err != nil {
			return "", fmt.Errorf("%s: %w", f.Name, err)
		}
		fmt.Fprintf(&lines, "%x  %s\n", sum.Sum(nil), to+name)
	}
	all := sha256.Sum256([]byte(lines.String()))
	return "h1:" + base64.StdEncoding.EncodeToString(all[:]), nil
}
