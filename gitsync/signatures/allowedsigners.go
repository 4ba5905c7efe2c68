package signatures

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"
)

// maxAllowedSigners bounds the lines of an allowed signers file.
const maxAllowedSigners = 1000

// allowedSigner is one line of an allowed signers file.
type allowedSigner struct {
	principals []string
	key        ssh.PublicKey
	namespaces []string // empty: any
}

func (s allowedSigner) allows(namespace string) bool {
	return len(s.namespaces) == 0 || slices.Contains(s.namespaces, namespace)
}

// ParseAllowedSigners reads an allowed signers file as ssh-keygen(1)
// describes it: per line, principals, options, key type and key, and a
// comment; blank lines and # comments skipped. Of the options it honours
// namespaces; cert-authority, valid-after and valid-before are refused by
// name rather than ignored, since ignoring them would trust more than the
// file says.
func ParseAllowedSigners(data []byte) ([]allowedSigner, error) {
	var out []allowedSigner
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if len(out) == maxAllowedSigners {
			return nil, fmt.Errorf("more than %d allowed signers", maxAllowedSigners)
		}
		s, err := parseSigner(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("allowed signers: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no allowed signer")
	}
	return out, nil
}

func parseSigner(line string) (allowedSigner, error) {
	principals, rest, ok := strings.Cut(line, " ")
	if !ok {
		return allowedSigner{}, fmt.Errorf("want principals, then a key")
	}
	// The rest is an authorized_keys line: options, key type, key,
	// comment.
	key, _, options, _, err := ssh.ParseAuthorizedKey([]byte(strings.TrimSpace(rest)))
	if err != nil {
		return allowedSigner{}, fmt.Errorf("no SSH public key after the principals: %v", err)
	}
	s := allowedSigner{principals: strings.Split(principals, ","), key: key}
	for _, o := range options {
		name, value, _ := strings.Cut(o, "=")
		switch strings.ToLower(name) {
		case "namespaces":
			s.namespaces = strings.Split(strings.Trim(value, `"`), ",")
		case "cert-authority", "valid-after", "valid-before":
			return allowedSigner{}, fmt.Errorf("option %s is not supported: list the signers' own keys, without it", name)
		default:
			return allowedSigner{}, fmt.Errorf("unknown option %q", name)
		}
	}
	return s, nil
}
