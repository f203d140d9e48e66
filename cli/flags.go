package cli

import (
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/colonel-byte/zarf-planner/planner/options"
)

// aliasOf annotates a hidden flag that is the former spelling of another:
// Run says so on stderr when it is used.
const aliasOf = "zarf-planner/alias-of"

// noteAliases tells, on w, of each former flag spelling cmd was given.
func noteAliases(cmd *cobra.Command, w io.Writer) {
	if cmd == nil {
		return
	}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if to, ok := f.Annotations[aliasOf]; ok {
			fmt.Fprintf(w, "zarf-planner: --%s is a former spelling and will be removed in the next release; use %s\n", f.Name, to[0])
		}
	})
	noteFormerValues(cmd.Flags(), w)
}

// bind registers a flag for every option declared by *ptr's type (only
// those named, when names are given), bound to its field: the flag is the
// option's name with dashes. Former spellings stay as hidden, deprecated
// aliases. An option's choices annotate its flag (choicesOf), which shell
// completion offers; so does where its value names packages (namesOf).
func bind(fl *pflag.FlagSet, ptr any, names ...string) {
	v := reflect.ValueOf(ptr)
	for _, o := range options.Of(ptr) {
		if len(names) > 0 && !slices.Contains(names, o.Name) {
			continue
		}
		field := o.Field(v).Addr().Interface()
		help := o.Help
		if len(o.Choices) > 0 {
			help += " (" + strings.Join(o.Choices, " or ") + ")"
		}
		for i, name := range append([]string{o.Flag()}, o.Aliases...) {
			value := flagValue(o.Kind, field)
			f := fl.VarPF(value, name, "", help)
			if o.Kind == options.Bool {
				f.NoOptDefVal = "true"
			}
			if i > 0 {
				f.Hidden = true
				f.Annotations = map[string][]string{aliasOf: {"--" + o.Flag()}}
			}
			if len(o.Choices) > 0 {
				if f.Annotations == nil {
					f.Annotations = map[string][]string{}
				}
				f.Annotations[choicesOf] = o.Choices
			}
			if o.Names != "" {
				if f.Annotations == nil {
					f.Annotations = map[string][]string{}
				}
				f.Annotations[namesOf] = []string{o.Names}
			}
		}
		if o.NegatedAlias != "" {
			f := fl.VarPF(&negated{field.(*bool)}, o.NegatedAlias, "", "")
			f.NoOptDefVal = "true"
			f.Hidden = true
			f.Annotations = map[string][]string{aliasOf: {"--" + o.Flag() + "=false"}}
		}
	}
}

// flagValue is the pflag value of an option's field.
func flagValue(kind options.Kind, field any) pflag.Value {
	switch kind {
	case options.Bool:
		return (*boolValue)(field.(*bool))
	case options.Int:
		return (*intValue)(field.(*int))
	case options.Duration:
		return (*secondsValue)(field.(*int))
	case options.List, options.PathList:
		return &listValue{p: field.(*[]string)}
	case options.StringMap:
		return &mapValue[string]{p: field.(*map[string]string), parse: func(s string) (string, error) { return s, nil }, kind: "NAME=VALUE"}
	case options.IntMap:
		return &mapValue[int]{p: field.(*map[string]int), parse: strconv.Atoi, kind: "NAME=N"}
	}
	return (*stringValue)(field.(*string))
}

type stringValue string

func (s *stringValue) String() string     { return string(*s) }
func (s *stringValue) Set(v string) error { *s = stringValue(v); return nil }
func (s *stringValue) Type() string       { return "string" }

type boolValue bool

func (b *boolValue) String() string { return strconv.FormatBool(bool(*b)) }
func (b *boolValue) Set(v string) error {
	x, err := strconv.ParseBool(v)
	*b = boolValue(x)
	return err
}
func (b *boolValue) Type() string { return "bool" }

// negated sets a bool to the opposite of what it is given.
type negated struct{ p *bool }

func (n *negated) String() string { return "" }
func (n *negated) Set(v string) error {
	x, err := strconv.ParseBool(v)
	*n.p = !x
	return err
}
func (n *negated) Type() string { return "bool" }

type intValue int

func (i *intValue) String() string { return strconv.Itoa(int(*i)) }
func (i *intValue) Set(v string) error {
	x, err := strconv.Atoi(v)
	*i = intValue(x)
	return err
}
func (i *intValue) Type() string { return "int" }

// secondsValue is an option of whole seconds given as a Go duration
// (options.WholeSeconds: rounded up, never 0).
type secondsValue int

func (s *secondsValue) String() string { return (time.Duration(*s) * time.Second).String() }
func (s *secondsValue) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return err
	}
	n, err := options.WholeSeconds(d)
	if err != nil {
		return err
	}
	if n > math.MaxInt32 {
		return fmt.Errorf("%s is too long", v)
	}
	*s = secondsValue(n)
	return nil
}
func (s *secondsValue) Type() string { return "duration" }

// listValue is a list given as comma-separated values, repeatable.
type listValue struct {
	p   *[]string
	set bool
}

func (l *listValue) String() string { return strings.Join(*l.p, ",") }
func (l *listValue) Set(v string) error {
	if !l.set {
		*l.p, l.set = nil, true
	}
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l.p = append(*l.p, s)
		}
	}
	return nil
}
func (l *listValue) Type() string { return "strings" }

// mapValue is a map given as repeated KEY=VALUE. Unlike pflag's own map
// flags it does not split on commas: alias-set keys (init,init-slim) and
// semver ranges (>=1.0, <2.0) hold them.
type mapValue[V any] struct {
	p     *map[string]V
	parse func(string) (V, error)
	kind  string
}

func (m *mapValue[V]) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(*m.p)) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, (*m.p)[k]))
	}
	return strings.Join(parts, ",")
}

func (m *mapValue[V]) Set(s string) error {
	k, raw, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not %s", s, m.kind)
	}
	v, err := m.parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not %s: %w", s, m.kind, err)
	}
	if *m.p == nil {
		*m.p = map[string]V{}
	}
	(*m.p)[k] = v
	return nil
}

func (m *mapValue[V]) Type() string { return m.kind }
