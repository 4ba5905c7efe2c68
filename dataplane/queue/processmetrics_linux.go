package queue

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
)

// userHZ is the unit of /proc's CPU times (USER_HZ, 100 on every Linux
// Go supports), as procfs assumes.
const userHZ = 100

// addProcessMetrics registers the process_* families client_golang's
// process collector served, read from /proc/self on each scrape. A
// family whose file cannot be read is left out of that scrape.
func addProcessMetrics(reg *metricsRegistry) {
	var stat procStat
	var statOK bool
	reg.prepare(func() { stat, statOK = readProcStat() })
	family := func(name, kind, help string, value func() (float64, bool)) metricFamily {
		return metricFamily{name: name, kind: kind, help: help, write: func(w *expoWriter) {
			if v, ok := value(); ok {
				w.sample(name, "", "", "", v)
			}
		}}
	}
	fromStat := func(f func(procStat) float64) func() (float64, bool) {
		return func() (float64, bool) { return f(stat), statOK }
	}
	var inOctets, outOctets float64
	var netOK bool
	reg.prepare(func() { inOctets, outOctets, netOK = readNetOctets() })
	var maxFDs, maxVM float64
	var limitsOK bool
	reg.prepare(func() { maxFDs, maxVM, limitsOK = readLimits() })
	reg.add(
		family("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
			fromStat(func(s procStat) float64 { return float64(s.utime+s.stime) / userHZ })),
		family("process_max_fds", "gauge", "Maximum number of open file descriptors.",
			func() (float64, bool) { return maxFDs, limitsOK }),
		family("process_network_receive_bytes_total", "counter", "Number of bytes received by the process over the network.",
			func() (float64, bool) { return inOctets, netOK }),
		family("process_network_transmit_bytes_total", "counter", "Number of bytes sent by the process over the network.",
			func() (float64, bool) { return outOctets, netOK }),
		family("process_open_fds", "gauge", "Number of open file descriptors.", func() (float64, bool) {
			entries, err := os.ReadDir("/proc/self/fd")
			return float64(len(entries)), err == nil
		}),
		family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
			fromStat(func(s procStat) float64 { return float64(s.rss * uint64(os.Getpagesize())) })),
		family("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", func() (float64, bool) {
			btime, ok := bootTime()
			return float64(btime) + float64(stat.starttime)/userHZ, ok && statOK
		}),
		family("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
			fromStat(func(s procStat) float64 { return float64(s.vsize) })),
		family("process_virtual_memory_max_bytes", "gauge", "Maximum amount of virtual memory available in bytes.",
			func() (float64, bool) { return maxVM, limitsOK }),
	)
}

// procStat holds the fields of /proc/self/stat the families use.
type procStat struct {
	utime, stime, starttime, vsize, rss uint64
}

func readProcStat() (procStat, bool) {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return procStat{}, false
	}
	return parseProcStat(data)
}

// parseProcStat reads fields 14, 15, 22, 23 and 24 of a stat file.
func parseProcStat(data []byte) (procStat, bool) {
	end := bytes.LastIndexByte(data, ')') // the command name may hold spaces
	if end < 0 {
		return procStat{}, false
	}
	f := bytes.Fields(data[end+1:]) // f[0] is field 3
	if len(f) < 22 {
		return procStat{}, false
	}
	var s procStat
	for _, x := range []struct {
		field int
		dst   *uint64
	}{{14, &s.utime}, {15, &s.stime}, {22, &s.starttime}, {23, &s.vsize}, {24, &s.rss}} {
		n, err := strconv.ParseUint(string(f[x.field-3]), 10, 64)
		if err != nil {
			return procStat{}, false
		}
		*x.dst = n
	}
	return s, true
}

// bootTime is btime from /proc/stat: it never changes, so it is read once.
var bootTime = sync.OnceValues(func() (uint64, bool) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
})

// readLimits reads the soft limits on open files and address space.
func readLimits() (maxFDs, maxVM float64, ok bool) {
	data, err := os.ReadFile("/proc/self/limits")
	if err != nil {
		return 0, 0, false
	}
	return parseLimits(data)
}

func parseLimits(data []byte) (maxFDs, maxVM float64, ok bool) {
	var seen int
	for line := range strings.SplitSeq(string(data), "\n") {
		var dst *float64
		var rest string
		if r, ok := strings.CutPrefix(line, "Max open files "); ok {
			dst, rest = &maxFDs, r
		} else if r, ok := strings.CutPrefix(line, "Max address space "); ok {
			dst, rest = &maxVM, r
		} else {
			continue
		}
		// The soft limit is the first field after the name.
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, 0, false
		}
		if f[0] == "unlimited" {
			*dst = math.MaxUint64
		} else if n, err := strconv.ParseUint(f[0], 10, 64); err == nil {
			*dst = float64(n)
		} else {
			return 0, 0, false
		}
		seen++
	}
	return maxFDs, maxVM, seen == 2
}

// readNetOctets is IpExt's InOctets and OutOctets from
// /proc/self/net/netstat: the network namespace's traffic.
func readNetOctets() (in, out float64, ok bool) {
	data, err := os.ReadFile("/proc/self/net/netstat")
	if err != nil {
		return 0, 0, false
	}
	return parseNetOctets(data)
}

func parseNetOctets(data []byte) (in, out float64, ok bool) {
	var names []string
	for line := range strings.SplitSeq(string(data), "\n") {
		rest, found := strings.CutPrefix(line, "IpExt: ")
		if !found {
			continue
		}
		if names == nil {
			names = strings.Fields(rest) // the header line comes first
			continue
		}
		values := strings.Fields(rest)
		var seen int
		for i, name := range names {
			if i >= len(values) || (name != "InOctets" && name != "OutOctets") {
				continue
			}
			v, err := strconv.ParseFloat(values[i], 64)
			if err != nil {
				return 0, 0, false
			}
			if name == "InOctets" {
				in = v
			} else {
				out = v
			}
			seen++
		}
		return in, out, seen == 2
	}
	return 0, 0, false
}
