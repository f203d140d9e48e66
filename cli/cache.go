package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/colonel-byte/zarf-planner/cache"
	"github.com/colonel-byte/zarf-planner/caller"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/daemon/server"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/render"
)

func newCache() *cobra.Command {
	cmd := &cobra.Command{Use: "cache", Short: "Warm, inspect or trim the archive cache"}
	cmd.AddCommand(newCacheWarm(), newCacheStats(), newCacheGC())
	return cmd
}

func newCacheWarm() *cobra.Command {
	var o options.Cache
	var read options.Read
	var stateDir string
	var prune, dryRun bool
	var output string
	cmd := &cobra.Command{
		Use:   "warm DIR|oci://HOST/NAMESPACE...",
		Short: "Read every archive of the directories into the cache, before going air-gapped",
		Long: "Reads each archive once and records what planning needs, so a later plan of an\n" +
			"unchanged directory only stats its files. Of a registry source (oci://HOST/NAMESPACE,\n" +
			"or one oci://HOST/NAMESPACE/NAME:TAG) it caches each package's metadata by its\n" +
			"manifest's digest, so a later plan of it fetches no manifest and no blob. Uses the\n" +
			"running daemon when there is one, else opens the cache itself.",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &UsageError{fmt.Errorf("expected one or more directories or registry sources")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "json" && output != "text" {
				return &UsageError{fmt.Errorf("-o must be json or text, not %q", output)}
			}
			req, err := caller.Cache{Paths: args, CacheDir: o.CacheDir, Prune: prune, DryRun: dryRun, Registry: contract.RegistryAccessOf(read, options.CLICaller)}.Request()
			if err != nil {
				return err
			}
			b, err := openBackend(cmd, stateDir)
			if err != nil {
				return err
			}
			defer b.close()
			resp, err := b.Cache(cmd.Context(), req)
			if err != nil {
				return fmt.Errorf("warming in %s: %w", b.who, err)
			}
			w, err := resp.Warmed()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if output == "json" {
				b, err := json.Marshal(w)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(out, "%s\n", b)
				return err
			}
			verb := "added"
			if dryRun {
				verb = "would add"
			}
			fmt.Fprintf(out, "%s %d, removed %d, unchanged %d; the cache holds %d archives (%s)\n", verb, len(w.Added), len(w.Removed), w.Unchanged, w.Cache.Entries, w.Cache.Dir)
			for _, e := range w.Unusable {
				render.Printf(out, "not cached %s: %s\n", filepath.Base(e.Path), e.Reason)
			}
			return nil
		},
	}
	bind(cmd.Flags(), &o, "cache_dir")
	options.SetDefaults(&read)
	bind(cmd.Flags(), &read, "plain_http", "insecure_skip_tls_verify", "registry_ca_file", "registry_timeout", "render_budget", "read_budget")
	registerStateDir(cmd, &stateDir)
	cmd.Flags().BoolVar(&prune, "prune", false, "also forget cached archives that are no longer in the directories (or no longer listed under a registry namespace)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "report what would change; write nothing")
	// --check, the former spelling: --check is a barrier's check.
	former := cmd.Flags().VarPF((*boolValue)(&dryRun), "check", "", "report what would change; write nothing")
	former.NoOptDefVal, former.Hidden = "true", true
	former.Annotations = map[string][]string{aliasOf: {"--dry-run"}}
	formatFlag(cmd.Flags(), &output, cacheOutputs, "", nil)
	return cmd
}

// openCache opens the cache dir ("" for the default) in this process.
func openCache(dir string) (*cache.Cache, error) {
	if dir == "" {
		var err error
		if dir, err = cache.DefaultDir(); err != nil {
			return nil, err
		}
	}
	return cache.Open(dir, func(w string) { fmt.Fprintf(os.Stderr, "zarf-planner: %s\n", w) })
}

func newCacheStats() *cobra.Command {
	var o options.Cache
	var stateDir string
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Show what the cache holds (and the daemon's hit counts when one runs)",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			b, err := openBackend(cmd, stateDir)
			if err != nil {
				return err
			}
			defer b.close()
			if _, inProcess := b.Planner.(*server.Server); !inProcess {
				st, err := b.Status(cmd.Context())
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "daemon pid %d: %d archives read in full, %d answered by stat from the cache, %d found in the cache by content\n", st.Pid, st.ArchivesRead, st.CacheHits, st.ContentHits)
			}
			req, err := caller.Cache{CacheDir: o.CacheDir, DryRun: true}.Request()
			if err != nil {
				return err
			}
			resp, err := b.Cache(cmd.Context(), req)
			if err != nil {
				return fmt.Errorf("reading the cache in %s: %w", b.who, err)
			}
			w, err := resp.Warmed()
			if err != nil {
				return err
			}
			printStats(out, w.Cache)
			return nil
		},
	}
	bind(cmd.Flags(), &o, "cache_dir")
	registerStateDir(cmd, &stateDir)
	return cmd
}

