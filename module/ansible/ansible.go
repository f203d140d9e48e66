// Package ansible implements what a binary Ansible module needs from
// AnsibleModule: reading the flat JSON args file, validating options against
// a typed spec (required, defaults, choices, unknown options), honouring the
// internal _ansible_* keys, and printing exactly one JSON result. It knows
// nothing of planning.
package ansible

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/colonel-byte/zarf-planner/privdir"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// Option types, as AnsibleModule names them.
const (
	TypeStr  = "str"
	TypePath = "path"
	TypeInt  = "int"
	TypeBool = "bool"
	TypeDict = "dict"
	TypeList = "list"
	// TypeRaw is a value taken as it is given (a string or a number),
	// as Ansible's file modules take mode.
	TypeRaw = "raw"
)

// Option describes one module option.
type Option struct {
	Type     string
	Required bool
	Default  any
	Choices  []string
	NoLog    bool
	// Elements is the type of a list's elements or a dict's values.
	Elements string
	// Aliases are former names the option is also accepted under; using
	// one adds a deprecation to the result.
	Aliases []string
	// Description is what the module's documentation says of it.
	Description string
}

// Spec is a module's argument spec.
type Spec struct {
	Options map[string]Option
	// MutuallyExclusive lists sets of options of which at most one may be
	// given.
	MutuallyExclusive [][]string
	// RequiredOneOf lists sets of options of which at least one must be
	// given.
	RequiredOneOf [][]string
}

// Invocation is what the module was called with, for the result's
// invocation.module_args.
type Invocation struct {
	ModuleName string
	CheckMode  bool
	Diff       bool
	NoLog      bool
	Params     map[string]any
	// Deprecations are Ansible's deprecation entries ({msg, version}) for
	// options given under a former name.
	Deprecations []map[string]any
}

// MaxArgs caps the args file: a module's arguments are kilobytes.
const MaxArgs = 16 << 20

// ReadArgs reads the args file Ansible passes as argv[1], opened without
// blocking and checked on its descriptor (privdir.ReadRegular): a FIFO or
// device there is refused at once, before the timeout it holds is known.
func ReadArgs(argv []string) (map[string]any, error) {
	if len(argv) < 2 {
		return nil, fmt.Errorf("no arguments file: this is an Ansible module; run it from a playbook, or as %s ARGS.json", filepath.Base(argv[0]))
	}
	b, err := privdir.ReadRegular(argv[1], MaxArgs, true)
	if err != nil {
		return nil, fmt.Errorf("reading the arguments file: %w", err)
	}
	// Checked whole first (a key given twice would be read one way here
	// and another by whoever wrote it), then decoded keeping numbers exact.
	if err := strictjson.Valid("the arguments file "+argv[1], b); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("the arguments file %s is not a JSON object: %w", argv[1], err)
	}
	if raw == nil {
		raw = map[string]any{}
	}
	return raw, nil
}

