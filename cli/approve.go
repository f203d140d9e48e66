package cli

import (
	"bytes"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/zarf-planner/approval"
	"github.com/colonel-byte/zarf-planner/caller"
	"github.com/colonel-byte/zarf-planner/privdir"
	"github.com/colonel-byte/zarf-planner/savedplan"
)

// maxPrivateKey caps a private key file (a PEM key is a few hundred bytes).
const maxPrivateKey = 64 << 10

func newApprove() *cobra.Command {
	var key string
	cmd := &cobra.Command{
		Use:   "approve PLAN --key KEY",
		Short: "Sign a saved plan as one change board member (a detached sigstore bundle beside it)",
		Long: "Signs the exact bytes of the saved plan PLAN with the cosign private key KEY (its\n" +
			"password in " + approval.EnvPassword + ", as cosign reads it) and writes the approval beside\n" +
			"it, PLAN.approved-by-<key>.sigstore.json: a sigstore bundle, which cosign\n" +
			"verify-blob --bundle and sigstore-go read. A replay (plan_file, verify-plan)\n" +
			"with approval_keys and require_approvals N deploys only when N listed keys\n" +
			"signed these bytes; a plan edited after signing is approved by no one.",
		Args: exactArgs(1, "one saved plan"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if key == "" {
				return &UsageError{fmt.Errorf("--key is required: the cosign private key to sign with")}
			}
			return approve(cmd.ErrOrStderr(), args[0], key, true)
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "the cosign private key (cosign.key) to sign with; its password is "+approval.EnvPassword)
	return cmd
}

// approve signs the saved plan at plan with the private key at key and
// writes the approval beside it. check says whether plan must be read
// back as a saved plan first (it must, unless it was just written).
func approve(stderr io.Writer, plan, key string, check bool) error {
	b, err := privdir.ReadRegular(plan, savedplan.MaxSize, true)
	if err != nil {
		return fmt.Errorf("reading the saved plan: %w", err)
	}
	if check {
		if _, err := savedplan.Decode(plan, bytes.NewReader(b)); err != nil {
			return fmt.Errorf("%s is not a saved plan to approve: %w", plan, err)
		}
	}
	pem, err := privdir.ReadRegular(key, maxPrivateKey, true)
	if err != nil {
		return fmt.Errorf("reading the private key: %w", err)
	}
	s, err := approval.LoadSigner(key, pem, caller.SigningPassword())
	if err != nil {
		return err
	}
	bundle, err := s.Sign(b)
	if err != nil {
		return err
	}
	to := approval.FileName(plan, s.Fingerprint)
	// An approval holds a signature and the plan's digest, nothing of
	// the cluster: readable by whoever replays the plan, as before.
	if _, err := caller.WriteSaved(to, bundle, 0o644, false); err != nil {
		return fmt.Errorf("writing the approval: %w", err)
	}
	fmt.Fprintf(stderr, "zarf-planner: approved %s as %s: %s\n", plan, s.Fingerprint, to)
	return nil
}
