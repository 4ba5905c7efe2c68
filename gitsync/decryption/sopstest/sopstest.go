// Package sopstest encrypts files as `sops --encrypt --age` does, with
// sops's own library, so that tests can commit encrypted files without
// the sops binary.
package sopstest

import (
	"fmt"
	"path"

	"filippo.io/age"
	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/cmd/sops/common"
	"github.com/getsops/sops/v3/config"
	"github.com/getsops/sops/v3/keyservice"
	"github.com/getsops/sops/v3/stores/dotenv"
	sopsjson "github.com/getsops/sops/v3/stores/json"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"
	"github.com/getsops/sops/v3/version"
)

// KubernetesRegex encrypts only a manifest's data and stringData, as
// the SOPS guides for Kubernetes (and Flux's) configure it.
const KubernetesRegex = "^(data|stringData)$"

// NewIdentity returns a fresh age identity: the key file's content and
// its recipient.
func NewIdentity() (key, recipient string, err error) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return "", "", err
	}
	return id.String() + "\n", id.Recipient().String(), nil
}

type store interface {
	sops.PlainFileLoader
	sops.Store
}

// Encrypt encrypts plain, the content of a file named name (its extension
// chooses the format as sops's does: .json, .env, else YAML), for the age
// recipients. encryptedRegex, when not empty, limits encryption to the
// keys it matches.
func Encrypt(name string, plain []byte, encryptedRegex string, recipients ...string) ([]byte, error) {
	var s store
	switch path.Ext(name) {
	case ".json":
		s = sopsjson.NewStore(&config.JSONStoreConfig{})
	case ".env":
		s = dotenv.NewStore(&config.DotenvStoreConfig{})
	default:
		s = sopsyaml.NewStore(&config.YAMLStoreConfig{})
	}
	branches, err := s.LoadPlainFile(plain)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", name, err)
	}
	var group sops.KeyGroup
	for _, r := range recipients {
		k, err := sopsage.MasterKeyFromRecipient(r)
		if err != nil {
			return nil, err
		}
		group = append(group, k)
	}
	tree := sops.Tree{
		Branches: branches,
		Metadata: sops.Metadata{KeyGroups: []sops.KeyGroup{group}, EncryptedRegex: encryptedRegex, Version: version.Version},
		FilePath: name,
	}
	if encryptedRegex == "" {
		tree.Metadata.UnencryptedSuffix = "_unencrypted"
	}
	svcs := []keyservice.KeyServiceClient{keyservice.NewLocalClient()}
	dataKey, errs := tree.GenerateDataKeyWithKeyServices(svcs)
	if len(errs) > 0 {
		return nil, fmt.Errorf("data key: %v", errs)
	}
	if err := common.EncryptTree(common.EncryptTreeOpts{Tree: &tree, Cipher: aes.NewCipher(), DataKey: dataKey}); err != nil {
		return nil, fmt.Errorf("encrypt %s: %w", name, err)
	}
	out, err := s.EmitEncryptedFile(tree)
	if err != nil {
		return nil, fmt.Errorf("emit %s: %w", name, err)
	}
	return out, nil
}
