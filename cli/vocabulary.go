package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/colonel-byte/zarf-planner/barrier"
)

// The command line's vocabulary (docs/vocabulary.md): -o/--output is
// always a format, from a list each command declares; a file the command
// writes is --to; barrier checks are --check kind=K,name=N[,namespace=NS].
const (
	// formatsOf annotates a command's -o/--output with the formats it
	// accepts (the vocabulary test reads it).
	formatsOf = "zarf-planner/formats"
	// fileFlagName is the one flag name of a file a command writes.
	fileFlagName = "to"
)

// formatFlag registers -o/--output: a format among formats (the first is
// the default), its help saying them. former maps a former value to the
// one that replaced it; the former is accepted with a note on stderr.
// aliases are former flag spellings, hidden.
func formatFlag(fl *pflag.FlagSet, p *string, formats []string, help string, former map[string]string, aliases ...string) {
	*p = formats[0]
	v := &formatValue{p: p, former: former}
	f := fl.VarPF(v, "output", "o", "output format: "+oneOf(formats)+help)
	f.DefValue = formats[0]
	f.Annotations = map[string][]string{formatsOf: formats}
	for _, a := range aliases {
		af := fl.VarPF(v, a, "", "")
		af.DefValue = formats[0]
		af.Hidden = true
		af.Annotations = map[string][]string{aliasOf: {"-o/--output"}, formatsOf: formats}
	}
}

// formatValue is a format flag's value; a former spelling of a format is
// taken as its replacement, and remembered so that Run can say so.
type formatValue struct {
	p      *string
	former map[string]string
	// used is the former spelling given, if any.
	used string
}

func (v *formatValue) String() string { return *v.p }
func (v *formatValue) Type() string   { return "format" }
func (v *formatValue) Set(s string) error {
	if to, ok := v.former[s]; ok {
		v.used, s = s, to
	}
	*v.p = s
	return nil
}

// fileFlag registers --to, the file a command writes, with --output as
// its former spelling (hidden; Run notes its use).
func fileFlag(fl *pflag.FlagSet, p *string, help string) {
	fl.StringVar(p, fileFlagName, "", help)
	f := fl.VarPF((*stringValue)(p), "output", "", "")
	f.Hidden = true
	f.Annotations = map[string][]string{aliasOf: {"--" + fileFlagName}}
}

// noteFormerValues tells, on w, of each former format spelling a flag
// was given.
func noteFormerValues(fl *pflag.FlagSet, w io.Writer) {
	fl.Visit(func(f *pflag.Flag) {
		if v, ok := f.Value.(*formatValue); ok && v.used != "" {
			fmt.Fprintf(w, "zarf-planner: -o %s is a former spelling and will be removed in the next release; use -o %s\n", v.used, v.former[v.used])
			v.used = ""
		}
	})
}

// checkForm is how --check is written.
const checkForm = "kind=KIND,name=NAME[,namespace=NAMESPACE]"

// parseCheck parses one --check: kind=KIND,name=NAME[,namespace=NS], the
// keys of the module's checks entries, into the reference the daemon
// adds to the barrier (barrier.Barrier.Add judges kind and name).
func parseCheck(s string) (barrier.Ref, error) {
	var r barrier.Ref
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || v == "" {
			return barrier.Ref{}, fmt.Errorf("--check %q is not %s", s, checkForm)
		}
		if seen[k] {
			return barrier.Ref{}, fmt.Errorf("--check %q gives %s twice", s, k)
		}
		seen[k] = true
		switch k {
		case "kind":
			r.Kind = v
		case "name":
			r.Name = v
		case "namespace":
			r.Namespace = v
		default:
			return barrier.Ref{}, fmt.Errorf("--check %q has key %q; use kind, name and namespace", s, k)
		}
	}
	if r.Kind == "" || r.Name == "" {
		return barrier.Ref{}, fmt.Errorf("--check %q is not %s", s, checkForm)
	}
	return r, nil
}

// checksValue is the repeatable --check: the references given, in order.
type checksValue struct{ refs *[]barrier.Ref }

func (c *checksValue) String() string {
	var parts []string
	for _, r := range *c.refs {
		s := "kind=" + r.Kind + ",name=" + r.Name
		if r.Namespace != "" {
			s += ",namespace=" + r.Namespace
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func (c *checksValue) Set(s string) error {
	r, err := parseCheck(s)
	if err != nil {
		return err
	}
	*c.refs = append(*c.refs, r)
	return nil
}

func (c *checksValue) Type() string { return "check" }

// formerCheck marks a per-kind flag of wait as a former spelling of
// --check, written as kind says (kind=K,name=NAME...).
func formerCheck(fl *pflag.FlagSet, name, kind string) {
	f := fl.Lookup(name)
	f.Hidden = true
	f.Annotations = map[string][]string{aliasOf: {"--check kind=" + kind + ",name=NAME"}}
}
