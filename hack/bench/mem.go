package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// memUsage is a process's resident memory as /proc/<pid>/status reports
// it, in bytes. rss = anon + file (+ shmem): anon is the process's own
// memory (heap, stacks, runtime), what every further replica adds; file
// is the pages of its executable mapped in, which replicas of one image
// on a node share through the page cache.
type memUsage struct {
	rss, anon, file, peak uint64
}

// errNoProc is readMemUsage on a system without /proc.
var errNoProc = errors.New("no /proc: memory is measured on Linux only")

func readMemUsage(pid int) (memUsage, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if errors.Is(err, os.ErrNotExist) {
		if _, statErr := os.Stat("/proc/self/status"); statErr != nil {
			return memUsage{}, errNoProc
		}
	}
	if err != nil {
		return memUsage{}, err
	}
	return parseMemUsage(data)
}

// parseMemUsage reads VmRSS, RssAnon, RssFile and VmHWM from a status file.
func parseMemUsage(status []byte) (memUsage, error) {
	var u memUsage
	fields := map[string]*uint64{"VmRSS": &u.rss, "RssAnon": &u.anon, "RssFile": &u.file, "VmHWM": &u.peak}
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		k, v, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		dst := fields[string(k)]
		if !ok || dst == nil {
			continue
		}
		f := bytes.Fields(v)
		if len(f) != 2 || string(f[1]) != "kB" {
			return memUsage{}, fmt.Errorf("%s: unexpected value %q", k, v)
		}
		n, err := strconv.ParseUint(string(f[0]), 10, 64)
		if err != nil {
			return memUsage{}, fmt.Errorf("%s: %w", k, err)
		}
		*dst = n << 10
		seen++
	}
	if seen != len(fields) {
		return memUsage{}, fmt.Errorf("status has %d of VmRSS, RssAnon, RssFile, VmHWM", seen)
	}
	return u, nil
}
