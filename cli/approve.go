package cli

import (
	"bytes"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/zarf-planner/approval"
	"github.com/colonel-byte/zarf-planner/caller"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/privdir"
	"github.com/colonel-byte/zarf-planner/savedplan"
)

// maxPrivateKey caps a private key file (a PEM key is a few hundred bytes).
const maxPrivateKey = 64 << 10

func newApprove() *cobra.Command {
	var key, digest string
	cmd := &cobra.Command{
		Use:   "approve PLAN --key KEY [--digest sha256:HEX]",
		Short: "Sign a saved plan as one change board member (a detached sigstore bundle beside it)",
		Long: "Reads the saved plan PLAN once and signs exactly the bytes read with the cosign\n" +
			"private key KEY (its password in " + approval.EnvPassword + ", as cosign reads it), then writes\n" +
			"the approval beside it, PLAN.approved-by-<key>.sigstore.json: a sigstore bundle,\n" +
			"which cosign verify-blob --bundle and sigstore-go read. It prints the file digest\n" +
			"of the bytes it signed (sha256:HEX of the file, as verify-plan prints it; not\n" +
			"plan_digest, which digests the planning inputs); with --digest it signs nothing\n" +
			"unless PLAN holds the bytes of that digest, the ones reviewed. A replay\n" +
			"(plan_file, verify-plan) with approval_keys and require_approvals N deploys only\n" +
			"when N listed keys signed these bytes; a plan edited after signing is approved\n" +
			"by no one.",
		Args: exactArgs(1, "one saved plan"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if key == "" {
				return &UsageError{fmt.Errorf("--key is required: the cosign private key to sign with")}
			}
			want := ""
			if cmd.Flags().Changed("digest") {
				var err error
				if want, err = approval.ParseDigest(digest); err != nil {
					return &UsageError{fmt.Errorf("--digest: %w", err)}
				}
			}
			return approveFile(cmd.ErrOrStderr(), args[0], key, want)
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "the cosign private key (cosign.key) to sign with; its password is "+approval.EnvPassword)
	cmd.Flags().StringVar(&digest, "digest", "", "the file digest of the plan reviewed (sha256:HEX, as verify-plan prints it): sign only when PLAN holds exactly those bytes")
	return cmd
}

// approveFile reads the saved plan at plan once, checks that it is a
// saved plan and, when want is given, that its bytes have that digest,
// and approves exactly the bytes read (approveBytes).
func approveFile(stderr io.Writer, plan, key, want string) error {
	b, err := privdir.ReadRegular(plan, savedplan.MaxSize, true)
	if err != nil {
		return fmt.Errorf("reading the saved plan: %w", err)
	}
	if got := approval.Digest(b); want != "" && got != want {
		return fmt.Errorf("%s has the file digest %s, not %s given with --digest: it is not the plan reviewed (it changed since, or another file was named); nothing was signed. Review it again: verify-plan prints its file digest", plan, got, want)
	}
	if _, err := savedplan.Decode(plan, bytes.NewReader(b)); err != nil {
		return fmt.Errorf("%s is not a saved plan to approve: %w", plan, err)
	}
	return approveBytes(stderr, plan, b, key)
}

// approveBytes signs b, the saved plan at plan as it was read or written
// (never read again: what is signed is what the caller checked), with the
// private key at key, writes the approval beside plan and says which
// bytes it signed, by their digest, and with which key.
func approveBytes(stderr io.Writer, plan string, b []byte, key string) error {
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
	to := contract.ApprovalFile(plan, s.Fingerprint)
	// An approval holds a signature and the plan's digest, nothing of
	// the cluster: readable by whoever replays the plan, as before.
	if _, err := caller.WriteSaved(to, bundle, 0o644, false); err != nil {
		return fmt.Errorf("writing the approval: %w", err)
	}
	fmt.Fprintf(stderr, "zarf-planner: approved %s: its bytes, file digest %s (as verify-plan prints it), signed with the key %s (fingerprint %s); the approval is %s\n", plan, approval.Digest(b), key, s.Fingerprint, to)
	return nil
}
