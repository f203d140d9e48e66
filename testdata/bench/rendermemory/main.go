// Command rendermemory measures the peak memory (RSS) of reading a
// directory of archives whose charts render as much as a chart may:
// `zarf-planner catalog` with no cache at GOMAXPROCS=8, its chart
// renderer processes counted with it. Each archive is a few KB; its chart
// renders just under claims.MaxRendered (5,000 documents of about 3 KB in
// one template, the most a template file may hold), or without end (a
// template that holds strings until its renderer is stopped).
//
// With -daemon, each directory is read through a daemon (`zarf-planner
// serve`) started for it, which is measured instead of the caller.
//
// It samples /proc every few milliseconds: the process and its renderers
// (its children) summed. Two figures are printed per directory: the
// largest sum of their resident sets seen (VmRSS), and a bound that no
// sample can miss: the largest sum, over the processes alive at a sample,
// of each one's high-water mark (VmHWM), which is at least what they held
// together at any moment between samples they all lived through. It
// fails (exit status 1) when a bound passes the goal, 256 MiB.
//
//	go run ./testdata/bench/rendermemory [-bin bin/zarf-planner] [-daemon]
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

// A chart of one template: 5,000 ConfigMaps of about 3 KB (15 MiB).
var big = rendertest.ConfigMaps(5000, 3100, "")

// A template that holds 1 MB strings until it is stopped.
const runaway = `{{- $l := list }}{{- range until 100000 }}{{ $l = append $l (repeat 10000 (repeat 100 "x")) }}{{- end }}
kind: ConfigMap
`

func main() {
	bin := flag.String("bin", "bin/zarf-planner", "the zarf-planner binary (its renderer beside it)")
	keep := flag.Bool("keep", false, "keep the directories made, and say where")
	daemon := flag.Bool("daemon", false, "read each directory through a daemon (zarf-planner serve) started for it, and measure the daemon")
	flag.Parse()
	if err := run(*bin, *keep, *daemon); err != nil {
		fmt.Fprintln(os.Stderr, "rendermemory:", err)
		os.Exit(1)
	}
}

