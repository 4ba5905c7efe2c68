package queue

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// addGoMetrics registers the go_* families client_golang's default Go
// collector served: goroutines, threads, GC pauses and settings, the
// MemStats-named gauges (computed from runtime/metrics the way it
// computes them, without stopping the world) and go_info.
func addGoMetrics(reg *metricsRegistry) {
	rm := newRuntimeSamples()
	reg.prepare(rm.read)
	gauge := func(name, help string, f func() float64) metricFamily {
		return metricFamily{name: name, help: help, kind: "gauge", write: func(w *expoWriter) { w.sample(name, "", "", "", f()) }}
	}
	memstat := func(name, kind, help string, f func(s *runtimeSamples) uint64) metricFamily {
		return metricFamily{name: "go_memstats_" + name, help: help, kind: kind, write: func(w *expoWriter) {
			w.sample("go_memstats_"+name, "", "", "", float64(f(rm)))
		}}
	}
	const (
		heapObjects  = "/memory/classes/heap/objects:bytes"
		heapUnused   = "/memory/classes/heap/unused:bytes"
		heapReleased = "/memory/classes/heap/released:bytes"
		heapFree     = "/memory/classes/heap/free:bytes"
		tinyAllocs   = "/gc/heap/tiny/allocs:objects"
	)
	reg.add(
		metricFamily{
			name: "go_gc_duration_seconds", kind: "summary",
			help: "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.",
			write: func(w *expoWriter) {
				var stats debug.GCStats
				stats.PauseQuantiles = make([]time.Duration, 5)
				debug.ReadGCStats(&stats)
				for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
					w.sample("go_gc_duration_seconds", "", "quantile", q, stats.PauseQuantiles[i].Seconds())
				}
				w.sample("go_gc_duration_seconds_sum", "", "", "", stats.PauseTotal.Seconds())
				w.sample("go_gc_duration_seconds_count", "", "", "", float64(stats.NumGC))
			},
		},
		gauge("go_gc_gogc_percent", "Heap size target percentage configured by the user, otherwise 100. This value is set by the GOGC environment variable, and the runtime/debug.SetGCPercent function. Sourced from /gc/gogc:percent.",
			func() float64 { return float64(rm.get("/gc/gogc:percent")) }),
		gauge("go_gc_gomemlimit_bytes", "Go runtime memory limit configured by the user, otherwise math.MaxInt64. This value is set by the GOMEMLIMIT environment variable, and the runtime/debug.SetMemoryLimit function. Sourced from /gc/gomemlimit:bytes.",
			func() float64 { return float64(rm.get("/gc/gomemlimit:bytes")) }),
		gauge("go_goroutines", "Number of goroutines that currently exist.", func() float64 { return float64(runtime.NumGoroutine()) }),
		metricFamily{name: "go_info", kind: "gauge", help: "Information about the Go environment.", write: func(w *expoWriter) {
			w.sample("go_info", `version="`+labelValueEscaper.Replace(runtime.Version())+`"`, "", "", 1)
		}},
		memstat("alloc_bytes", "gauge", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.",
			func(s *runtimeSamples) uint64 { return s.get(heapObjects) }),
		memstat("alloc_bytes_total", "counter", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.",
			func(s *runtimeSamples) uint64 { return s.get("/gc/heap/allocs:bytes") }),
		memstat("buck_hash_sys_bytes", "gauge", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.",
			func(s *runtimeSamples) uint64 { return s.get("/memory/classes/profiling/buckets:bytes") }),
		memstat("frees_total", "counter", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.",
			func(s *runtimeSamples) uint64 { return s.get("/gc/heap/frees:objects") + s.get(tinyAllocs) }),
		memstat("gc_sys_bytes", "gauge", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.",
			func(s *runtimeSamples) uint64 { return s.get("/memory/classes/metadata/other:bytes") }),
		memstat("heap_alloc_bytes", "gauge", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.",
			func(s *runtimeSamples) uint64 { return s.get(heapObjects) }),
		memstat("heap_idle_bytes", "gauge", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.",
			func(s *runtimeSamples) uint64 { return s.get(heapReleased) + s.get(heapFree) }),
		memstat("heap_inuse_bytes", "gauge", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes",
			func(s *runtimeSamples) uint64 { return s.get(heapObjects) + s.get(heapUnused) }),
		memstat("heap_objects", "gauge", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.",
			func(s *runtimeSamples) uint64 { return s.get("/gc/heap/objects:objects") }),
		memstat("heap_released_bytes", "gauge", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.",
			func(s *runtimeSamples) uint64 { return s.get(heapReleased) }),
		memstat("heap_sys_bytes", "gauge", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.",
			func(s *runtimeSamples) uint64 {
				return s.get(heapObjects) + s.get(heapUnused) + s.get(heapReleased) + s.get(heapFree)
			}),
		gauge("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", func() float64 {
			var stats debug.GCStats
			debug.ReadGCStats(&stats)
			return float64(stats.LastGC.UnixNano()) / 1e9
		}),
		memstat("mallocs_total", "counter", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.",
			func(s *runtimeSamples) uint64 { return s.get("/gc/heap/allocs:objects") + s.get(tinyAllocs) }),
		memstat("mcache_inuse_bytes", "gauge", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.",
			func(s *runtimeSamples) uint64 { return s.get("/memory/classes/metadata/mcache/inuse:bytes") }),
		memstat("mcache_sys_bytes", "gauge", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.",
			func(s *runtimeSamples) uint64 {
				return s.get("/memory/classes/metadata/mcache/inuse:bytes") + s.get("/memory/classes/metadata/mcache/free:bytes")
			}),
		memstat("mspan_inuse_bytes", "gauge", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.",
			func(s *runtimeSamples) uint64 { return s.get("/memory/classes/metadata/mspan/inuse:bytes") }),
		memstat("mspan_sys_bytes", "gauge", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.",
			func(s *runtimeSamples) uint64 {
				return s.get("/memory/classes/metadata/mspan/inuse:bytes") + s.get("/memory/classes/metadata/mspan/free:bytes")
			}),
		memstat("next_gc_bytes", "gauge", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.",
			func(s *runtimeSamples) uint64 { return s.get("/gc/heap/goal:bytes") }),
		memstat("other_sys_bytes", "gauge", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.",
			func(s *runtimeSamples) uint64 { return s.get("/memory/classes/other:bytes") }),
		memstat("stack_inuse_bytes", "gauge", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.",
			func(s *runtimeSamples) uint64 { return s.get("/memory/classes/heap/stacks:bytes") }),
		memstat("stack_sys_bytes", "gauge", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.",
			func(s *runtimeSamples) uint64 {
				return s.get("/memory/classes/heap/stacks:bytes") + s.get("/memory/classes/os-stacks:bytes")
			}),
		memstat("sys_bytes", "gauge", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.",
			func(s *runtimeSamples) uint64 { return s.get("/memory/classes/total:bytes") }),
		gauge("go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously. Sourced from /sched/gomaxprocs:threads.",
			func() float64 { return float64(rm.get("/sched/gomaxprocs:threads")) }),
		gauge("go_threads", "Number of OS threads created.", func() float64 {
			n, _ := runtime.ThreadCreateProfile(nil)
			return float64(n)
		}),
	)
}

