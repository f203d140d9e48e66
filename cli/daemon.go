package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/zarf-planner/daemon/lifecycle"
)

func newDaemon() *cobra.Command {
	var stateDir string
	cmd := &cobra.Command{Use: "daemon", Short: "Inspect or stop the running daemon"}
	cmd.PersistentFlags().StringVar(&stateDir, "state-dir", "", "state directory (env "+lifecycle.EnvStateDir+"; default $XDG_RUNTIME_DIR/zarf-planner or the user cache dir)")
	dir := func() (string, error) {
		if stateDir != "" {
			return filepath.Abs(stateDir)
		}
		return lifecycle.DefaultStateDir()
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "Show the daemon of the state directory (exit 1 when none answers)",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := dir()
			if err != nil {
				return err
			}
			s, st, err := lifecycle.Status(cmd.Context(), d)
			var refused *lifecycle.StateDirError
			if errors.As(err, &refused) {
				return err
			}
			if err != nil {
				return fmt.Errorf("no daemon answers for %s: %w", d, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "pid %d, build %s, protocol %d, up since %s, %d requests (%d in flight), %d goroutines\narchives: %d read in full, %d answered by stat from the cache, %d found in the cache by content\nsocket %s\nlog %s\n",
				st.Pid, st.BuildID, st.ProtocolVersion, s.Started.Format(time.RFC3339), st.Requests, st.Inflight, st.Goroutines, st.ArchivesRead, st.CacheHits, st.ContentHits, s.Addr, filepath.Join(d, lifecycle.LogFile))
			return nil
		},
	}
	stop := &cobra.Command{
		Use:   "stop",
		Short: "Ask the daemon to finish in-flight requests and exit",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := dir()
			if err != nil {
				return err
			}
			pid, err := lifecycle.Stop(cmd.Context(), d, 30*time.Second)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "stopped daemon pid %d\n", pid)
			return nil
		},
	}
	cmd.AddCommand(status, stop)
	return cmd
}
