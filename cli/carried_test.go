package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/privdir/privdirtest"
)

// TestEveryCarriedOptionRefusesHostileFilesThroughTheCLI is generated
// from the declarations: for every option the caller reads and carries
// (options.CarriedFiles: content and carry options), each hostile file
// fails the plan at once (runWithin: 5 s), naming the file and the flag,
// and the daemon that served it answers the next plan. An option added
// with content or carry is tested here without a line written for it.
func TestEveryCarriedOptionRefusesHostileFilesThroughTheCLI(t *testing.T) {
	bundle := "../examples/bundles/reference-stack"
	saved := filepath.Join(t.TempDir(), "plan.json")
	if code, out, errout := run(t, "plan", bundle, "--architecture", "amd64", "--save-to", saved); code != ExitOK {
		t.Fatalf("saving a plan: exit %d: %s %s", code, out, errout)
	}
	var tried []string
	for _, o := range options.Of(options.Request{}) {
		if !o.Carried() {
			continue
		}
		tried = append(tried, o.Name)
		for kind, make := range privdirtest.HostileFiles(t, o.MaxContent) {
			t.Run(o.Name+"/"+kind, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "file")
				make(path)
				args := []string{"plan", bundle, "-o", "json", "--architecture", "amd64", "--" + o.Flag(), path}
				if o.Name == "approval_keys" { // approvals are checked on a replay
					args = append(args, "--plan-file", saved, "--require-approvals", "1")
				}
				code, out, stderr := runWithin(t, args...)
				all := out + stderr
				if code == ExitOK || !strings.Contains(all, path) || !strings.Contains(all, "--"+o.Flag()) {
					t.Errorf("exit %d, output %q; want a failure naming %s and --%s", code, all, path, o.Flag())
				}
			})
		}
	}
	want := []string{"public_key", "registry_ca_file", "policy", "prerequisites", "snapshot", "approval_keys"}
	if fmt.Sprint(tried) != fmt.Sprint(want) {
		t.Errorf("carried options tried: %v; want at least %v", tried, want)
	}
	if code, out, errout := runWithin(t, "plan", bundle, "-o", "json", "--architecture", "amd64"); code != ExitOK {
		t.Errorf("the daemon did not answer a plain plan after them: exit %d: %s %s", code, out, errout)
	}
}
