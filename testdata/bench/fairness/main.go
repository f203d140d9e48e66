// Command fairness measures what a hostile neighbour costs a trusted
// caller of the same daemon (issue 44): the time of a trusted plan alone,
// then beside each neighbour, the two planned through one daemon (the
// operator's path: a daemon serving every play of a host), and each
// neighbour's own end (when, and what it was told) and the peak memory of
// the daemon and its chart renderers together.
//
// The trusted plan is testdata/bundles/upstream (six archives the real
// zarf CLI built, three of them upstream charts: cert-manager,
// local-path-provisioner, prometheus-operator-crds), cold: every run
// starts a daemon of its own (state directory, archive cache and render
// memo all empty) at GOMAXPROCS=8, so nothing is warm but the page cache.
// Alone it is planned -runs times (the median is the reference); beside a
// neighbour once per neighbour, started a second after the neighbour.
//
// The neighbours:
//
//   - drip: a registry of 12 packages whose checksums.txt layer claims
//     8 MiB and is sent one byte every 2 s (planned with
//     --registry-timeout 3s);
//   - loops: 12 archives, each a distinct chart whose templates loop for
//     ever (two nested `range until 100000`);
//   - deep: 8 archives of raw manifests, each at the bounds of what one
//     archive keeps (4 files of nearly 4 MiB of YAML 60 levels deep);
//   - big render: one archive whose chart renders about 15 MiB;
//   - listing: a registry whose catalog lists 600 repositories of 10,000
//     tags each, page by page, without storing them;
//   - bombs: 24 archives of about 100 KB that each decompress to 900 MiB
//     of zeros (21 GiB together, past the read budget of 16 GiB).
//
// The archives are built once with the real zarf CLI (.tools/bin/zarf)
// under .cache/bench/fairness (the bombs with testdata/craft); the registries are served by this program
// (they speak the distribution API as far as a reader needs, and lie).
//
//	go run ./testdata/bench/fairness [-bin bin/zarf-planner] [-runs 5] [-only NAME]
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/zarf-planner", "the zarf-planner binary (its renderer beside it)")
	runs := flag.Int("runs", 5, "plans of the trusted directory alone")
	only := flag.String("only", "", "run only this neighbour (drip, loops, deep, big-render, listing, bombs)")
	flag.DurationVar(&neighbourCap, "cap", neighbourCap, "end a neighbour that runs this long")
	flag.Parse()
	if err := run(*bin, *runs, *only); err != nil {
		fmt.Fprintln(os.Stderr, "fairness:", err)
		os.Exit(1)
	}
}

// settle is how long a neighbour runs before the trusted plan starts: long
// enough to have listed its registry, taken its share and begun its
// renders.
const settle = time.Second

// neighbourCap ends a neighbour that runs this long (reported as not
// ending within its budget): -cap.
var neighbourCap = 10 * time.Minute

type neighbour struct {
	name string
	// args are the plan's arguments after "plan".
	args []string
	// budget is when it must have ended, and what bounds it.
	budget time.Duration
	bound  string
}

