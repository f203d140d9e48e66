package render

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"

	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/service"
)

// WriteDoc prints a daemon's JSON document as the format -o json or
// -o yaml asks; done is false for the other formats, which the caller
// renders.
func WriteDoc(w io.Writer, format string, doc []byte) (done bool, err error) {
	switch format {
	case "json":
		_, err = fmt.Fprintf(w, "%s\n", doc)
		return true, err
	case "yaml":
		y, err := yaml.JSONToYAML(yamlReadable(doc))
		if err != nil {
			return true, err
		}
		_, err = w.Write(y)
		return true, err
	}
	return false, nil
}

// yamlReadable is the JSON document doc with every character YAML's
// reader refuses or changes (it takes only YAML's printable set: tab,
// newlines, U+0020–U+007E, U+00A0–U+D7FF, U+E000–U+FFFD and beyond; NEL,
// U+0085, it folds as a line break) written
// as its \uXXXX escape, which JSON reads as the same string: Go's
// encoder leaves DEL and the C1 controls as they are, and a package's
// text may hold them. Outside strings a JSON document holds none.
func yamlReadable(doc []byte) []byte {
	s := string(doc)
	if strings.IndexFunc(s, notYAMLPrintable) < 0 {
		return doc
	}
	var b strings.Builder
	for _, r := range s {
		if notYAMLPrintable(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return []byte(b.String())
}

// notYAMLPrintable says YAML's reader refuses r as it is (a rune JSON's
// writer may leave unescaped: not below U+0020).
func notYAMLPrintable(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0: // NEL (U+0085) too: YAML reads it as a line break
		return true
	case r >= 0xd800 && r < 0xe000, r == 0xfffe || r == 0xffff:
		return true
	}
	return false
}

// Result prints a plan result in format: json, yaml, or anything else
// as the text of PlanText.
func Result(w io.Writer, format string, res *service.Result) error {
	b, err := res.JSON()
	if err != nil {
		return err
	}
	if done, err := WriteDoc(w, format, b); done {
		return err
	}
	return PlanText(w, res)
}

// PlanText prints a plan result for a terminal: the packages in order as
// a table, then what was already installed, left as it is, excluded or
// ignored, and the warnings; or, for a failure, every problem.
func PlanText(w io.Writer, res *service.Result) error {
	if res.Failed {
		Printf(w, "No plan is possible.\n")
		if len(res.Errors) == 0 {
			Printf(w, "  %s\n", res.Msg)
		}
		for _, p := range res.Errors {
			Printf(w, "  [%s] %s\n", p.Kind, p.Message)
		}
		for _, warn := range res.Warnings {
			Printf(w, "warning: %s\n", warn)
		}
		return nil
	}
	p := res.Plan
	if a := res.Approvals; a != nil {
		for _, s := range a.Signed {
			Printf(w, "approved by %s (%s): %s\n", s.Key, s.Fingerprint, s.File)
		}
		Printf(w, "%d of %d required approvals\n", len(a.Signed), a.Required)
	}
	Printf(w, "Deploy %d packages in this order (plan %s):\n", len(p.Packages), short(p.PlanDigest))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  #\tLEVEL\tPACKAGE\tVERSION\tACTION\tAFTER\tARCHIVE")
	for i, it := range p.Packages {
		after := strings.Join(AfterWords(p, it), ",")
		if after == "" {
			after = "-"
		}
		Printf(tw, "  %d\t%d\t%s\t%s\t%s\t%s\t%s\n", i+1, it.Level, it.Name, it.Version, it.Action, after, filepath.Base(it.Path))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, sk := range p.AlreadyInstalled {
		Printf(w, "already installed %s %s: %s\n", sk.Name, sk.Version, sk.Reason)
	}
	for _, ip := range p.InstalledNotInBundle {
		Printf(w, "installed on the cluster but not in the directory: %s %s (left as it is)\n", ip.Name, ip.Version)
	}
	for _, e := range p.Excluded {
		Printf(w, "excluded %s %s (%s): %s\n", e.Name, e.Version, filepath.Base(e.Path), e.Reason)
	}
	for _, warn := range p.Warnings {
		Printf(w, "warning: %s\n", warn)
	}
	ignoredText(w, res.Ignored)
	return nil
}

// ignoredText prints the files a plan ignored, one line each, but for
// the companions of archives (checksum and signature files beside them),
// which are expected and told in one line with their suffixes: inspect
// lists each.
func ignoredText(w io.Writer, ignored []inspect.FileNote) {
	var companions int
	var suffixes []string
	for _, ig := range ignored {
		if ig.Kind == inspect.IgnoredCompanion {
			companions++
			if ext := filepath.Ext(ig.Path); !slices.Contains(suffixes, ext) {
				suffixes = append(suffixes, ext)
			}
			continue
		}
		Printf(w, "ignored %s: %s\n", filepath.Base(ig.Path), ig.Reason)
	}
	if companions > 0 {
		slices.Sort(suffixes)
		Printf(w, "ignored %s of the archives beside them (%s), not read; inspect lists each\n", count(companions, "checksum or signature file"), strings.Join(suffixes, ", "))
	}
}

// AfterWords are the names an item waits for, each marked " (inferred)"
// when every edge from it to the item was inferred from what the item's
// objects use rather than declared.
func AfterWords(p *planner.Plan, it planner.Item) []string {
	out := make([]string, 0, len(it.After))
	for _, a := range it.After {
		inferred, declared := false, false
		for _, e := range p.Graph.Edges {
			if e.From == a && e.To == it.Name {
				if e.Source.By == planner.ByInferred {
					inferred = true
				} else {
					declared = true
				}
			}
		}
		if inferred && !declared {
			a += " (inferred)"
		}
		out = append(out, a)
	}
	return out
}

// Printf is fmt.Fprintf for a line of text output: every string argument
// (names, reasons and messages from archives) is made printable first, so
// no value can add a line, a column or a terminal escape.
func Printf(w io.Writer, format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = facts.Printable(s)
		}
	}
	fmt.Fprintf(w, format, args...)
}

func short(digest string) string {
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}
