package forge

import (
	"context"
	"strings"
	"testing"
)

func TestOptionsValidate(t *testing.T) {
	secret := func(context.Context, string) ([]byte, error) { return nil, nil }
	onEvent := func(context.Context, Event) error { return nil }
	cases := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{"defaults", Options{Secret: secret, OnEvent: onEvent}, ""},
		{"no secret", Options{OnEvent: onEvent}, "Secret is required"},
		{"no handler", Options{Secret: secret}, "OnEvent is required"},
		{"negative body", Options{Secret: secret, OnEvent: onEvent, MaxBodyBytes: -1}, "MaxBodyBytes -1"},
		{"negative dedupe", Options{Secret: secret, OnEvent: onEvent, DedupeSize: -1}, "DedupeSize -1"},
		{"bad prefix", Options{Secret: secret, OnEvent: onEvent, PathPrefix: "/hooks"}, "must start and end with /"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			err := o.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if o.MaxBodyBytes != DefaultMaxBodyBytes || o.DedupeSize != DefaultDedupeSize || o.PathPrefix != DefaultPathPrefix || o.Logger == nil {
					t.Errorf("defaults not filled: %+v", o)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Validate = %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
}
