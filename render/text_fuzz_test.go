package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/service"
)

// FuzzRenderText gives the text renderer any names, versions, reasons and
// file names: it must write one line per record, and no control character
// but the newline that ends each.
func FuzzRenderText(f *testing.F) {
	f.Add("init", "0.1.0", "in the directory", "/b/zarf-package-init-amd64-0.1.0.tar.zst")
	f.Add("a\nb", "1\r\n2", "\x1b[2J\x1b[H gone", "/b/x\ty.tar")
	f.Add("\u2028", "\xff", "\x00", "/b/\u0085")
	f.Fuzz(func(t *testing.T, name, version, reason, path string) {
		plan := &planner.Plan{
			Packages:         []planner.Item{{Name: name, Version: version, Path: path, Action: planner.ActionDeploy, After: []string{name}, Reasons: []string{reason}}},
			AlreadyInstalled: []planner.AlreadyInstalled{{Name: name, Version: version, Path: path, Reason: reason}},
			Excluded:         []planner.Excluded{{Name: name, Version: version, Path: path, Reason: reason}},
			Warnings:         []string{reason},
		}
		ignored := []inspect.FileNote{{Path: path, Reason: reason}}
		check := func(res *service.Result, lines int) {
			var buf bytes.Buffer
			if err := PlanText(&buf, res); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			for _, r := range out {
				if r != '\n' && (r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029) {
					t.Fatalf("output holds the control character %U:\n%q", r, out)
				}
			}
			if got := strings.Count(out, "\n"); got != lines {
				t.Fatalf("output has %d lines; want %d:\n%q", got, lines, out)
			}
		}
		// header, table header, one item, then one line each.
		check(&service.Result{Plan: plan, Ignored: ignored}, 3+4)
		check(&service.Result{Failed: true, Msg: reason, Errors: []planner.Problem{{Kind: planner.KindMissing, Message: reason}}, Warnings: []string{reason}}, 3)
	})
}
