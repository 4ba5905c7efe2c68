package render

import "errors"

// ErrInvalid is matched (errors.Is) by every error that the commit itself
// causes. Such an error is the author's to fix: report it, do not retry.
var ErrInvalid = errors.New("invalid manifests")

// InvalidError says which file of the commit is at fault and why. It
// matches ErrInvalid.
type InvalidError struct {
	// File is the path of the file at fault, relative to the repository
	// root; empty when no single file is (a failing kustomize build).
	File string
	// Err says what is wrong.
	Err error
}

func (e *InvalidError) Error() string {
	if e.File == "" {
		return e.Err.Error()
	}
	return e.File + ": " + e.Err.Error()
}

// Unwrap lets errors.Is find both ErrInvalid and the cause.
func (e *InvalidError) Unwrap() []error { return []error{ErrInvalid, e.Err} }

func invalid(file string, err error) error { return &InvalidError{File: file, Err: err} }