func run(bin string, runs int, only string) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	trusted, err := filepath.Abs("testdata/bundles/upstream")
	if err != nil {
		return err
	}
	base, err := filepath.Abs(".cache/bench/fairness")
	if err != nil {
		return err
	}
	fixtures, err := build(base)
	if err != nil {
		return err
	}
	drip, err := serve(&dripRegistry{packages: 12, claimed: 8 << 20, every: 2 * time.Second})
	if err != nil {
		return err
	}
	defer drip.Close()
	listing, err := serve(&listingRegistry{repos: 600, tags: 10_000})
	if err != nil {
		return err
	}
	defer listing.Close()

	neighbours := []neighbour{
		{"drip", []string{"oci://" + drip.Addr().String() + "/drip", "--plain-http", "--registry-timeout", "3s"}, 3*time.Second + (8<<20)/(256<<10)*time.Second + 10*time.Second, "registry_timeout + 8 MiB at the floor of 256 KiB/s, + 10 s"},
		{"loops", []string{fixtures["loops"]}, 130 * time.Second, "the request's render budget (120 s), + 10 s"},
		{"deep", []string{fixtures["deep"]}, 130 * time.Second, "the request's render budget (120 s), + 10 s"},
		{"big-render", []string{fixtures["big-render"]}, 40 * time.Second, "the archive's render budget (30 s), + 10 s"},
		{"listing", []string{"oci://" + listing.Addr().String() + "/list", "--plain-http", "--registry-timeout", "3s"}, 60 * time.Second, "the listing's totals, + 60 s"},
		{"bombs", []string{fixtures["bombs"]}, 26 * time.Second, "the read budget (16 GiB) at 1 GiB/s, + 10 s"},
	}

	work, err := os.MkdirTemp("", "zp-fairness")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	fmt.Printf("trusted plan: %s, cold (a daemon of its own per run), GOMAXPROCS=8 in the daemon\n\n", trusted)
	var alone []time.Duration
	var aloneMem int64
	for i := range runs {
		d, err := startDaemon(bin, filepath.Join(work, fmt.Sprintf("alone-%d", i)))
		if err != nil {
			return err
		}
		took, err := plan(bin, d, trusted, "trusted")
		peak := d.stop()
		if err != nil {
			return err
		}
		alone = append(alone, took)
		aloneMem = max(aloneMem, peak)
	}
	ref := median(alone)
	fmt.Printf("| neighbour | trusted plan | ratio to alone | goal (≤ 2× or ≤ +1 s) | neighbour ended | its budget | what it was told | peak MiB, daemon + renderers | ≤ 256 MiB |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|---|\n")
	fmt.Printf("| none (median of %d) | %.2f s | 1.00 | | | | | %.1f | %s |\n", runs, ref.Seconds(), mib(aloneMem), yes(aloneMem <= 256<<20))
	for _, n := range neighbours {
		if only != "" && n.name != only {
			continue
		}
		d, err := startDaemon(bin, filepath.Join(work, n.name))
		if err != nil {
			return err
		}
		nb := startPlan(bin, d, n.args, n.name)
		time.Sleep(settle)
		took, terr := plan(bin, d, trusted, "trusted beside "+n.name)
		ended, told := nb.wait(neighbourCap)
		peak := d.stop()
		if terr != nil {
			return terr
		}
		ratio := took.Seconds() / ref.Seconds()
		fmt.Printf("| %s | %.2f s | %.2f | %s | %s | %.0f s (%s) | %s | %.1f | %s |\n", n.name, took.Seconds(), ratio, yes(ratio <= 2 || took <= ref+time.Second),
			endedText(ended), n.budget.Seconds(), n.bound, cell(told), mib(peak), yes(peak <= 256<<20 && ended > 0 && ended <= n.budget))
	}
	return nil
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func endedText(d time.Duration) string {
	if d <= 0 {
		return fmt.Sprintf("not within %s", neighbourCap)
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return strings.ReplaceAll(s, "|", "\\|")
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// daemon is a `zarf-planner serve` of its own state directory, its memory
// sampled (its own RSS and every descendant's, summed) until stopped.
type daemon struct {
	cmd   *exec.Cmd
	state string
	dir   string
	done  chan struct{}
	peak  chan int64
}

func startDaemon(bin, dir string) (*daemon, error) {
	state := filepath.Join(dir, "state")
	if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--state-dir", state)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=8", "XDG_CACHE_HOME="+filepath.Join(dir, "xdg-cache"), "ZARF_PLANNER_CACHE_DIR="+filepath.Join(dir, "default-cache"))
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	d := &daemon{cmd: cmd, state: state, dir: dir, done: make(chan struct{}), peak: make(chan int64, 1)}
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(state, "daemon.json")); err == nil {
			break
		}
		if time.Since(start) > 30*time.Second {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil, fmt.Errorf("the daemon of %s did not start within 30 s", state)
		}
	}
	go d.sample()
	return d, nil
}

// sample records the peak of the daemon's and its descendants' RSS
// together, every 10 ms.
func (d *daemon) sample() {
	var peak int64
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-d.done:
			// The daemon's own high-water mark catches what fell
			// between samples of it.
			_, hwm := memory(d.cmd.Process.Pid)
			d.peak <- max(peak, hwm)
			return
		case <-tick.C:
		}
		total := int64(0)
		for _, pid := range tree(d.cmd.Process.Pid) {
			rss, _ := memory(pid)
			total += rss
		}
		peak = max(peak, total)
	}
}

