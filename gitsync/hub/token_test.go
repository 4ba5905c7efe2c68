package hub

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestTokenSecret(t *testing.T) {
	ctx := context.Background()
	key := types.NamespacedName{Namespace: "knit-system", Name: DefaultTokenSecret}
	for _, tc := range []struct {
		name     string
		existing map[string][]byte // nil: no Secret
		want     string            // "" when Ensure makes a new token
		wantErr  string
	}{
		{name: "created on first start"},
		{name: "an existing token is kept", existing: map[string][]byte{TokenKey: []byte("operators-token\n")}, want: "operators-token"},
		{name: "a Secret without the key is an error", existing: map[string][]byte{"other": []byte("x")}, wantErr: `no "token" key`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := fake.NewClientBuilder()
			if tc.existing != nil {
				b = b.WithObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, Data: tc.existing})
			}
			c := b.Build()
			s := TokenSecret{Reader: c, Key: key}
			err := s.Ensure(ctx, c)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Ensure = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Token(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" && got != tc.want || tc.want == "" && len(got) != 64 {
				t.Errorf("token = %q, want %q (64 hex digits when made)", got, tc.want)
			}
			if err := s.Ensure(ctx, c); err != nil {
				t.Fatal(err)
			}
			if again, _ := s.Token(ctx); again != got {
				t.Errorf("a second Ensure changed the token from %q to %q", got, again)
			}
		})
	}
}
