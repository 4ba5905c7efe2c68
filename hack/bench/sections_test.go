package main

import "testing"

func TestCarriedSectionAndPlacement(t *testing.T) {
	page := "# Benchmarks\n\n## Request path\n\nrows\n\n## Cold start\n\ncold\n\n## The edge: knit's ingress beside nginx\n\nedge rows\n\n## Targets\n\nt\n"
	tests := []struct {
		name, page, heading, want string
	}{
		{"a middle section", page, edgeHeading, "\n## The edge: knit's ingress beside nginx\n\nedge rows\n"},
		{"the last section", page, "## Targets", "\n## Targets\n\nt\n"},
		{"none", page, "## Nope", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := carriedSection(tt.page, tt.heading); got != tt.want {
				t.Errorf("carriedSection = %q, want %q", got, tt.want)
			}
		})
	}
	want := "# Benchmarks\n\n## Request path\n\nrows\n\n## The edge: knit's ingress beside nginx\n\nedge rows\n\n## Cold start\n\ncold\n\n## Targets\n\nt\n"
	if got := afterRequestPath(page, edgeHeading); got != want {
		t.Errorf("afterRequestPath =\n%s\nwant\n%s", got, want)
	}
	if got := afterRequestPath(want, edgeHeading); got != want {
		t.Errorf("afterRequestPath of a page in order changed it:\n%s", got)
	}
}
