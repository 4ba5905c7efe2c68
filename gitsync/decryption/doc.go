// Package decryption decrypts the SOPS-encrypted files of a commit with
// the age identities of one GitRepository, in memory, as Flux's
// kustomize-controller does with spec.decryption.
//
// It drives getsops/sops's own stores, cipher and MAC check
// (cmd/sops/common.DecryptTree) and does no cryptography of its own. What
// it adds is the boundary: the data key is unwrapped by a key service that
// knows only the identities it was given, never the process's environment,
// files or cloud credentials (sops's default key service reads
// SOPS_AGE_KEY, ~/.config/sops and the cloud SDKs' ambient credentials,
// which in a controller serving many tenants would let one tenant's file
// be decrypted with another's key or the controller's own cloud rights).
// Only age recipients are accepted; a file encrypted for anything else is
// refused, naming what it was encrypted for.
//
// Errors name the file and the recipients, never a decrypted value.
package decryption
