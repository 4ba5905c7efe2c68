package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
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

// clockTick is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on
// every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// readCPU is the CPU time a process used so far, user and system, with
// its threads: fields 14 and 15 of /proc/<pid>/stat.
func readCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseCPU(data)
}

func parseCPU(stat []byte) (time.Duration, error) {
	// The command name, field 2, is in parentheses and may hold spaces.
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, errors.New("stat: no command name")
	}
	f := bytes.Fields(stat[end+1:]) // f[0] is field 3
	if len(f) < 13 {
		return 0, fmt.Errorf("stat: %d fields after the command name, want 13 or more", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// readPSS is a process's proportional set size from
// /proc/<pid>/smaps_rollup, in bytes: its own pages, plus each shared page
// divided by the processes sharing it. Summed over the replicas of one
// image it is what they cost together; RSS counts the executable's shared
// pages once per replica.
func readPSS(pid int) (uint64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, err
	}
	return parsePSS(data)
}

func parsePSS(rollup []byte) (uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(rollup))
	for sc.Scan() {
		v, ok := bytes.CutPrefix(sc.Bytes(), []byte("Pss:"))
		if !ok {
			continue
		}
		f := bytes.Fields(v)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("Pss: unexpected value %q", v)
		}
		n, err := strconv.ParseUint(string(f[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("Pss: %w", err)
		}
		return n << 10, nil
	}
	return 0, errors.New("smaps_rollup has no Pss line")
}