// Validate checks raw arguments against the spec, converting types and
// filling defaults. Unknown _ansible_* keys are ignored; any other unknown
// option is an error naming it and the valid ones.
func (s Spec) Validate(raw map[string]any) (*Invocation, error) {
	inv := &Invocation{Params: map[string]any{}}
	raw, err := s.unalias(raw, inv)
	if err != nil {
		return inv, err
	}
	var unknown []string
	for k, v := range raw {
		if strings.HasPrefix(k, "_ansible_") {
			switch k {
			case "_ansible_check_mode":
				inv.CheckMode = truthy(v)
			case "_ansible_diff":
				inv.Diff = truthy(v)
			case "_ansible_no_log":
				inv.NoLog = truthy(v)
			case "_ansible_module_name":
				inv.ModuleName, _ = v.(string)
			}
			continue
		}
		if _, ok := s.Options[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		//lint:ignore ST1005 the message AnsibleModule itself gives, which users search for
		return inv, fmt.Errorf("Unsupported parameters for (%s) module: %s. Supported parameters include: %s", inv.ModuleName, strings.Join(unknown, ", "), strings.Join(s.names(), ", "))
	}
	given := func(name string) bool { v, ok := raw[name]; return ok && v != nil }
	for _, set := range s.MutuallyExclusive {
		var both []string
		for _, n := range set {
			if given(n) {
				both = append(both, n)
			}
		}
		if len(both) > 1 {
			return inv, fmt.Errorf("parameters are mutually exclusive: %s", strings.Join(set, "|"))
		}
	}
	for _, set := range s.RequiredOneOf {
		if !slices.ContainsFunc(set, given) {
			return inv, fmt.Errorf("one of the following is required: %s", strings.Join(set, ", "))
		}
	}
	var missing []string
	for _, name := range s.names() {
		opt := s.Options[name]
		v, ok := raw[name]
		if !ok || v == nil {
			if opt.Required {
				missing = append(missing, name)
				continue
			}
			inv.Params[name] = opt.Default
			continue
		}
		cv, err := convert(v, opt.Type, opt.Elements)
		if err != nil {
			return inv, fmt.Errorf("argument '%s' is of type %s and we were unable to convert to %s: %v", name, jsonType(v), opt.Type, err)
		}
		if len(opt.Choices) > 0 {
			if str, _ := cv.(string); !slices.Contains(opt.Choices, str) {
				return inv, fmt.Errorf("value of %s must be one of: %s, got: %v", name, strings.Join(opt.Choices, ", "), cv)
			}
		}
		inv.Params[name] = cv
	}
	if len(missing) > 0 {
		return inv, fmt.Errorf("missing required arguments: %s", strings.Join(missing, ", "))
	}
	return inv, nil
}

// unalias renames options given under an alias to their name, noting a
// deprecation for each; an option given under both is an error.
func (s Spec) unalias(raw map[string]any, inv *Invocation) (map[string]any, error) {
	out := raw
	for _, name := range s.names() {
		for _, alias := range s.Options[name].Aliases {
			v, ok := raw[alias]
			if !ok {
				continue
			}
			if _, both := raw[name]; both {
				return raw, fmt.Errorf("parameters are mutually exclusive: %s|%s (%s is the former name of %s)", name, alias, alias, name)
			}
			out = maps.Clone(out)
			delete(out, alias)
			out[name] = v
			inv.Deprecations = append(inv.Deprecations, map[string]any{
				"msg":     fmt.Sprintf("Alias '%s' is deprecated. See the module docs for more information; use '%s'", alias, name),
				"version": "0.3.0",
			})
		}
	}
	return out, nil
}

func (s Spec) names() []string {
	out := make([]string, 0, len(s.Options))
	for k := range s.Options {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ModuleArgs is the invocation.module_args of a result: the validated
// parameters with no_log options masked.
func (s Spec) ModuleArgs(inv *Invocation) map[string]any {
	out := map[string]any{}
	for k, v := range inv.Params {
		if s.Options[k].NoLog && v != nil {
			v = "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"
		}
		out[k] = v
	}
	return out
}

// converters turn a raw JSON value into an option's type, one function
// per type (elements: the type of a list's elements or a dict's values).
var converters map[string]func(v any, elements string) (any, error)

func init() {
	converters = map[string]func(any, string) (any, error){
		TypeStr:  func(v any, _ string) (any, error) { return toStr(v) },
		TypePath: toPath,
		TypeInt:  func(v any, _ string) (any, error) { return toInt(v) },
		TypeBool: func(v any, _ string) (any, error) { return toBool(v) },
		TypeDict: toDict,
		TypeList: toList,
		TypeRaw:  toRaw,
	}
}

func convert(v any, typ, elements string) (any, error) {
	c, ok := converters[typ]
	if !ok {
		return nil, fmt.Errorf("unknown option type %q", typ)
	}
	return c(v, elements)
}

func toStr(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	return "", fmt.Errorf("%s is not a string", jsonType(v))
}

// toRaw takes a string or a number as it is.
func toRaw(v any, _ string) (any, error) {
	switch v.(type) {
	case string, json.Number:
		return v, nil
	}
	return nil, fmt.Errorf("%s is neither a string nor a number", jsonType(v))
}

func toPath(v any, _ string) (any, error) {
	s, err := toStr(v)
	if err != nil || s == "" {
		return s, err
	}
	return expandPath(s), nil
}

func toInt(v any) (int64, error) {
	switch x := v.(type) {
	case json.Number:
		i, err := x.Int64()
		if err != nil {
			f, ferr := x.Float64()
			if ferr != nil || f != math.Trunc(f) {
				return 0, fmt.Errorf("%s is not a whole number", x)
			}
			i = int64(f)
		}
		return i, nil
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a whole number", x)
		}
		return i, nil
	}
	return 0, fmt.Errorf("%s is not a number", jsonType(v))
}

func toBool(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string, json.Number:
		switch strings.ToLower(fmt.Sprint(x)) {
		case "yes", "on", "1", "true", "y", "t":
			return true, nil
		case "no", "off", "0", "false", "n", "f":
			return false, nil
		}
	}
	return false, fmt.Errorf("%v is not a boolean", v)
}

func toDict(v any, elements string) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is not a dictionary", jsonType(v))
	}
	if elements == "" {
		return m, nil
	}
	out := map[string]any{}
	for k, e := range m {
		ce, err := convert(e, elements, "")
		if err != nil {
			return nil, fmt.Errorf("value of key %s: %w", k, err)
		}
		out[k] = ce
	}
	return out, nil
}

