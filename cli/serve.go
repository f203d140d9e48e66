package cli

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/colonel-byte/zarf-planner/cache"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/daemon/lifecycle"
	"github.com/colonel-byte/zarf-planner/daemon/server"
)

func newServe() *cobra.Command {
	var stateDir, cacheDir, openCache string
	var idle time.Duration
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the daemon the Ansible modules reattach to",
		Long: "Serves the Planner over go-plugin (gRPC on a unix socket), publishes its\n" +
			"reattach config in <state-dir>/daemon.json and exits after --idle-timeout\n" +
			"without requests, or on SIGTERM after in-flight requests finish. It opens (and\n" +
			"locks) only the caches its requests use, each on first use, and --open-cache.",
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if err := checkCookie(); err != nil {
				return err
			}
			// Read into --open-cache's default: not passed on to what the
			// daemon starts.
			if err := os.Unsetenv(lifecycle.EnvOpenCache); err != nil {
				return err
			}
			if cacheDir == "" {
				if cacheDir, err = cache.DefaultDir(); err != nil {
					return err
				}
			}
			log := hclog.New(&hclog.LoggerOptions{Name: "zarf-planner", Output: cmd.ErrOrStderr(), Level: hclog.Info})
			d := server.New(server.Config{DefaultCache: cacheDir, Warn: func(w string) { log.Warn(w) }})
			defer func() { err = errors.Join(err, d.Close()) }()
			if openCache != "" {
				d.Preopen(openCache)
			}
			return lifecycle.Serve(cmd.Context(), lifecycle.ServeOptions{StateDir: stateDir, IdleTimeout: idle, Impl: d, Logger: log})
		},
	}
	cmd.Flags().StringVar(&stateDir, "state-dir", os.Getenv(lifecycle.EnvStateDir), "state directory (env "+lifecycle.EnvStateDir+"; default $XDG_RUNTIME_DIR/zarf-planner or the user cache dir)")
	cmd.Flags().DurationVar(&idle, "idle-timeout", lifecycle.DefaultIdleTimeout, "exit after this long without a request")
	cmd.Flags().StringVar(&cacheDir, "cache-dir", os.Getenv(cache.EnvDir), "default archive cache directory (env "+cache.EnvDir+"; default under the user cache dir)")
	cmd.Flags().StringVar(&openCache, "open-cache", os.Getenv(lifecycle.EnvOpenCache), "a cache directory to open while starting (env "+lifecycle.EnvOpenCache+", which a caller that starts the daemon sets to the cache its request uses); any other cache is opened, and locked, when a request first uses it")
	return cmd
}

// checkCookie checks go-plugin's handshake cookie when a client set it (a
// client of this build sets it when it starts the daemon; someone running
// `serve` by hand need not), then drops it from the daemon's environment.
func checkCookie() error {
	key, want := contract.Handshake.MagicCookieKey, contract.Handshake.MagicCookieValue
	got, ok := os.LookupEnv(key)
	if !ok {
		return nil
	}
	if got != want {
		return fmt.Errorf("%s is %q, not this build's handshake cookie: whatever started this daemon does not speak its protocol; unset %s to run `serve` by hand", key, got, key)
	}
	return os.Unsetenv(key)
}