// stop stops the daemon and returns its peak memory with its renderers.
func (d *daemon) stop() int64 {
	close(d.done)
	peak := <-d.peak
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	ended := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(20 * time.Second):
		_ = d.cmd.Process.Kill()
		<-ended
	}
	return peak
}

// tree is pid and its descendants.
func tree(pid int) []int {
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", out[i]))
		for _, t := range tasks {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", out[i], t.Name()))
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// memory is a process's resident and peak resident set, in bytes.
func memory(pid int) (rss, hwm int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmRSS":
			rss = n << 10
		case "VmHWM":
			hwm = n << 10
		}
	}
	return rss, hwm
}

// plan plans dir through the daemon d with a cache of its own, and
// returns how long the command took; a failed plan is an error.
func plan(bin string, d *daemon, dir, what string) (time.Duration, error) {
	p := startPlan(bin, d, []string{dir}, what)
	took, told := p.wait(neighbourCap)
	if p.code != 0 {
		return 0, fmt.Errorf("%s: exit %d: %s", what, p.code, told)
	}
	return took, nil
}

// aPlan is a `zarf-planner plan` running against a daemon.
type aPlan struct {
	cmd    *exec.Cmd
	start  time.Time
	out    bytes.Buffer
	errb   bytes.Buffer
	code   int
	ended  chan struct{}
	finish time.Time
}

var planSeq struct {
	sync.Mutex
	n int
}

func startPlan(bin string, d *daemon, args []string, what string) *aPlan {
	planSeq.Lock()
	planSeq.n++
	cache := filepath.Join(d.dir, fmt.Sprintf("cache-%d", planSeq.n))
	planSeq.Unlock()
	full := append([]string{"plan"}, args...)
	full = append(full, "--state-dir", d.state, "--cache-dir", cache, "-o", "json")
	p := &aPlan{cmd: exec.Command(bin, full...), ended: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(d.dir, "xdg-cache"))
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errb
	p.start = time.Now()
	if err := p.cmd.Start(); err != nil {
		p.code = -1
		p.errb.WriteString(err.Error())
		close(p.ended)
		return p
	}
	go func() {
		err := p.cmd.Wait()
		p.finish = time.Now()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			p.code = ee.ExitCode()
		case err != nil:
			p.code = -1
		}
		close(p.ended)
	}()
	return p
}

