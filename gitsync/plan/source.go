package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
)

// notSource are the files that never change what an app runs: docs and
// manifests (their effect is in the rendered template already).
var notSource = map[string]bool{".md": true, ".yaml": true, ".yml": true, ".txt": true}

// SourceFingerprint hashes the entries (path and blob hash, as a Git tree
// lists them) that make up an app's source: everything but docs,
// manifests and dotfiles. Two commits with equal fingerprints build the
// same binaries, so a commit that only edits a README or a comment in a
// YAML file does not restart the app.
func SourceFingerprint(entries func(yield func(name, blob string) bool)) string {
	h := sha256.New()
	for name, blob := range entries {
		base := path.Base(name)
		if strings.HasPrefix(base, ".") || notSource[strings.ToLower(path.Ext(base))] {
			continue
		}
		h.Write([]byte(name + "\x00" + blob + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}