func run(bin string, keep, daemon bool) error {
	// Each case is the directories of its callers (one but through a
	// daemon, which serves them at once), each the templates of its
	// charts, an archive each. Each chart ends with a comment of its own,
	// so no two are the same chart (which would render once: claims.Memo).
	cases := []struct {
		name    string
		callers [][]string
	}{
		{"one chart rendering 15 MiB", [][]string{{big}}},
		{"three charts rendering 15 MiB, an archive each", [][]string{{big, big, big}}},
		{"eight charts rendering 15 MiB, an archive each", [][]string{{big, big, big, big, big, big, big, big}}},
		{"a runaway chart", [][]string{{runaway}}},
		{"a runaway chart beside a chart rendering 15 MiB", [][]string{{runaway, big}}},
	}
	if daemon {
		cases = append(cases, struct {
			name    string
			callers [][]string
		}{"two callers at once, each a chart rendering 15 MiB", [][]string{{big}, {big}}})
	}
	var over []string
	how := "in process"
	if daemon {
		how = "through a daemon"
	}
	fmt.Printf("%-50s %14s %16s %8s %10s %8s\n", "directory ("+how+", GOMAXPROCS=8, no cache)", "peak RSS, MiB", "bound (Σ VmHWM)", "daemon", "renderer", "seconds")
	for _, c := range cases {
		var dirs []string
		for k, charts := range c.callers {
			dir, err := os.MkdirTemp("", "zp-rendermemory")
			if err != nil {
				return err
			}
			dirs = append(dirs, dir)
			for i, tpl := range charts {
				if err := writeChartPackage(dir, fmt.Sprintf("chart%d", i), tpl+fmt.Sprintf("# chart %d of caller %d\n", i, k)); err != nil {
					return err
				}
			}
		}
		m, err := measure(bin, dirs, daemon)
		for _, dir := range dirs {
			if keep {
				fmt.Println("kept", dir)
			} else {
				os.RemoveAll(dir)
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		fmt.Printf("%-50s %14.1f %16.1f %8.1f %10.1f %8.1f\n", c.name, mib(m.rss), mib(m.hwm), mib(m.daemon), mib(m.renderer), m.took.Seconds())
		if m.unrendered != "" {
			fmt.Printf("  not rendered: %s\n", m.unrendered)
		}
		if m.hwm > goal>>10 {
			over = append(over, c.name)
		}
	}
	if len(over) > 0 {
		return fmt.Errorf("past the goal of %d MiB: %s", goal>>20, strings.Join(over, "; "))
	}
	return nil
}

// goal is what the process and its renderers may hold together.
const goal = 256 << 20

func mib(kb int64) float64 { return float64(kb) / 1024 }

// writeChartPackage writes a package, name, of one chart made of
// template, into dir.
func writeChartPackage(dir, name, template string) error {
	tgz, err := chartArchive(template)
	if err != nil {
		return err
	}
	comp := craft.Tar([]craft.Member{{Name: "main/charts/demo-1.0.0.tgz", Body: tgz}})
	p := craft.Package{Name: name, Version: "1.0.0", Extra: []craft.Member{{Name: "components/main.tar", Body: comp}},
		Tamper: func(ms *[]craft.Member) {
			for i, m := range *ms {
				if m.Name == "zarf.yaml" {
					(*ms)[i].Body = append(slices.Clone(m.Body), "  charts:\n  - name: demo\n    version: 1.0.0\n    namespace: demo\n"...)
				}
			}
		}}
	return os.WriteFile(filepath.Join(dir, "zarf-package-"+name+"-amd64-1.0.0.tar.zst"), p.Zst(), 0o644)
}

// chartArchive packs a chart named demo of one template.
func chartArchive(template string) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range []struct{ name, body string }{
		{"demo/Chart.yaml", "apiVersion: v2\nname: demo\nversion: 1.0.0\n"},
		{"demo/templates/t.yaml", template},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := io.WriteString(tw, f.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// measurement is one run's peaks (KiB), time, and the reasons given for
// charts not rendered.
type measurement struct {
	rss, hwm int64
	// daemon and renderer are the process's own high-water mark and
	// the largest of its renderers'.
	daemon, renderer int64
	took             time.Duration
	unrendered       string
}

// measure runs `zarf-planner catalog DIR` (which reads what inspect
// reads and reports the charts not rendered) with no cache at GOMAXPROCS=8
// and samples it and its children until it ends. Through a daemon, it
// starts `zarf-planner serve` at GOMAXPROCS=8 first, one catalog per
// directory asks it at once, and the daemon and its children are
// sampled until they all end; the daemon is stopped after.
func measure(bin string, dirs []string, daemon bool) (_ measurement, err error) {
	state, err := os.MkdirTemp("", "zp-rendermemory-state")
	if err != nil {
		return measurement{}, err
	}
	defer os.RemoveAll(state)
	env := append(os.Environ(), "GOMAXPROCS=8", "ZARF_PLANNER_CACHE_DIR="+filepath.Join(state, "cache"))
	root := 0
	if daemon {
		serve := exec.Command(bin, "serve", "--state-dir", state, "--idle-timeout", "5m")
		serve.Env = env
		if err := serve.Start(); err != nil {
			return measurement{}, err
		}
		defer func() {
			_ = serve.Process.Signal(syscall.SIGTERM)
			err = errors.Join(err, serve.Wait())
		}()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(state, "daemon.json")); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return measurement{}, errors.New("the daemon did not publish its reattach config within 30 s")
			}
		}
		root = serve.Process.Pid
	}
	done := make(chan error, len(dirs))
	outs := make([]*bytes.Buffer, len(dirs))
	began := time.Now()
	for i, dir := range dirs {
		cmd := exec.Command(bin, "catalog", dir, "-o", "json", "--use-cache=false", "--state-dir", state)
		cmd.Env = env
		var errs bytes.Buffer
		outs[i] = &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = outs[i], &errs
		if err := cmd.Start(); err != nil {
			return measurement{}, err
		}
		if root == 0 {
			root = cmd.Process.Pid // in process: one caller
		}
		go func() {
			err := cmd.Wait()
			if err != nil {
				err = fmt.Errorf("%s catalog %s: %v\n%s", bin, dir, err, errs.String())
			}
			done <- err
		}()
	}
	var m measurement
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	left := len(dirs)
	for {
		select {
		case err := <-done:
			if err != nil {
				return m, err
			}
			if left--; left > 0 {
				continue
			}
			m.took = time.Since(began)
			var reasons []string
			for _, out := range outs {
				if r := unrendered(out.String()); r != "" {
					reasons = append(reasons, r)
				}
			}
			m.unrendered = strings.Join(reasons, "; ")
			return m, nil
		case <-tick.C:
			var rss, hwm int64
			for _, pid := range append(childrenOf(root), root) {
				r, h := status(pid)
				rss += r
				hwm += h
				if pid == root {
					m.daemon = max(m.daemon, h)
				} else {
					m.renderer = max(m.renderer, h)
				}
			}
			m.rss, m.hwm = max(m.rss, rss), max(m.hwm, hwm)
		}
	}
}

// childrenOf are the processes whose parent is pid.
func childrenOf(pid int) []int {
	var out []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
			child, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
			out = append(out, child)
		}
	}
	return out
}

// status is a process's VmRSS and VmHWM, in KiB (0 once it is gone).
func status(pid int) (rss, hwm int64) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			hwm = n
		}
	}
	return rss, hwm
}

// unrendered are the reasons in the catalog's unknown claims of
// kind render, each cut short.
func unrendered(out string) string {
	var reasons []string
	for _, part := range strings.Split(out, `"reason":"`)[1:] {
		r, _, _ := strings.Cut(part, `"`)
		if strings.Contains(r, "could not be rendered") {
			reasons = append(reasons, r[:min(len(r), 200)])
		}
	}
	return strings.Join(reasons, "; ")
}
