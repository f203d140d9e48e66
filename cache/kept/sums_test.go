package kept

import (
	"testing"

	"github.com/colonel-byte/zarf-planner/carry"
	"github.com/colonel-byte/zarf-planner/filesum"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// carried is q with the sums of its content options' files, read as its
// caller reads them (package carry): files, or those q's options declare.
func carried(q Question, files ...options.File) (Question, error) {
	if files == nil {
		files = options.Files(options.Request{Plan: q.Plan, Read: q.Read})
	}
	sums, err := filesum.Sums(files, carry.Files(files))
	q.Sums = sums
	return q, err
}

// mustCarry is carried, failing the test on an error.
func mustCarry(t testing.TB, q Question, files ...options.File) Question {
	t.Helper()
	q, err := carried(q, files...)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestPlanKeyReadsNoFile: a question without the sums of its content
// options is refused, not keyed by reading their paths.
func TestPlanKeyReadsNoFile(t *testing.T) {
	if _, _, err := PlanKey(Question{Build: "b1", Path: t.TempDir(), Read: options.Read{Policy: "/etc/hostname"}}); err == nil {
		t.Error("keyed a question whose content options' sums are missing")
	}
}
