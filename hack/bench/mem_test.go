package main

import (
	"testing"
	"time"

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

func TestParseCPU(t *testing.T) {
	tests := []struct {
		name    string
		stat    string
		want    time.Duration
		wantErr bool
	}{
		{"a process", "4242 (knit-queue) S 1 4242 4242 0 -1 4194560 1234 0 0 0 150 25 0 0 20 0 6 0 12345 1333900288 2532 18446744073709551615", 1750 * time.Millisecond, false},
		{"spaces and parentheses in the name", "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1 0 0 0", 70 * time.Millisecond, false},
		{"truncated", "7 (x) R 1 7", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCPU([]byte(tt.stat))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseCPU = %v, %v; want %v (error %t)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParsePSS(t *testing.T) {
	rollup := "55d0c0000000-7ffd4a3fe000 ---p 00000000 00:00 0                          [rollup]\nRss:                8196 kB\nPss:                1642 kB\nPss_Dirty:          1360 kB\n"
	if got, err := parsePSS([]byte(rollup)); err != nil || got != 1642<<10 {
		t.Errorf("parsePSS = %d, %v; want %d", got, err, 1642<<10)
	}
	if _, err := parsePSS([]byte("Rss: 8196 kB\n")); err == nil {
		t.Error("parsePSS without a Pss line: no error")
	}
}
