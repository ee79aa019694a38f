package metrics

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// writeRuntime writes the go_* and process_* families the Prometheus
// client library's Go and process collectors served, with their names,
// types and help. A process_* value /proc cannot give (another OS) is left
// out, as the library left it out.
func writeRuntime(w *bufio.Writer) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)

	gc := debug.GCStats{PauseQuantiles: make([]time.Duration, 5)}
	debug.ReadGCStats(&gc)
	header(w, "go_gc_duration_seconds", "summary", "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.")
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		v := 0.0
		if gc.NumGC > 0 {
			v = gc.PauseQuantiles[i].Seconds()
		}
		sample(w, "go_gc_duration_seconds", "", `quantile="`+q+`"`, v)
	}
	sample(w, "go_gc_duration_seconds_sum", "", "", gc.PauseTotal.Seconds())
	sample(w, "go_gc_duration_seconds_count", "", "", float64(gc.NumGC))

	rm := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(rm)
	threads, _ := runtime.ThreadCreateProfile(nil)

	gauge := func(name, help string, v float64) {
		header(w, name, "gauge", help)
		sample(w, name, "", "", v)
	}
	counter := func(name, help string, v float64) {
		header(w, name, "counter", help)
		sample(w, name, "", "", v)
	}
	gauge("go_gc_gogc_percent", "Heap size target percentage configured by the user, otherwise 100. This value is set by the GOGC environment variable, and the runtime/debug.SetGCPercent function. Sourced from /gc/gogc:percent.", float64(rm[0].Value.Uint64()))
	gauge("go_gc_gomemlimit_bytes", "Go runtime memory limit configured by the user, otherwise math.MaxInt64. This value is set by the GOMEMLIMIT environment variable, and the runtime/debug.SetMemoryLimit function. Sourced from /gc/gomemlimit:bytes.", float64(rm[1].Value.Uint64()))
	gauge("go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine()))
	header(w, "go_info", "gauge", "Information about the Go environment.")
	sample(w, "go_info", `{version="`+labelEscaper.Replace(runtime.Version())+`"}`, "", 1)
	gauge("go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", float64(ms.Alloc))
	counter("go_memstats_alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", float64(ms.TotalAlloc))
	gauge("go_memstats_buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.", float64(ms.BuckHashSys))
	counter("go_memstats_frees_total", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", float64(ms.Frees))
	gauge("go_memstats_gc_sys_bytes", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.", float64(ms.GCSys))
	gauge("go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", float64(ms.HeapAlloc))
	gauge("go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", float64(ms.HeapIdle))
	gauge("go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", float64(ms.HeapInuse))
	gauge("go_memstats_heap_objects", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", float64(ms.HeapObjects))
	gauge("go_memstats_heap_released_bytes", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", float64(ms.HeapReleased))
	gauge("go_memstats_heap_sys_bytes", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", float64(ms.HeapSys))
	gauge("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", float64(ms.LastGC)/1e9)
	counter("go_memstats_mallocs_total", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", float64(ms.Mallocs))
	gauge("go_memstats_mcache_inuse_bytes", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.", float64(ms.MCacheInuse))
	gauge("go_memstats_mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.", float64(ms.MCacheSys))
	gauge("go_memstats_mspan_inuse_bytes", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.", float64(ms.MSpanInuse))
	gauge("go_memstats_mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.", float64(ms.MSpanSys))
	gauge("go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", float64(ms.NextGC))
	gauge("go_memstats_other_sys_bytes", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.", float64(ms.OtherSys))
	gauge("go_memstats_stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", float64(ms.StackInuse))
	gauge("go_memstats_stack_sys_bytes", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.", float64(ms.StackSys))
	gauge("go_memstats_sys_bytes", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", float64(ms.Sys))
	gauge("go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously. Sourced from /sched/gomaxprocs:threads.", float64(runtime.GOMAXPROCS(0)))
	gauge("go_threads", "Number of OS threads created.", float64(threads))

	p := readProc()
	if p.stat {
		counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", p.cpu)
	}
	if p.maxFDs >= 0 {
		gauge("process_max_fds", "Maximum number of open file descriptors.", p.maxFDs)
	}
	if p.net {
		counter("process_network_receive_bytes_total", "Number of bytes received by the process over the network.", p.rx)
		counter("process_network_transmit_bytes_total", "Number of bytes sent by the process over the network.", p.tx)
	}
	if p.openFDs >= 0 {
		gauge("process_open_fds", "Number of open file descriptors.", p.openFDs)
	}
	if p.stat {
		gauge("process_resident_memory_bytes", "Resident memory size in bytes.", p.rss)
		if p.start > 0 {
			gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", p.start)
		}
		gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", p.vsize)
	}
	if p.maxVM >= 0 {
		gauge("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", p.maxVM)
	}
}

// procFigures are what /proc says of this process; false or -1: unknown.
type procFigures struct {
	stat                   bool
	cpu, rss, vsize, start float64
	net                    bool
	rx, tx                 float64
	openFDs, maxFDs, maxVM float64
}

// userHZ is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const userHZ = 100

func readProc() procFigures {
	p := procFigures{openFDs: -1, maxFDs: -1, maxVM: -1}
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		// The fields after the command, which is in parentheses and may hold anything.
		if i := bytes.LastIndexByte(b, ')'); i > 0 {
			f := strings.Fields(string(b[i+1:]))
			if len(f) > 21 { // f[0] is field 3, the state
				num := func(i int) float64 { v, _ := strconv.ParseFloat(f[i-3], 64); return v }
				p.stat = true
				p.cpu = (num(14) + num(15)) / userHZ
				p.vsize = num(23)
				p.rss = num(24) * float64(os.Getpagesize())
				if boot := bootTime(); boot > 0 {
					p.start = boot + num(22)/userHZ
				}
			}
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		p.openFDs = float64(len(fds))
	}
	if b, err := os.ReadFile("/proc/self/limits"); err == nil {
		for line := range strings.Lines(string(b)) {
			switch {
			case strings.HasPrefix(line, "Max open files"):
				p.maxFDs = softLimit(line, "Max open files")
			case strings.HasPrefix(line, "Max address space"):
				p.maxVM = softLimit(line, "Max address space")
			}
		}
	}
	if b, err := os.ReadFile("/proc/self/net/dev"); err == nil {
		for line := range strings.Lines(string(b)) {
			_, counts, ok := strings.Cut(line, ":")
			f := strings.Fields(counts)
			if !ok || len(f) < 9 {
				continue // the two header lines
			}
			rx, _ := strconv.ParseFloat(f[0], 64)
			tx, _ := strconv.ParseFloat(f[8], 64)
			p.rx += rx
			p.tx += tx
			p.net = true
		}
	}
	return p
}

// softLimit reads the soft limit of a /proc/PID/limits line; unlimited is
// the largest uint64, as the client library read it.
func softLimit(line, name string) float64 {
	f := strings.Fields(line[len(name):])
	if len(f) == 0 {
		return -1
	}
	if f[0] == "unlimited" {
		return math.MaxUint64
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

func bootTime() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			t, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return t
		}
	}
	return 0
}
