package cli

import (
	"context"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/colonel-byte/zarf-planner/caller"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// choicesOf annotates a flag with the values it accepts, from its
// option's declaration (the choices tag): completion offers them.
const choicesOf = "zarf-planner/choices"

// namesOf annotates a flag whose value names packages with where in the
// value it does (options.NamesItems, NamesKeys, NamesValues, from the
// option's names tag): completion offers the package names of the
// sources on the command line there.
const namesOf = "zarf-planner/names"

// sourcesFrom annotates a command whose sources are not its first
// arguments with the index of the first one (why NAME DIR: "1").
const sourcesFrom = "zarf-planner/sources-from"

// completionTimeout bounds finding the package names to offer: a shell
// waits for completion, so past it nothing is offered (a cold directory
// of large archives, a daemon that does not answer). Tests shorten it.
var completionTimeout = 2 * time.Second

// completeValues registers, for every flag of cmd and the commands below
// it that declares the values it accepts (a format flag's formats, an
// option's choices), a shell completion offering those values and no
// file names; and for every flag whose value names packages, one
// offering the package names of the sources given. The values are the
// flags' own annotations, so completion offers what the flag accepts and
// nothing listed by hand.
func completeValues(cmd *cobra.Command) {
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if where := f.Annotations[namesOf]; len(where) == 1 {
			// A flag registered twice is a mistake of this package that
			// its tests find; never a user's.
			_ = cmd.RegisterFlagCompletionFunc(f.Name, completeNames(where[0]))
			return
		}
		values := f.Annotations[formatsOf]
		if len(values) == 0 {
			values = f.Annotations[choicesOf]
		}
		if len(values) == 0 {
			return
		}
		_ = cmd.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	})
	for _, c := range cmd.Commands() {
		completeValues(c)
	}
}

// completeNames offers the package names of the command line's sources
// where a flag's value holds them: the items of a comma-separated list,
// the key of a KEY=VALUE (then "=" follows, no space), or its value.
func completeNames(where string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		prefix, suffix := "", ""
		var given []string // the list's items already written
		directive := cobra.ShellCompDirectiveNoFileComp
		switch where {
		case options.NamesItems:
			if i := strings.LastIndex(toComplete, ","); i >= 0 {
				prefix = toComplete[:i+1]
			}
			given = strings.Split(prefix, ",")
		case options.NamesKeys:
			if strings.Contains(toComplete, "=") {
				return nil, directive // the value: a priority or a range
			}
			suffix = "="
			directive |= cobra.ShellCompDirectiveNoSpace
		case options.NamesValues:
			key, _, ok := strings.Cut(toComplete, "=")
			if !ok {
				return nil, directive // the key: a group id or an alias set
			}
			prefix = key + "="
		}
		var out []cobra.Completion
		for _, n := range packageNames(cmd, args) {
			if !slices.Contains(given, n) {
				out = append(out, prefix+n+suffix)
			}
		}
		return out, directive
	}
}

// completeNameArg completes a command's package name argument (why
// NAME): the package names of the sources given, else of the working
// directory when it holds archives; the arguments after it are files.
func completeNameArg(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	return packageNames(cmd, args), cobra.ShellCompDirectiveNoFileComp
}

// packageNames are the names of the packages in the directories the
// command line gives (its source arguments and --sources; registry
// sources are not reached for completion), else in the working
// directory when it holds archive candidates: asked of the backend (the
// daemon, else this process) with the cache, so a warm directory costs
// a stat per archive. Within completionTimeout, or none: a failure or a
// late answer offers nothing, and prints nothing.
func packageNames(cmd *cobra.Command, args []string) []string {
	from, _ := strconv.Atoi(cmd.Annotations[sourcesFrom])
	var dirs []string
	for _, a := range args[min(from, len(args)):] {
		if !strings.HasPrefix(a, caller.RegistryScheme) {
			dirs = append(dirs, a)
		}
	}
	// Completion may parse a repeated list flag twice: each source once.
	for _, s := range strings.Split(flagString(cmd, "sources"), ",") {
		if s != "" && !strings.HasPrefix(s, caller.RegistryScheme) && !slices.Contains(dirs, s) {
			dirs = append(dirs, s)
		}
	}
	if len(dirs) == 0 {
		if found, err := inspect.CandidatePaths("."); err != nil || len(found) == 0 {
			return nil
		}
		dirs = []string{"."}
	}
	stateDir, cacheDir := flagString(cmd, "state-dir"), flagString(cmd, "cache-dir")
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	found := make(chan []string, 1)
	go func() { found <- namesIn(ctx, stateDir, cacheDir, dirs) }()
	select {
	case names := <-found:
		return names
	case <-ctx.Done():
		return nil // the read goes on being cancelled; the shell waits no longer
	}
}

// namesIn asks the backend for the inspection of dirs and returns the
// package names it holds, sorted, each once; nil on any failure.
func namesIn(ctx context.Context, stateDir, cacheDir string, dirs []string) []string {
	req, err := caller.Inspect{Path: dirs[0], Sources: dirs[1:], Cache: options.Cache{UseCache: true, CacheDir: absPath(cacheDir)},
		Registry: contract.RegistryAccess{Caller: options.CLICaller}}.Request()
	if err != nil {
		return nil
	}
	b, err := openBackendTo(ctx, stateDir, io.Discard)
	if err != nil {
		return nil
	}
	defer b.close()
	resp, err := b.Inspect(ctx, req)
	if err != nil {
		return nil
	}
	in, err := resp.Inspection()
	if err != nil {
		return nil
	}
	var names []string
	for _, c := range in.Candidates {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// flagString is the value of cmd's flag name, "" when it has none.
func flagString(cmd *cobra.Command, name string) string {
	if f := cmd.Flags().Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}
