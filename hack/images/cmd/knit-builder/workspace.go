package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// binName is the compiled binary's path in the workspace; the image
// names it after the program (/ko-app/<name>).
const binName = "out/app"

// maxBinary bounds what the push step reads from the workspace.
const maxBinary = 1 << 30

// copyBinary copies the compile step's binary to dst, a file of the push
// step's own. The workspace was written by the compile step, which built
// the user's code: the binary is opened inside its directory only
// (os.Root: no symlink can lead it to the registry's credentials or any
// other file of the push container), must be a regular file, and is
// copied before packing so that nothing in the workspace can change under
// the push.
func copyBinary(workspace, dst string) (string, error) {
	bin := filepath.Join(workspace, binName)
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return "", fmt.Errorf("open the compile step's output: %w", err)
	}
	defer root.Close()
	info, err := root.Lstat(binName)
	if err != nil {
		return "", fmt.Errorf("the compile step's binary: %w", err)
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("the compile step's output %s is not a regular file (%s)", bin, info.Mode().Type())
	}
	src, err := root.Open(binName)
	if err != nil {
		return "", fmt.Errorf("the compile step's binary: %w", err)
	}
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return "", fmt.Errorf("copy the binary: %w", err)
	}
	n, err := io.Copy(out, io.LimitReader(src, maxBinary+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > maxBinary {
		err = errors.New("larger than 1 GiB")
	}
	if err != nil {
		os.Remove(dst)
		return "", fmt.Errorf("copy the binary: %w", err)
	}
	return dst, nil
}
