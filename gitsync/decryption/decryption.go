package decryption

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

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
)

// AgeKeySuffix ends the names of a decryption Secret's keys that hold
// age identities, one or more AGE-SECRET-KEY-1… lines each, as Flux names
// them.
const AgeKeySuffix = ".agekey"

// ErrEncryptedFor marks a file that none of the given identities can
// decrypt: the commit's problem (or the Secret's), not one to retry.
var ErrEncryptedFor = errors.New("not encrypted for these identities")

// notForUs is a file none of the identities can decrypt; it matches
// ErrEncryptedFor without saying so in its message.
type notForUs struct{ msg string }

func (e *notForUs) Error() string        { return e.msg }
func (e *notForUs) Is(target error) bool { return target == ErrEncryptedFor }

// Decryptor decrypts SOPS files with one repository's age identities. It
// holds no state beyond them and is safe for concurrent use.
type Decryptor struct {
	identities sopsage.ParsedIdentities
	recipients []string // of identities, for errors
	source     string   // where the identities come from, as errors name it
}

// FromSecret reads the age identities of a decryption Secret's data (keys
// ending in AgeKeySuffix). source names the Secret in errors. An error
// never quotes the Secret's content.
func FromSecret(source string, data map[string][]byte) (*Decryptor, error) {
	d := &Decryptor{source: source}
	names := make([]string, 0, len(data))
	for k := range data {
		if strings.HasSuffix(k, AgeKeySuffix) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		ids, err := age.ParseIdentities(bytes.NewReader(data[k]))
		if err != nil {
			// age's parse errors may quote part of the line: say only
			// where.
			return nil, fmt.Errorf("key %s of %s holds no valid age identity (one AGE-SECRET-KEY-1… per line, # comments allowed)", k, source)
		}
		for _, id := range ids {
			d.identities = append(d.identities, id)
			if x, ok := id.(*age.X25519Identity); ok {
				d.recipients = append(d.recipients, x.Recipient().String())
			}
		}
	}
	if len(d.identities) == 0 {
		return nil, fmt.Errorf("%s has no key ending in %s: store the age identity there (kubectl create secret generic <name> --from-file=age.agekey=<key file>)", source, AgeKeySuffix)
	}
	return d, nil
}

// Encrypted reports whether data, a file named name, is SOPS-encrypted:
// it carries SOPS's metadata in the place the format puts it. It does not
// parse the file; Decrypt does.
func Encrypted(name string, data []byte) bool {
	switch formatOf(name) {
	case formatDotenv:
		return hasLinePrefix(data, "sops_lastmodified=")
	case formatJSON:
		return bytes.Contains(data, []byte(`"sops"`)) && bytes.Contains(data, []byte(`"lastmodified"`))
	default:
		return hasLinePrefix(data, "sops:") && bytes.Contains(data, []byte("lastmodified:"))
	}
}

func hasLinePrefix(data []byte, prefix string) bool {
	p := []byte(prefix)
	return bytes.HasPrefix(data, p) || bytes.Contains(data, append([]byte("\n"), p...))
}

// Decrypt decrypts the SOPS file name (a path, as errors name it; its
// extension chooses the format: .json, .env, else YAML) and returns it in
// plain text, in the same format. The MAC is checked: a file changed
// after encryption is refused.
func (d *Decryptor) Decrypt(name string, data []byte) ([]byte, error) {
	store := storeFor(formatOf(name))
	tree, err := store.LoadEncryptedFile(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not a SOPS file sops can read: %w", name, err)
	}
	fileRecipients, others := recipientsOf(tree.Metadata)
	if len(fileRecipients) == 0 {
		return nil, &notForUs{fmt.Sprintf("%s is encrypted for %s, not for an age recipient: knit decrypts age only",
			name, strings.Join(others, ", "))}
	}
	if !d.anyRecipient(fileRecipients) {
		return nil, &notForUs{fmt.Sprintf("%s is encrypted for %s; %s holds identities for %s",
			name, strings.Join(fileRecipients, ", "), d.source, strings.Join(d.recipients, ", "))}
	}
	_, err = common.DecryptTree(common.DecryptTreeOpts{
		Cipher:          aes.NewCipher(),
		Tree:            &tree,
		KeyServices:     []keyservice.KeyServiceClient{keyservice.NewCustomLocalClient(ageOnly{d.identities})},
		DecryptionOrder: []string{sopsage.KeyTypeIdentifier},
	})
	if err != nil {
		return nil, fmt.Errorf("decrypt %s with %s: %w", name, d.source, err)
	}
	out, err := store.EmitPlainFile(tree.Branches)
	if err != nil {
		return nil, fmt.Errorf("write %s in plain text: %w", name, err)
	}
	return out, nil
}

// anyRecipient reports whether one of d's identities is among rs. An
// identity that is not X25519 (a plugin's) cannot say its recipient, so it
// is given its chance.
func (d *Decryptor) anyRecipient(rs []string) bool {
	if len(d.recipients) < len(d.identities) {
		return true
	}
	for _, r := range rs {
		if slices.Contains(d.recipients, r) {
			return true
		}
	}
	return false
}

// recipientsOf lists a file's age recipients, and its other master keys
// by type.
func recipientsOf(m sops.Metadata) (ages, others []string) {
	for _, g := range m.KeyGroups {
		for _, k := range g {
			if a, ok := k.(*sopsage.MasterKey); ok {
				ages = append(ages, a.Recipient)
				continue
			}
			if t := k.TypeToIdentifier(); !slices.Contains(others, t) {
				others = append(others, t)
			}
		}
	}
	return ages, others
}

type format int

const (
	formatYAML format = iota
	formatJSON
	formatDotenv
)

func formatOf(name string) format {
	switch path.Ext(name) {
	case ".json":
		return formatJSON
	case ".env":
		return formatDotenv
	}
	return formatYAML
}

// store is what Decrypt needs of a sops store.
type store interface {
	sops.EncryptedFileLoader
	EmitPlainFile(sops.TreeBranches) ([]byte, error)
}

func storeFor(f format) store {
	switch f {
	case formatJSON:
		return sopsjson.NewStore(&config.JSONStoreConfig{})
	case formatDotenv:
		return dotenv.NewStore(&config.DotenvStoreConfig{})
	}
	return sopsyaml.NewStore(&config.YAMLStoreConfig{})
}

// ageOnly is the key service Decrypt hands sops: it unwraps a data key
// with the identities it holds and nothing else. sops's own local server
// would fall back to the process's environment and files for age, and to
// ambient cloud credentials for KMS keys.
type ageOnly struct {
	identities sopsage.ParsedIdentities
}

func (s ageOnly) Decrypt(_ context.Context, req *keyservice.DecryptRequest) (*keyservice.DecryptResponse, error) {
	k := req.GetKey().GetAgeKey()
	if k == nil {
		return nil, errors.New("knit decrypts with age identities only")
	}
	if len(s.identities) == 0 {
		// MasterKey.Decrypt would load identities from the environment.
		return nil, errors.New("no age identity")
	}
	mk := sopsage.MasterKey{Recipient: k.GetRecipient(), EncryptedKey: string(req.GetCiphertext())}
	s.identities.ApplyToMasterKey(&mk)
	plain, err := mk.Decrypt()
	if err != nil {
		return nil, err
	}
	return &keyservice.DecryptResponse{Plaintext: plain}, nil
}

func (ageOnly) Encrypt(context.Context, *keyservice.EncryptRequest) (*keyservice.EncryptResponse, error) {
	return nil, errors.New("knit does not encrypt")
}

var _ keyservice.KeyServiceServer = ageOnly{}
