package chartrender_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/Masterminds/sprig/v3"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/chartrender"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
)

func render(t *testing.T, tpl string) (string, error) {
	t.Helper()
	r, err := chartrender.Render(context.Background(), claims.ChartRequest{Chart: rendertest.Chart(t, map[string]string{"templates/t.yaml": tpl}), Release: "demo", Namespace: "demo"})
	return string(r.Files["templates/t.yaml"]), err
}

// The functions chartrender replaces answer as sprig's do.
func TestBoundedFunctionsAnswerAsSprigs(t *testing.T) {
	for tpl, want := range map[string]string{
		`{{ seq 5 }}`:                               "1 2 3 4 5",
		`{{ seq 0 }}`:                               "1 0",
		`{{ seq 2 5 }}`:                             "2 3 4 5",
		`{{ seq 5 2 }}`:                             "5 4 3 2",
		`{{ seq 0 2 10 }}`:                          "0 2 4 6 8 10",
		`{{ seq 10 -2 0 }}`:                         "10 8 6 4 2 0",
		`{{ seq 10 2 0 }}`:                          "",
		`{{ until 3 }}`:                             "[0 1 2]",
		`{{ until -3 }}`:                            "[0 -1 -2]",
		`{{ untilStep 0 10 3 }}`:                    "[0 3 6 9]",
		`{{ untilStep 10 0 -4 }}`:                   "[10 6 2]",
		`{{ untilStep 0 10 0 }}`:                    "[]",
		`{{ untilStep 0 10 -1 }}`:                   "[]",
		`{{ untilStep 10 0 -9223372036854775808 }}`: "[10]",
		`{{ repeat 3 "ab" }}`:                       "ababab",
		`{{ indent 2 "a\nb" }}`:                     "  a\n  b",
		`{{ nindent 2 "a\nb" }}`:                    "\n  a\n  b",
		`{{ replace "a" "xy" "banana" }}`:           "bxynxynxy",
		`{{ randAlphaNum 12 | len }}`:               "12",
		`{{ randBytes 12 | b64dec | len }}`:         "12",
	} {
		got, err := render(t, "# "+tpl+"\nkind: ConfigMap\n")
		if err != nil {
			t.Fatalf("%s: %v", tpl, err)
		}
		if got = strings.TrimSuffix(strings.TrimPrefix(got, "# "), "\nkind: ConfigMap\n"); got != want {
			t.Fatalf("%s rendered %q, want %q", tpl, got, want)
		}
	}
}

// Each refuses, as the chart's fault, to build more than the renderer
// allows in one call (before, seq 1000000000 built 10^9 numbers).
func TestBoundedFunctionsRefuseGigabytes(t *testing.T) {
	for _, tpl := range []string{
		`{{ seq 1000000000 }}`,
		`{{ seq 0 1 1000000000 }}`,
		`{{ seq -9223372036854775807 9223372036854775806 }}`,
		`{{ until 1000000000 }}`,
		`{{ untilStep -9223372036854775807 9223372036854775807 1 }}`,
		`{{ repeat 1000000000 "x" }}`,
		`{{ indent 1000000000 "x" }}`,
		`{{ indent 1000 (repeat 100000 "\n") }}`,
		`{{ nindent 1000000000 "x" }}`,
		`{{ replace "" (repeat 100000 "y") (repeat 1000 "x") }}`,
		`{{ randAlphaNum 1000000000 }}`,
		`{{ randAlpha 1000000000 }}`,
		`{{ randNumeric 1000000000 }}`,
		`{{ randAscii 1000000000 }}`,
		`{{ randBytes 1000000000 }}`,
	} {
		_, err := render(t, tpl)
		var bad *claims.ChartError
		if !errors.As(err, &bad) || !strings.Contains(bad.Reason, "the renderer allows") {
			t.Fatalf("%s: %v", tpl, err)
		}
	}
}

// Over small arguments, seq, until and untilStep answer exactly as
// sprig's own (which Helm would use), compared through templates.
func TestBoundedRangesAgreeWithSprig(t *testing.T) {
	theirs := sprig.TxtFuncMap()
	var tpl, want strings.Builder
	args := []int{-7, -3, -2, -1, 0, 1, 2, 3, 5, 8}
	for _, a := range args {
		fmt.Fprintf(&tpl, "{{ seq %d }}|{{ until %d }}|", a, a)
		fmt.Fprintf(&want, "%s|%v|", theirs["seq"].(func(...int) string)(a), theirs["until"].(func(int) []int)(a))
		for _, b := range args {
			fmt.Fprintf(&tpl, "{{ seq %d %d }}|", a, b)
			fmt.Fprintf(&want, "%s|", theirs["seq"].(func(...int) string)(a, b))
			for _, c := range args {
				fmt.Fprintf(&tpl, "{{ seq %d %d %d }}|{{ untilStep %d %d %d }}|", a, b, c, a, b, c)
				fmt.Fprintf(&want, "%s|%v|", theirs["seq"].(func(...int) string)(a, b, c), theirs["untilStep"].(func(int, int, int) []int)(a, b, c))
			}
		}
		tpl.WriteString("\n")
		want.WriteString("\n")
	}
	got, err := render(t, "# "+strings.ReplaceAll(tpl.String(), "\n", "\n# ")+"\nkind: ConfigMap\n")
	if err != nil {
		t.Fatal(err)
	}
	if w := "# " + strings.ReplaceAll(want.String(), "\n", "\n# ") + "\nkind: ConfigMap\n"; got != w {
		gl, wl := strings.Split(got, "\n"), strings.Split(w, "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d:\n got %s\nwant %s", i, gl[i], wl[i])
			}
		}
		t.Fatalf("rendered %d lines, sprig %d", len(gl), len(wl))
	}
}
