// Package strictjson is the one JSON reader of every document zarf-planner
// reads that another program also reads or writes: saved plans, cluster
// snapshots, the deploy role's records, the module's arguments and the
// daemon's answers, the state file and the renderer's frames.
//
// Two readers of the same bytes must never see two documents. Go's
// encoding/json matches keys case-insensitively and keeps the last of a
// duplicated key; Python's json (Ansible) matches exactly and keeps the
// last. So a key given twice, a key that matches a known key only by case,
// and any key the Go type does not declare are refused, naming the file,
// the line and the key; invalid UTF-8 is refused too, and nesting is
// bounded. What is accepted reads the same to Go, to Python and to any
// reader that keeps the last or the first duplicate.
//
// Documents another program writes and reads with its own rules (zarf's
// deployed-package secret, zarf's split-archive metadata) are read as that
// program reads them, with encoding/json, not here; docs/security.md lists
// every seam.
//
// It decodes with github.com/go-json-experiment/json, the prototype of
// encoding/json/v2, whose defaults are these rules.
package strictjson

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// MaxDepth bounds the nesting of objects and arrays in any document read
// here: far deeper than any document the project writes.
const MaxDepth = 64

// Error is a document refused: Name is the file (or what the bytes are),
// Line the line of the offending key or value (0 when unknown), Key the
// JSON pointer of the offending key ("/zarf_packages_to_deploy/0/Name").
type Error struct {
	Name string
	Line int
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Name)
	if e.Line > 0 {
		b.WriteString(" line ")
		b.WriteString(strconv.Itoa(e.Line))
	}
	if e.Key != "" {
		b.WriteString(", key ")
		b.WriteString(strconv.Quote(e.Key))
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Unmarshal decodes b, which must hold exactly one JSON value, into v,
// refusing duplicate keys, unknown keys (including a known key spelled
// with other case), invalid UTF-8 and nesting deeper than MaxDepth. name
// says what b is in the error ("the saved plan /srv/plan.json").
func Unmarshal(name string, b []byte, v any) error {
	if err := checkDepth(name, b); err != nil {
		return err
	}
	if err := nullObject(name, b, v); err != nil {
		return err
	}
	err := json.Unmarshal(b, v, json.RejectUnknownMembers(true))
	if err == nil {
		return nil
	}
	return explain(name, b, err)
}

// UnmarshalPart decodes the part of b that v declares, as Unmarshal does
// but passing over keys v does not declare: for a view of a document that
// is checked whole elsewhere. Keys still match exactly, as Python's do,
// and a duplicate anywhere is still refused.
func UnmarshalPart(name string, b []byte, v any) error {
	if err := checkDepth(name, b); err != nil {
		return err
	}
	if err := nullObject(name, b, v); err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return explain(name, b, err)
	}
	return nil
}

// nullObject refuses a document that is JSON null where v is an object
// (a pointer to a struct). The decoder reads null as "the zero value",
// which for a document would be a silent empty one: a plan without a
// plan, a record of nothing. A null where a document may be absent is
// the caller's to check before it decodes (as the records' stop does).
func nullObject(name string, b []byte, v any) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	if string(bytes.TrimSpace(b)) != "null" {
		return nil
	}
	return &Error{Name: name, Line: 1, Msg: "it is null, where a JSON object is expected"}
}

// Read reads at most max bytes from r (more is refused) and decodes them
// as Unmarshal does.
func Read(name string, r io.Reader, max int64, v any) error {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	if int64(len(b)) > max {
		size := fmt.Sprintf("%d bytes", max)
		if max >= 1<<20 && max%(1<<20) == 0 {
			size = fmt.Sprintf("%d MiB", max>>20)
		}
		return &Error{Name: name, Msg: fmt.Sprintf("it is over %s, more than any such document", size)}
	}
	return Unmarshal(name, b, v)
}

// Valid checks that b is one JSON value this package would accept as
// syntax: no duplicate key in any object, valid UTF-8, bounded nesting.
// It says nothing of which keys a type declares.
func Valid(name string, b []byte) error {
	if err := checkDepth(name, b); err != nil {
		return err
	}
	var v jsontext.Value
	if err := json.Unmarshal(b, &v); err != nil {
		return explain(name, b, err)
	}
	return nil
}

// Keys returns the keys of the JSON object b, in order, after checking
// the whole document as Valid does. A value that is not an object is
// refused. A valid document (jsontext.Value.IsValid, the same rules as
// the decoder's) has its keys found by a scan of its top level; any
// other is decoded token by token, so that the error names its line and
// key.
func Keys(name string, b []byte) ([]string, error) {
	spans, err := scan(name, b)
	if err != nil {
		return nil, err
	}
	if trimmed := bytes.TrimLeft(b, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '{' && jsontext.Value(b).IsValid() {
		var keys []string
		for _, sp := range spans {
			k, err := jsontext.AppendUnquote(nil, b[sp[0]:sp[1]])
			if err != nil {
				return keysDecoded(name, b)
			}
			keys = append(keys, string(k))
		}
		return keys, nil
	}
	return keysDecoded(name, b)
}

// keysDecoded is Keys by the decoder, token by token.
func keysDecoded(name string, b []byte) ([]string, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, explain(name, b, err)
	}
	if tok.Kind() != '{' {
		return nil, &Error{Name: name, Line: 1, Msg: "it is not a JSON object"}
	}
	var keys []string
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, explain(name, b, err)
		}
		keys = append(keys, tok.String())
		if err := dec.SkipValue(); err != nil {
			return nil, explain(name, b, err)
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, explain(name, b, err)
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, &Error{Name: name, Line: lineAt(b, dec.InputOffset()), Msg: "more follows the JSON object"}
	}
	return keys, nil
}

