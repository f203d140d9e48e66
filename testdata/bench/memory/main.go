// Command memory measures the peak memory (RSS) of reading a directory of
// crafted archives built to make the reader hold as much as it may: every
// member at its cap (zarf.yaml, checksums.txt, documentation.tar, each of
// tiny compressed size), zstd frames asking for the largest window
// allowed, decompression bombs, split packages claiming huge counts,
// zarf.yaml nested 20,000 deep, sparse tars of a 16 GiB hole, .tar.zst
// files of 2 GiB of skippable frames stored as holes, and (a few, as they
// are stored) .tar.zst files padded with skippable frames past
// inspect.NoDataAllowance. It
// runs `zarf-planner inspect` on the directory with no cache at
// GOMAXPROCS=8 (more readers than this machine has cores), and on the
// example bundle for reference, and prints both peaks.
//
//	go run ./testdata/bench/memory [-bin bin/zarf-planner] [-n 64]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

func main() {
	bin := flag.String("bin", "bin/zarf-planner", "the zarf-planner binary")
	n := flag.Int("n", 64, "crafted archives of each kind")
	flag.Parse()
	if err := run(*bin, *n); err != nil {
		fmt.Fprintln(os.Stderr, "memory:", err)
		os.Exit(1)
	}
}

func run(bin string, n int) error {
	dir, err := os.MkdirTemp("", "zp-memory")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	size, err := craftDir(dir, n)
	if err != nil {
		return err
	}
	ref, _ := filepath.Abs("examples/bundles/reference-stack")
	refRSS, err := peak(bin, ref)
	if err != nil {
		return err
	}
	rss, err := peak(bin, dir)
	if err != nil {
		return err
	}
	fmt.Printf("crafted directory: %d archives, %.1f MiB on disk\n", 8*n+padded(n), float64(size)/(1<<20))
	fmt.Printf("peak RSS, example bundle (6 archives):     %6.1f MiB\n", float64(refRSS)/(1<<20))
	fmt.Printf("peak RSS, crafted directory, GOMAXPROCS=8: %6.1f MiB (goal: at most 256 MiB)\n", float64(rss)/(1<<20))
	return nil
}

// padded is how many archives padded past inspect.NoDataAllowance
// craftDir writes: each stores its padding.
func padded(n int) int { return max(1, n/16) }

