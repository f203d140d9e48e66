package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnEmptyDirectoryFailsThePlan: a bundle directory with no package
// archive is a failed plan (exit 1, kind empty) naming the directory and
// what it holds, not "Deploy 0 packages"; --allow-empty makes the empty
// plan a success; a directory whose every archive is unusable fails
// whatever --allow-empty says.
func TestAnEmptyDirectoryFailsThePlan(t *testing.T) {
	empty := t.TempDir()
	companions := t.TempDir()
	for _, name := range []string{"README.md", "app.tar.zst.sha256", "notes.txt", "a.sig", "b.sig", "c.sig"} {
		if err := os.WriteFile(filepath.Join(companions, name), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cut := t.TempDir()
	src, err := os.ReadFile("../testdata/bundles/signed/zarf-package-base-amd64-1.0.0.tar.zst")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cut, "zarf-package-base-amd64-1.0.0.tar.zst"), src[:len(src)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir string
		flags     []string
		want      []string
		absent    []string
	}{
		{"an empty directory", empty, nil, []string{empty + " holds no Zarf package archive: it is empty", "--allow-empty"}, nil},
		{"a directory of companions only", companions, nil,
			[]string{companions + " holds no Zarf package archive: 6 files, none a Zarf package archive", `"README.md"`, `"a.sig"`, "and 1 more", "--allow-empty"}, nil},
		{"an empty directory, and a source holding one archive", empty, []string{"--sources", "../testdata/bundles/signed"}, nil, nil},
		{"a directory whose one archive is cut short", cut, []string{"--allow-empty", "--no-cache"},
			[]string{cut + ` holds no Zarf package archive the plan can use: every one was left out as unusable ("zarf-package-base-amd64-1.0.0.tar.zst" (`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"plan", tc.dir, "-o", "json", "--architecture", "amd64"}, tc.flags...)
			code, out, stderr := run(t, args...)
			if tc.want == nil {
				if code != ExitOK {
					t.Fatalf("%v: exit %d; want %d\n%s%s", args, code, ExitOK, out, stderr)
				}
				return
			}
			var doc planDoc
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("%v: not a document: %v\n%s%s", args, err, out, stderr)
			}
			if code != ExitFailed || !doc.Failed || len(doc.Errors) != 1 || doc.Errors[0].Kind != "empty" {
				t.Fatalf("%v: exit %d, failed %v, errors %+v; want exit %d and one problem of kind empty", args, code, doc.Failed, doc.Errors, ExitFailed)
			}
			for _, w := range tc.want {
				if !strings.Contains(doc.Msg, w) || !strings.Contains(doc.Errors[0].Message, w) {
					t.Errorf("%v: msg %q; want it to say %q", args, doc.Msg, w)
				}
			}
		})
	}

	// Said as the empty plan it is, when it is expected.
	code, out, stderr := run(t, "plan", empty, "--allow-empty")
	if code != ExitOK || !strings.Contains(out, "Deploy 0 packages") {
		t.Errorf("plan --allow-empty of an empty directory: exit %d; want %d and an empty plan\n%s%s", code, ExitOK, out, stderr)
	}
	// The text output says the failure, with the kind.
	code, out, stderr = run(t, "plan", empty)
	if code != ExitFailed || !strings.Contains(out, "[empty] "+empty+" holds no Zarf package archive") {
		t.Errorf("plan of an empty directory: exit %d; want %d saying [empty]\n%s%s", code, ExitFailed, out, stderr)
	}
}
