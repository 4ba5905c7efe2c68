// Package signatures checks that a commit is signed by a key its
// GitRepository trusts (spec.verify), as `git verify-commit` does with
// gpg or with ssh-keygen's allowed signers, and says who signed it when
// it refuses.
//
// The cryptography is OpenPGP's (ProtonMail/go-crypto, which go-git
// already uses) and SSH signatures' (hiddeco/sshsig, the format
// ssh-keygen -Y sign writes and git stores for gpg.format=ssh); this
// package parses the trusted keys, picks the right verifier from the
// signature's armor, and turns every outcome into a sentence.
package signatures