func printStats(w io.Writer, st cache.Stats) {
	fmt.Fprintf(w, "cache %s (schema %d): %d archives under %d paths, %s on disk\n", st.Dir, st.Schema, st.Entries, st.Paths, humanBytes(st.Bytes))
}

func newCacheGC() *cobra.Command {
	var o options.Cache
	var maxSize string
	var maxAge time.Duration
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Drop cache entries unused for --max-age, then the least recently used beyond --max-size",
		Long:  "Opens the cache itself: stop the daemon first (zarf-planner daemon stop) if one runs.",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			limit, err := parseBytes(maxSize)
			if err != nil {
				return &UsageError{err}
			}
			if limit == 0 && maxAge == 0 {
				return &UsageError{fmt.Errorf("give --max-size, --max-age or both")}
			}
			c, err := openCache(absPath(o.CacheDir))
			if err != nil {
				return err
			}
			defer c.Close()
			n, err := c.GC(limit, maxAge)
			if err != nil {
				return err
			}
			st, err := c.Stats()
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "dropped %d archives\n", n)
			printStats(cmd.OutOrStdout(), st)
			return nil
		},
	}
	bind(cmd.Flags(), &o, "cache_dir")
	cmd.Flags().StringVar(&maxSize, "max-size", "", "keep at most this much (e.g. 500MB, 2GiB)")
	cmd.Flags().DurationVar(&maxAge, "max-age", 0, "drop entries not used for this long (e.g. 720h)")
	return cmd
}

// parseBytes reads sizes such as 512, 64KiB, 500MB, 2GiB.
func parseBytes(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"B", 1}}
	num, mult := s, int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	var n int64
	if _, err := fmt.Sscanf(strings.TrimSpace(num), "%d", &n); err != nil || n < 0 {
		return 0, fmt.Errorf("--max-size %q is not a size such as 500MB or 2GiB", s)
	}
	return n * mult, nil
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// progress draws archives done/total, bytes and rate: a bar redrawn in
// place on a terminal, plain lines (at most one a second) otherwise.
type progress struct {
	w     io.Writer
	tty   bool
	start time.Time
	last  time.Time
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, start: time.Now()}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
	}
	return p
}

func (p *progress) update(pr inspect.Progress) {
	if pr.Reading != "" {
		return // an archive begun: the bar counts archives done
	}
	now := time.Now()
	if !p.tty && now.Sub(p.last) < time.Second && pr.Done != pr.Total {
		return
	}
	p.last = now
	rate := float64(pr.Bytes) / max(now.Sub(p.start).Seconds(), 0.001)
	line := fmt.Sprintf("%d/%d archives, %s, %s/s", pr.Done, pr.Total, humanBytes(pr.Bytes), humanBytes(int64(rate)))
	if p.tty {
		width := 30
		filled := width * pr.Done / max(pr.Total, 1)
		fmt.Fprintf(p.w, "\r[%s%s] %s", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), line)
		if pr.Done == pr.Total {
			fmt.Fprintln(p.w)
		}
		return
	}
	fmt.Fprintf(p.w, "warming: %s\n", line)
}