// runtimeSamples are the runtime/metrics the go_* families need, read
// once at the start of each scrape (scrapes are serialized).
type runtimeSamples struct {
	samples []metrics.Sample
	index   map[string]int
}

// runtimeMetricNames are the runtime/metrics the go_* families read.
var runtimeMetricNames = []string{
	"/gc/gogc:percent", "/gc/gomemlimit:bytes", "/sched/gomaxprocs:threads",
	"/gc/heap/allocs:bytes", "/gc/heap/allocs:objects", "/gc/heap/frees:objects", "/gc/heap/tiny/allocs:objects",
	"/gc/heap/goal:bytes", "/gc/heap/objects:objects",
	"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes", "/memory/classes/heap/released:bytes",
	"/memory/classes/heap/free:bytes", "/memory/classes/heap/stacks:bytes", "/memory/classes/os-stacks:bytes",
	"/memory/classes/metadata/mcache/inuse:bytes", "/memory/classes/metadata/mcache/free:bytes",
	"/memory/classes/metadata/mspan/inuse:bytes", "/memory/classes/metadata/mspan/free:bytes",
	"/memory/classes/metadata/other:bytes", "/memory/classes/profiling/buckets:bytes",
	"/memory/classes/other:bytes", "/memory/classes/total:bytes",
}

func newRuntimeSamples() *runtimeSamples {
	s := &runtimeSamples{samples: make([]metrics.Sample, len(runtimeMetricNames)), index: map[string]int{}}
	for i, name := range runtimeMetricNames {
		s.samples[i].Name = name
		s.index[name] = i
	}
	return s
}

func (s *runtimeSamples) read() { metrics.Read(s.samples) }

// get is a sample's value, 0 when this Go has no such metric.
func (s *runtimeSamples) get(name string) uint64 {
	v := s.samples[s.index[name]].Value
	switch v.Kind() {
	case metrics.KindUint64:
		return v.Uint64()
	case metrics.KindFloat64:
		return uint64(v.Float64())
	}
	return 0
}