// craftDir writes n archives of each hostile kind into dir (padded(n) of
// the padded kind) and returns what they store on disk.
func craftDir(dir string, n int) (int64, error) {
	// A zarf.yaml at its cap, of many small keys (the costliest to parse).
	var keys strings.Builder
	for i := 0; keys.Len() < inspect.MaxZarfYAML-64<<10; i++ {
		fmt.Fprintf(&keys, "  k%d: v\n", i)
	}
	fat := func(name string) craft.Package {
		p := craft.Package{Name: name, Version: "1.0.0", Prerequisites: craft.Doc(name, "1.0.0", "")}
		p.Tamper = func(ms *[]craft.Member) {
			for i, m := range *ms {
				switch m.Name {
				case "zarf.yaml":
					(*ms)[i].Body = append(m.Body, []byte("x:\n"+keys.String())...)
				case "checksums.txt":
					(*ms)[i].Body = append(m.Body, bytes.Repeat([]byte("#\n"), (inspect.MaxChecksums-len(m.Body))/2)...)
				case "documentation.tar":
					(*ms)[i].Body = craft.Tar([]craft.Member{{Name: "padding", Zeros: inspect.MaxDocumentationTar - 4<<10}})
				}
			}
		}
		return p
	}
	window := append([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 16 << 3}, make([]byte, 4)...) // a 64 MiB window, then nothing
	bomb := craft.Bomb(inspect.InflationAllowance + 64<<20)
	var total int64
	write := func(name string, b []byte) error {
		total += int64(len(b))
		return os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	deep := craft.Package{Name: "deep", Version: "1.0.0"}
	deep.Tamper = func(ms *[]craft.Member) {
		last := &(*ms)[len(*ms)-1] // zarf.yaml
		last.Body = append(last.Body, craft.Nested("x", craft.BlockAndFlow, 9999)...)
	}
	deepZst := deep.Zst()
	sparse := craft.Package{Name: "sparse", Version: "1.0.0"}.Members()
	sparse = append(sparse[:len(sparse)-1:len(sparse)-1], craft.Member{Name: "images/blob", Zeros: 16 << 30}, sparse[len(sparse)-1])
	small := craft.Package{Name: "skip", Version: "1.0.0"}.Zst()
	stored := func(name string) error { // a file written in place: count what it stores
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join(dir, name), &st); err != nil {
			return err
		}
		total += st.Blocks * 512
		return nil
	}
	for i := range padded(n) {
		name := fmt.Sprintf("pad-%03d.tar.zst", i)
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return 0, err
		}
		_, _ = f.Write(small)
		_, err = io.Copy(f, craft.Skippable(inspect.NoDataAllowance+1<<20))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return 0, err
		}
		if err := stored(name); err != nil {
			return 0, err
		}
	}
	for i := range n {
		if err := write(fmt.Sprintf("deep-%03d.tar.zst", i), deepZst); err != nil {
			return 0, err
		}
		name := fmt.Sprintf("sparse-%03d.tar", i)
		if err := craft.SparseTar(filepath.Join(dir, name), sparse); err != nil {
			return 0, err
		}
		if err := stored(name); err != nil {
			return 0, err
		}
		name = fmt.Sprintf("skip-%03d.tar.zst", i)
		if err := sparseSkippable(filepath.Join(dir, name), small, 2); err != nil {
			return 0, err
		}
		if err := stored(name); err != nil {
			return 0, err
		}
		if err := write(fmt.Sprintf("fat-%03d.tar.zst", i), fat(fmt.Sprintf("fat-%d", i)).Zst()); err != nil {
			return 0, err
		}
		if err := write(fmt.Sprintf("window-%03d.tar.zst", i), window); err != nil {
			return 0, err
		}
		if err := write(fmt.Sprintf("bomb-%03d.tar.zst", i), bomb); err != nil {
			return 0, err
		}
		if err := write(fmt.Sprintf("split-%03d.tar.zst.part000", i), []byte(`{"Sha256Sum":"`+strings.Repeat("0", 64)+`","Bytes":1099511627776,"Count":1000000000}`)); err != nil {
			return 0, err
		}
		if err := write(fmt.Sprintf("plain-%03d.tar", i), fat(fmt.Sprintf("plain-%d", i)).Tar()[:1<<10]); err != nil {
			return 0, err
		}
	}
	return total, nil
}

// sparseSkippable writes archive followed by frames skippable zstd frames
// of 1 GiB each, their payloads holes.
func sparseSkippable(path string, archive []byte, frames int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(archive); err != nil {
		return err
	}
	end := int64(len(archive))
	for range frames {
		if _, err := io.CopyN(f, craft.Skippable(8+1<<30), 8); err != nil { // the frame's header
			return err
		}
		end += 8 + 1<<30
		if _, err := f.Seek(end, io.SeekStart); err != nil {
			return err
		}
	}
	if err := f.Truncate(end); err != nil {
		return err
	}
	return f.Close()
}

// peak runs `zarf-planner inspect DIR` with no cache at GOMAXPROCS=8 and
// returns its peak RSS in bytes, as GNU time reports it. (This program's
// own rusage of its child would count this program's memory too: a forked
// child starts with its parent's high-water mark.)
func peak(bin, dir string) (int64, error) {
	state, err := os.MkdirTemp("", "zp-memory-state")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(state)
	report := filepath.Join(state, "time")
	cmd := exec.Command("/usr/bin/time", "-f", "%M", "-o", report, bin, "inspect", dir, "-o", "json", "--use-cache=false", "--state-dir", state)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=8", "ZARF_PLANNER_CACHE_DIR="+filepath.Join(state, "cache"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &out
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s inspect %s: %v\n%s (install GNU time: apt-get install time)", bin, dir, err, out.String())
	}
	b, err := os.ReadFile(report)
	if err != nil {
		return 0, err
	}
	kb, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("GNU time said %q", b)
	}
	return kb << 10, nil
}
