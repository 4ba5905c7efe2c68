package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMemUsage(t *testing.T) {
	tests := []struct {
		name    string
		status  string
		want    memUsage
		wantErr bool
	}{
		{
			name:   "a Linux status file",
			status: "Name:\tknit-queue\nVmHWM:\t   10132 kB\nVmRSS:\t   10124 kB\nRssAnon:\t    1708 kB\nRssFile:\t    8416 kB\nRssShmem:\t       0 kB\nThreads:\t6\n",
			want:   memUsage{rss: 10124 << 10, anon: 1708 << 10, file: 8416 << 10, peak: 10132 << 10},
		},
		{name: "a kernel thread has no RSS lines", status: "Name:\tkthreadd\nThreads:\t1\n", wantErr: true},
		{name: "another unit", status: "VmHWM:\t1 MB\nVmRSS:\t1 kB\nRssAnon:\t1 kB\nRssFile:\t0 kB\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMemUsage([]byte(tt.status))
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseMemUsage error = %v, want error %t", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(memUsage{})); !tt.wantErr && diff != "" {
				t.Errorf("parseMemUsage (-want +got):\n%s", diff)
			}
		})
	}
}
