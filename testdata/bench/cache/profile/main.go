// Command profile is bench-cache's profile of the daemon's side of the
// never-asked question: one daemon.Server (in process, as `zarf-planner
// serve` holds one), a warm archive cache of its own, and N plans of the
// bench's 1,000 archives, each a question not asked before (a priority
// that changes nothing, as bench.py asks). It prints how long the
// server's Plan took (best and median) and writes a CPU profile of the
// timed plans, whose cumulative times by function are the stages
// (docs/benchmarks.md: the directory's stamp for the memo key, the read
// from the cache, the planner, conflicts and warnings, the encoding, the
// kept plan, the collector).
//
//	go run ./testdata/bench/cache/profile -dir .cache/bench/cache/archives -cpuprofile /tmp/plan.pprof
//	go tool pprof -top -nodecount 40 /tmp/plan.pprof
//
// The cache is warmed by a first plan, not timed; so is the page cache.
// With -fresh, each timed plan is a new server's first over that warm
// cache (what a daemon the module just started does first): the cache's
// opening is timed with it, the closing of the server before is not.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/daemon/server"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

func main() {
	dir := flag.String("dir", ".cache/bench/cache/archives", "the bench's archives (make bench-cache builds them)")
	n := flag.Int("n", 100, "plans to time")
	cpu := flag.String("cpuprofile", "", "write a CPU profile of the timed plans here")
	mem := flag.String("memprofile", "", "write an allocation profile here (every allocation sampled, the untimed first plan's too)")
	fresh := flag.Bool("fresh", false, "time each plan on a new server over the same warm cache (a daemon's first plan), its opening included")
	flag.Parse()
	if *mem != "" {
		runtime.MemProfileRate = 1 // before anything allocates
	}
	abs, err := os.Getwd()
	if err != nil {
		log.Fatal(err)
	}
	if (*dir)[0] != '/' {
		*dir = abs + "/" + *dir
	}
	cacheDir, err := os.MkdirTemp("", "zp-profile-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(cacheDir)
	d := server.New(server.Config{DefaultCache: cacheDir})
	defer func() { d.Close() }()
	ask := func(i int) time.Duration {
		o := options.Defaults()
		o.UseCache, o.CacheDir = true, cacheDir
		o.Priorities = map[string]int{"pkg-0000": i}
		if *fresh && i >= 0 {
			d.Close()
		}
		start := time.Now()
		if *fresh && i >= 0 {
			d = server.New(server.Config{DefaultCache: cacheDir})
		}
		a, err := d.Plan(context.Background(), &contract.PlanRequest{Path: *dir, Options: o, Caller: options.ModuleCaller})
		took := time.Since(start)
		if err != nil || a.Failed {
			log.Fatalf("plan %d: %v (failed %v)", i, err, a != nil && a.Failed)
		}
		return took
	}
	ask(-1)
	if *mem != "" {
		defer func() {
			runtime.GC() // the profile holds what the last collection saw
			f, err := os.Create(*mem)
			if err != nil {
				log.Fatal(err)
			}
			defer f.Close()
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				log.Fatal(err)
			}
		}()
	}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	if *cpu != "" {
		f, err := os.Create(*cpu)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	var times []time.Duration
	for i := range *n {
		times = append(times, ask(i))
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	slices.Sort(times)
	fmt.Printf("allocated per plan: %.1f MB\n", float64(after.TotalAlloc-before.TotalAlloc)/float64(*n)/1e6)
	fmt.Printf("server Plan, a question never asked, %d runs: best %v, median %v\n", *n, times[0], times[len(times)/2])
}
