package bytesize

import (
	"flag"
	"testing"
)

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", 1: "1 byte", 300: "300 bytes", 1 << 10: "1 KiB", 100 << 20: "100 MiB",
		3 << 29: "1.5 GiB", 1<<20 + 1: "1048577 bytes", 2 << 40: "2 TiB", 1536: "1.5 KiB",
	} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "1048576", want: 1 << 20},
		{in: "100MiB", want: 100 << 20},
		{in: "100Mi", want: 100 << 20},
		{in: "100 mib", want: 100 << 20},
		{in: "1.5GiB", want: 3 << 29},
		{in: "512Ki", want: 512 << 10},
		{in: "2TiB", want: 2 << 40},
		{in: "10b", want: 10},
		{in: "0", want: 0},
		{in: "", bad: true},
		{in: "MiB", bad: true},
		{in: "-1", bad: true},
		{in: "1e6", bad: true},
		{in: "0x10", bad: true},
		{in: "1.2.3", bad: true},
		{in: "100MB", bad: true}, // decimal units are not binary ones: say which
		{in: "10000000TiB", bad: true},
	}
	for _, tc := range tests {
		got, err := Parse(tc.in)
		switch {
		case tc.bad && err == nil:
			t.Errorf("Parse(%q) = %d, want an error", tc.in, got)
		case !tc.bad && (err != nil || got != tc.want):
			t.Errorf("Parse(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestValueIsAFlag(t *testing.T) {
	var n int64
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Var(NewValue(&n, 100<<20), "max", "")
	if n != 100<<20 || fs.Lookup("max").DefValue != "100 MiB" {
		t.Fatalf("default = %d, shown as %q", n, fs.Lookup("max").DefValue)
	}
	if err := fs.Parse([]string{"--max=1GiB"}); err != nil || n != 1<<30 {
		t.Fatalf("--max=1GiB: %d, %v", n, err)
	}
	if err := fs.Parse([]string{"--max=lots"}); err == nil {
		t.Fatal("--max=lots accepted")
	}
}