func toList(v any, elements string) (any, error) {
	var l []any
	switch x := v.(type) {
	case []any:
		l = x
	case string:
		for _, part := range strings.Split(x, ",") {
			l = append(l, strings.TrimSpace(part))
		}
	default:
		return nil, fmt.Errorf("%s is not a list", jsonType(v))
	}
	if elements == "" {
		return l, nil
	}
	out := make([]any, 0, len(l))
	for i, e := range l {
		ce, err := convert(e, elements, "")
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		out = append(out, ce)
	}
	return out, nil
}

// expandPath expands ~ and environment variables, as AnsibleModule does for
// type path.
func expandPath(p string) string {
	p = os.ExpandEnv(p)
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	return p
}

func truthy(v any) bool {
	b, err := toBool(v)
	return err == nil && b
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "str"
	case json.Number:
		return "int"
	case bool:
		return "bool"
	case map[string]any:
		return "dict"
	case []any:
		return "list"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// Print writes result as the module's single JSON object.
func Print(w io.Writer, result map[string]any) error {
	if _, ok := result["changed"]; !ok {
		result["changed"] = false
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(result)
}

// Fail prints a failure result with msg.
func Fail(w io.Writer, msg string, extra map[string]any) error {
	r := map[string]any{"failed": true, "changed": false, "msg": msg}
	for k, v := range extra {
		r[k] = v
	}
	return Print(w, r)
}

// ErrRefused is PrintMerged's refusal of a document (not a JSON object,
// or holding a key it may not return); nothing was written.
var ErrRefused = errors.New("the result cannot be returned")

// reserved are the result keys Ansible gives a meaning of its own (beside
// every key that starts with ansible_ or _ansible): a document rendered
// elsewhere never sets them; the module does, as extra keys.
var reserved = map[string]bool{
	"changed": true, "invocation": true, "skipped": true, "skip_reason": true, "diff": true,
	"rc": true, "results": true, "stdout": true, "stdout_lines": true, "stderr": true,
	"stderr_lines": true, "exception": true, "deprecations": true, "backup_file": true,
	"module_stdout": true, "module_stderr": true, "item": true,
}

// Reserved reports whether Ansible gives the result key a meaning of its
// own: ansible_facts and every ansible_* or _ansible* key, changed,
// invocation, skipped, diff and the like.
func Reserved(key string) bool {
	return reserved[key] || strings.HasPrefix(key, "ansible_") || strings.HasPrefix(key, "_ansible")
}

// PrintMerged writes a result that is a JSON object rendered elsewhere
// (the daemon's document, possibly megabytes) with the extra keys added,
// without decoding its values. The document is checked first, whole, as
// package strictjson checks: no key given twice anywhere (Python would
// keep the last, Go the last too but matched by case), and at its top
// level no key Ansible reserves, none of the extra keys, and, when
// allowed is not nil, only keys allowed names. A document refused is not
// written, and the error wraps ErrRefused.
func PrintMerged(w io.Writer, document []byte, extra map[string]any, allowed func(key string) bool) error {
	doc := bytes.TrimSpace(document)
	if len(doc) < 2 || doc[0] != '{' || doc[len(doc)-1] != '}' {
		return fmt.Errorf("%w: it is not a JSON object", ErrRefused)
	}
	keys, err := strictjson.Keys("the result", doc)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if _, ok := extra["changed"]; !ok {
		extra["changed"] = false
	}
	for _, k := range keys {
		_, dup := extra[k]
		switch {
		case dup || Reserved(k):
			return fmt.Errorf("%w: it sets the key %s, which Ansible or this module gives its own meaning", ErrRefused, strconv.Quote(k))
		case allowed != nil && !allowed(k):
			return fmt.Errorf("%w: it holds the key %s, which no result of this module has", ErrRefused, strconv.Quote(k))
		}
	}
	var more bytes.Buffer
	enc := json.NewEncoder(&more)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(extra); err != nil {
		return err
	}
	tail := bytes.TrimSpace(more.Bytes()) // {"changed":...}
	sep := []byte{}
	if len(keys) > 0 {
		sep = []byte{','}
	}
	// Written in pieces rather than joined: the document is not copied.
	bufs := net.Buffers{doc[:len(doc)-1], sep, tail[1:], []byte{'\n'}}
	_, err = bufs.WriteTo(w)
	return err
}