// checkDepth refuses nesting deeper than MaxDepth before any decoder
// builds values for it.
func checkDepth(name string, b []byte) error {
	_, err := scan(name, b)
	return err
}

// scan refuses nesting deeper than MaxDepth, and returns where the
// strings that stand as keys of an object at the top level begin and
// end (quotes included), which are the top-level keys when b is one
// valid JSON object. A string is crossed by looking for its next quote
// (bytes.IndexByte, which reads many bytes at a step): the quote ends
// the string unless an odd number of backslashes stands before it. A
// plan's document is mostly strings, so this reads a megabyte in a
// fraction of the time a byte-at-a-time reading takes.
func scan(name string, b []byte) (keys [][2]int, err error) {
	depth, key := 0, false
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			end, ok := stringEnd(b, i)
			if !ok {
				return keys, nil // an unterminated string: the decoder says so
			}
			if key && depth == 1 {
				keys = append(keys, [2]int{i, end + 1})
			}
			key = false
			i = end
		case '{', '[':
			if depth++; depth > MaxDepth {
				return nil, &Error{Name: name, Line: lineAt(b, int64(i)), Msg: fmt.Sprintf("it nests objects and arrays more than %d deep", MaxDepth)}
			}
			key = b[i] == '{'
		case '}', ']':
			depth--
		case ',':
			key = true
		}
	}
	return keys, nil
}

// stringEnd returns the offset of the quote that ends the string opened
// by the quote at open; ok is false when no quote ends it.
func stringEnd(b []byte, open int) (end int, ok bool) {
	for j := open + 1; ; j++ {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, false
		}
		j += k
		slashes := 0
		for p := j - 1; p > open && b[p] == '\\'; p-- {
			slashes++
		}
		if slashes%2 == 0 {
			return j, true
		}
	}
}

// explain turns a decoder's error into an *Error naming the line and key.
func explain(name string, b []byte, err error) error {
	e := &Error{Name: name}
	var syn *jsontext.SyntacticError
	var sem *json.SemanticError
	switch {
	case errors.As(err, &syn):
		e.Key = string(syn.JSONPointer)
		e.Line = lineAt(b, syn.ByteOffset)
		switch {
		case errors.Is(syn.Err, jsontext.ErrDuplicateName):
			e.Line = lineOfKey(b, syn.JSONPointer)
			e.Msg = "the key is given twice in one object; give it once"
		case errors.Is(syn.Err, io.ErrUnexpectedEOF):
			e.Msg = "the document ends early (truncated)"
		default:
			e.Msg = "not valid JSON: " + errText(syn.Err)
		}
	case errors.As(err, &sem):
		e.Key = string(sem.JSONPointer)
		e.Line = lineAt(b, sem.ByteOffset)
		switch {
		case errors.Is(sem.Err, json.ErrUnknownName):
			e.Msg = "no such key here (keys are matched exactly, case included); remove it or correct its spelling"
		case sem.JSONKind != 0 && sem.GoType != nil:
			e.Msg = fmt.Sprintf("a JSON %s cannot be a %s", sem.JSONKind, typeWord(sem.GoType.String()))
			if sem.Err != nil {
				e.Msg += ": " + errText(sem.Err)
			}
		case sem.Err != nil:
			e.Msg = errText(sem.Err)
		default:
			e.Msg = "cannot be read: " + errText(err)
		}
	default:
		e.Msg = errText(err)
	}
	return e
}

// lineAt is the 1-based line of byte offset off in b.
func lineAt(b []byte, off int64) int {
	if off < 0 || off > int64(len(b)) {
		return 0
	}
	return bytes.Count(b[:off], []byte{'\n'}) + 1
}

// lineOfKey is the line of the second occurrence of the last key of ptr
// inside the object ptr's parent names (a duplicated key); 0 if it cannot
// be found.
func lineOfKey(b []byte, ptr jsontext.Pointer) int {
	dec := jsontext.NewDecoder(bytes.NewReader(b), jsontext.AllowDuplicateNames(true))
	parent, last := string(ptr.Parent()), ptr.LastToken()
	seen := 0
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return 0
		}
		if tok.Kind() != '"' {
			continue
		}
		// A name just read leaves its object with an odd count of tokens,
		// and the stack pointer ending in that name.
		kind, n := dec.StackIndex(dec.StackDepth())
		p := dec.StackPointer()
		if kind == '{' && n%2 == 1 && string(p.Parent()) == parent && p.LastToken() == last {
			if seen++; seen == 2 {
				return lineAt(b, dec.InputOffset())
			}
		}
	}
}

func typeWord(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "list"
	case strings.HasPrefix(t, "map["):
		return "mapping"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return "number"
	case t == "string":
		return "string"
	case t == "bool":
		return "boolean"
	}
	return "mapping"
}

// errText is an error's text without the package prefixes.
func errText(err error) string {
	s := err.Error()
	for _, p := range []string{"jsontext: ", "json: "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

// Require refuses b, a JSON object, unless it has every key of keys,
// naming the first missing one and the keys required: for a document
// in which a missing key would read as an empty (and so harmless) value.
func Require(name string, b []byte, keys []string) error {
	have, err := Keys(name, b)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if !slices.Contains(have, k) {
			return fmt.Errorf("%s has no %q (keys required: %s)", name, k, strings.Join(keys, ", "))
		}
	}
	return nil
}