// wait waits for the plan to end (at most limit, then kills it) and
// returns how long it ran (0 if killed) and what it was told: the plan
// document's msg, or its stderr.
func (p *aPlan) wait(limit time.Duration) (time.Duration, string) {
	select {
	case <-p.ended:
	case <-time.After(time.Until(p.start.Add(limit))):
		_ = p.cmd.Process.Kill()
		<-p.ended
		return 0, "killed after " + limit.String()
	}
	took := p.finish.Sub(p.start)
	var doc struct {
		Failed bool   `json:"failed"`
		Msg    string `json:"msg"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
		Unusable []struct {
			Path   string `json:"path"`
			Reason string `json:"reason"`
		} `json:"unusable"`
	}
	if json.Unmarshal(p.out.Bytes(), &doc) == nil && (doc.Msg != "" || len(doc.Errors) > 0) {
		told := doc.Msg
		if len(doc.Errors) > 0 {
			told += ": " + doc.Errors[0].Message
		}
		return took, told
	}
	if s := strings.TrimSpace(p.errb.String()); s != "" {
		return took, s
	}
	return took, fmt.Sprintf("exit %d", p.code)
}

// server is a registry this program serves.
type server struct {
	l   net.Listener
	srv *http.Server
}

func serve(h http.Handler) (*server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("a registry of the bench: %w", err)
	}
	s := &server{l: l, srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

func (s *server) Addr() net.Addr { return s.l.Addr() }
func (s *server) Close()         { _ = s.srv.Close() }

const (
	manifestType = "application/vnd.oci.image.manifest.v1+json"
	zarfConfig   = "application/vnd.zarf.config.v1+json"
	layerType    = "application/vnd.zarf.layer.v1.blob"
)

// dripRegistry serves packages drip/pkg-NN:1.0.0 whose manifest names a
// checksums.txt layer of claimed bytes (its digest that of as many zero
// bytes) and sends that blob one byte every `every`.
type dripRegistry struct {
	packages int
	claimed  int64
	every    time.Duration
	once     sync.Once
	digest   string
}

func (r *dripRegistry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.once.Do(func() {
		h := sha256.New()
		_, _ = h.Write(make([]byte, r.claimed))
		r.digest = fmt.Sprintf("sha256:%x", h.Sum(nil))
	})
	p := req.URL.Path
	switch {
	case p == "/v2/" || p == "/v2":
		w.WriteHeader(http.StatusOK)
	case p == "/v2/_catalog":
		var repos []string
		for i := range r.packages {
			repos = append(repos, fmt.Sprintf("drip/pkg-%02d", i))
		}
		writeJSON(w, map[string]any{"repositories": repos})
	case strings.HasSuffix(p, "/tags/list"):
		writeJSON(w, map[string]any{"name": strings.TrimSuffix(strings.TrimPrefix(p, "/v2/"), "/tags/list"), "tags": []string{"1.0.0"}})
	case strings.Contains(p, "/manifests/"):
		config := []byte("{}")
		m, _ := json.Marshal(map[string]any{
			"schemaVersion": 2, "mediaType": manifestType,
			"config": map[string]any{"mediaType": zarfConfig, "digest": fmt.Sprintf("sha256:%x", sha256.Sum256(config)), "size": len(config)},
			"layers": []any{map[string]any{"mediaType": layerType, "digest": r.digest, "size": r.claimed, "annotations": map[string]string{"org.opencontainers.image.title": "checksums.txt"}}},
		})
		w.Header().Set("Content-Type", manifestType)
		w.Header().Set("Docker-Content-Digest", fmt.Sprintf("sha256:%x", sha256.Sum256(m)))
		w.Header().Set("Content-Length", strconv.Itoa(len(m)))
		if req.Method != http.MethodHead {
			_, _ = w.Write(m)
		}
	case strings.Contains(p, "/blobs/"):
		w.Header().Set("Content-Length", strconv.FormatInt(r.claimed, 10))
		w.WriteHeader(http.StatusOK)
		fl, _ := w.(http.Flusher)
		for range r.claimed {
			if _, err := w.Write([]byte{0}); err != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
			select {
			case <-time.After(r.every):
			case <-req.Context().Done():
				return
			}
		}
	default:
		http.NotFound(w, req)
	}
}

// listingRegistry lists repos repositories list/r-NNN of tags tags each,
// page by page as asked (n, last), made up as they are asked for; every
// manifest is unknown.
type listingRegistry struct{ repos, tags int }

func (r *listingRegistry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	p := req.URL.Path
	n, _ := strconv.Atoi(req.URL.Query().Get("n"))
	if n <= 0 || n > 1000 {
		n = 1000
	}
	last := req.URL.Query().Get("last")
	switch {
	case p == "/v2/" || p == "/v2":
		w.WriteHeader(http.StatusOK)
	case p == "/v2/_catalog":
		page, more := pageOf(r.repos, func(i int) string { return fmt.Sprintf("list/r-%03d", i) }, n, last)
		if more {
			w.Header().Set("Link", fmt.Sprintf(`</v2/_catalog?n=%d&last=%s>; rel="next"`, n, page[len(page)-1]))
		}
		writeJSON(w, map[string]any{"repositories": page})
	case strings.HasSuffix(p, "/tags/list"):
		name := strings.TrimSuffix(strings.TrimPrefix(p, "/v2/"), "/tags/list")
		page, more := pageOf(r.tags, func(i int) string { return fmt.Sprintf("t-%05d", i) }, n, last)
		if more {
			w.Header().Set("Link", fmt.Sprintf(`</v2/%s/tags/list?n=%d&last=%s>; rel="next"`, name, n, page[len(page)-1]))
		}
		writeJSON(w, map[string]any{"name": name, "tags": page})
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}`))
	}
}

// pageOf is the page of count names (name(i), in order) after last, of at
// most n, and whether more follow.
func pageOf(count int, name func(int) string, n int, last string) ([]string, bool) {
	start := 0
	if last != "" {
		for i := range count {
			if name(i) == last {
				start = i + 1
				break
			}
		}
	}
	end := min(start+n, count)
	var page []string
	for i := start; i < end; i++ {
		page = append(page, name(i))
	}
	return page, end < count
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}
