package names

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
)

// TestChild checks the rule against names computed by hand from it
// (head + md5sum of the parent + suffix) and against the examples in
// knative.dev/pkg/kmeta's own names_test.go, so knit names what Knative
// names.
func TestChild(t *testing.T) {
	for _, tc := range []struct {
		name, parent, suffix, want string
	}{
		{name: "fits", parent: "hello-00001", suffix: "-private", want: "hello-00001-private"},
		{name: "exactly 63", parent: strings.Repeat("a", 55), suffix: "-private", want: strings.Repeat("a", 55) + "-private"},
		// The conformance suite's Service that failed with FailedCreate:
		// its Revision's private Service would be 64 characters.
		{name: "private Service of a 56-character Revision", parent: "revision-timeout-does-not-exceed-timeout--egnetwcn-00001", suffix: "-private",
			want: "revision-timeout-does-n9494d713f937bc1d4735f41081d6d844-private"},
		{name: "Revision of a 60-character Configuration", parent: "configuration-with-a-name-long-enough-to-need-a-hash-abcdefg", suffix: "-00001",
			want: "configuration-with-a-namea1e223d4efdcde925d120cfcff8aa44a-00001"},
		{name: "Deployment of a 60-character Revision", parent: strings.Repeat("a", 60), suffix: "-deployment",
			want: "aaaaaaaaaaaaaaaaaaaacc7ed669cf88f201c3297c6a91e1d18d-deployment"},
		// knative.dev/pkg/kmeta names_test.go's table.
		{name: "kmeta short", parent: "asdf", suffix: "-deployment", want: "asdf-deployment"},
		{name: "kmeta long parent", parent: strings.Repeat("f", 63), suffix: "-deployment",
			want: "ffffffffffffffffffff105d7597f637e83cc711605ac3ea4957-deployment"},
		{name: "kmeta long parent short suffix", parent: strings.Repeat("f", 63), suffix: "-deploy",
			want: "ffffffffffffffffffffffff105d7597f637e83cc711605ac3ea4957-deploy"},
		{name: "kmeta both long", parent: strings.Repeat("f", 63), suffix: strings.Repeat("f", 63),
			want: "fffffffffffffffffffffffffffffff0502661254f13c89973cb3a83e0cbec0"},
		{name: "kmeta long suffix", parent: "a", suffix: strings.Repeat("f", 63),
			want: "ab5cfd486935decbc0d305799f4ce4414ffffffffffffffffffffffffffffff"},
		{name: "kmeta 32 and 32", parent: strings.Repeat("b", 32), suffix: strings.Repeat("f", 32),
			want: "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb329c7c81b9ab3ba71aa139066aa5625d"},
		{name: "kmeta dashes trimmed", parent: "aaaa", suffix: strings.Repeat("b---a", 20),
			want: "aaaa7a3f7966594e3f0849720eced8212c18b---ab---ab---ab---ab---ab"},
		{name: "kmeta trailing dots trimmed", parent: strings.Repeat("a", 17), suffix: "a.-.-.-.-.-.-.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
			want: "aaaaaaaaaaaaaaaaaa1eb10dc911444f8434af83b7225442da"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Child(tc.parent, tc.suffix)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Child(%q, %q) (-want +got):\n%s", tc.parent, tc.suffix, diff)
			}
			if errs := validation.IsDNS1123Subdomain(got); len(errs) != 0 {
				t.Errorf("Child(%q, %q) = %q is no valid name: %v", tc.parent, tc.suffix, got, errs)
			}
		})
	}
}

// TestDerived checks each derived name is Child with Knative's suffix.
func TestDerived(t *testing.T) {
	long := "revision-timeout-does-not-exceed-timeout--egnetwcn-00001"
	for _, tc := range []struct{ name, got, want string }{
		{name: "Revision", got: Revision("hello", 3), want: "hello-00003"},
		{name: "Revision of generation 123456", got: Revision("hello", 123456), want: "hello-123456"},
		{name: "Deployment", got: Deployment("hello-00001"), want: "hello-00001-deployment"},
		{name: "PrivateService", got: PrivateService("hello-00001"), want: "hello-00001-private"},
		{name: "PrivateService shortened", got: PrivateService(long), want: "revision-timeout-does-n9494d713f937bc1d4735f41081d6d844-private"},
	} {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}
