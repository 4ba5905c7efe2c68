package build

import "testing"

func TestKey(t *testing.T) {
	base := Key("knit.local/knit-toolchain:go1.26", "linux/amd64", "default", "tree1", "ko://./cmd/hello")
	tests := []struct {
		name                             string
		toolchain, platform, tree, image string
		same                             bool
	}{
		{"same inputs", "knit.local/knit-toolchain:go1.26", "linux/amd64", "tree1", "ko://./cmd/hello", true},
		{"another toolchain", "knit.local/knit-toolchain:go1.27", "linux/amd64", "tree1", "ko://./cmd/hello", false},
		{"another platform", "knit.local/knit-toolchain:go1.26", "linux/arm64", "tree1", "ko://./cmd/hello", false},
		{"another tree", "knit.local/knit-toolchain:go1.26", "linux/amd64", "tree2", "ko://./cmd/hello", false},
		{"another package", "knit.local/knit-toolchain:go1.26", "linux/amd64", "tree1", "ko://./cmd/bye", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Key(tt.toolchain, tt.platform, "default", tt.tree, tt.image)
			if (got == base) != tt.same {
				t.Errorf("Key(%s) == base is %v, want %v", tt.name, got == base, tt.same)
			}
			if len(got) != 64 {
				t.Errorf("Key is %d hex digits, want 64", len(got))
			}
		})
	}
}

func TestRepository(t *testing.T) {
	tests := []struct {
		registry, image, want string
	}{
		{"10.250.0.2:5000", "ko://./cmd/hello", "10.250.0.2:5000/default/shop/hello"},
		{"registry.example/knit/", "ko://./cmd/Hello", "registry.example/knit/default/shop/hello"},
		{"r.example", "ko://.", "r.example/default/shop/shop"},
		{"r.example", "ko://./", "r.example/default/shop/shop"},
		{"r.example", "ko://example.com/tool/v2", "r.example/default/shop/tool"},
		{"r.example", "ko://./v2", "r.example/default/shop/v2"},
	}
	for _, tt := range tests {
		if got := Repository(tt.registry, "default", "shop", tt.image); got != tt.want {
			t.Errorf("Repository(%q, %q) = %q, want %q", tt.registry, tt.image, got, tt.want)
		}
	}
}
