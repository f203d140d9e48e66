package strictjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

type doc struct {
	Name  string          `json:"name"`
	Items []item          `json:"zarf_packages_to_deploy"`
	Tags  []string        `json:"tags,omitempty"`
	Raw   json.RawMessage `json:"raw,omitempty"`
}

type item struct {
	Name string `json:"name"`
}

func TestTwoReadersCannotSeeTwoDocuments(t *testing.T) {
	for _, c := range []struct {
		name, in    string
		line        int
		key, saying string
	}{
		{"a duplicated key", "{\n\"name\": \"a\",\n\"name\": \"b\"\n}", 3, "/name", "given twice"},
		{"a duplicated key deep down", "{\"zarf_packages_to_deploy\": [\n{\"name\": \"a\",\n \"name\": \"b\"}]}", 3, "/zarf_packages_to_deploy/0/name", "given twice"},
		{"a key that differs by case", "{\n\"name\": \"a\",\n\"Zarf_packages_to_deploy\": []}", 3, "/Zarf_packages_to_deploy", "case included"},
		{"an unknown key", "{\"name\": \"a\",\n\n\"ansible_facts\": {}}", 3, "/ansible_facts", "no such key"},
		{"a duplicated key inside a raw value", "{\"raw\": {\"x\": 1,\n\"x\": 2}}", 2, "/raw/x", "given twice"},
		{"a wrong type", "{\"name\": 3}", 1, "/name", "cannot be a string"},
		{"invalid UTF-8", "{\"name\": \"\xff\"}", 1, "/name", "UTF-8"},
		{"two documents", "{\"name\": \"a\"} {\"name\": \"b\"}", 1, "", "invalid"},
		{"truncated", "{\"name\": \"a\"", 1, "", "ends early"},
		{"deep nesting", "{\"raw\": " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "}", 1, "", "more than 64 deep"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var d doc
			err := Unmarshal("plan.json", []byte(c.in), &d)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v; want an *Error", err)
			}
			if e.Name != "plan.json" || e.Line != c.line || e.Key != c.key || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.saying)) {
				t.Errorf("got %q (line %d, key %q); want line %d, key %q, saying %q", err, e.Line, e.Key, c.line, c.key, c.saying)
			}
		})
	}
}

func TestAStrictDocumentReadsAsEncodingJSONReadsIt(t *testing.T) {
	in := `{"name": "a", "zarf_packages_to_deploy": [{"name": "x"}], "raw": {"k": [1, 2]}}`
	var strict, lax doc
	if err := Unmarshal("d", []byte(in), &strict); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(in), &lax); err != nil {
		t.Fatal(err)
	}
	if strict.Name != lax.Name || len(strict.Items) != 1 || strict.Items[0] != lax.Items[0] || string(strict.Raw) != string(lax.Raw) {
		t.Errorf("strict %+v; encoding/json %+v", strict, lax)
	}
}

func TestKeysAreTheTopLevelKeysOfAValidObject(t *testing.T) {
	keys, err := Keys("r", []byte(`{"a": {"b": 1}, "c": [1, {"d": 2}], "e": "f"}`))
	if err != nil || strings.Join(keys, ",") != "a,c,e" {
		t.Fatalf("got %v, %v; want a,c,e", keys, err)
	}
	for _, bad := range []string{`[1]`, `{"a": 1, "a": 2}`, `{"a": {"b": 1, "b": 2}}`, `{"a": 1} {}`, `{"a": 1`} {
		if _, err := Keys("r", []byte(bad)); err == nil {
			t.Errorf("Keys(%s) accepted it", bad)
		}
	}
}

func TestReadRefusesMoreThanItsBound(t *testing.T) {
	var d doc
	err := Read("big", strings.NewReader(`{"name": "`+strings.Repeat("a", 100)+`"}`), 50, &d)
	if err == nil || !strings.Contains(err.Error(), "over 50 bytes") {
		t.Errorf("got %v; want refused over 50 bytes", err)
	}
}

// TestANullDocumentIsRefused: the decoder reads JSON null as the zero
// value, so a document that is null would be an empty one (a plan result
// of null rendered as a plan without a plan, and panicked: CI's fuzz).
// Where an object is expected, null is refused by both readers; where v
// is not a struct, null stays the zero value it is.
func TestANullDocumentIsRefused(t *testing.T) {
	for _, b := range []string{"null", " null\n", "\tnull"} {
		var d doc
		err := Unmarshal("the doc", []byte(b), &d)
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), "null") {
			t.Errorf("Unmarshal(%q): %v, want a refusal naming null", b, err)
		}
		if err := UnmarshalPart("the doc", []byte(b), &d); err == nil {
			t.Errorf("UnmarshalPart(%q) took a null document", b)
		}
	}
	var names []string
	if err := Unmarshal("names", []byte("null"), &names); err != nil || names != nil {
		t.Errorf("a null list: %v %v, want nil and no error", names, err)
	}
	var d doc
	if err := Unmarshal("the doc", []byte(`{"name":"x","zarf_packages_to_deploy":null}`), &d); err != nil || d.Name != "x" {
		t.Errorf("null inside an object is a value like any other: %v", err)
	}
}

// depthByByte is checkDepth as it was first written, a byte at a time:
// the reading checkDepth must agree with.
func depthByByte(b []byte) (deepAt int, deep bool) {
	depth, inString, escaped := 0, false, false
	for i, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > MaxDepth {
				return i, true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return 0, false
}

// FuzzCheckDepthReadsAsAByteAtATime: the depth check that crosses
// strings by their next quote refuses exactly what a byte-at-a-time
// reading refuses, at the same line.
func FuzzCheckDepthReadsAsAByteAtATime(f *testing.F) {
	deep := strings.Repeat("[", MaxDepth+1)
	for _, s := range []string{`{}`, deep, `"` + deep + `"`, `"\"` + deep, `"\\"` + deep, `"\\\"` + deep, `"\\\\"` + deep,
		`{"a\\":"` + deep + `"}`, `{"k":"v\"[["}` + deep, "\"a\nb\"\n" + deep, `"unterminated` + deep, `\"` + deep, `[[["\\\\\\\\\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		at, deep := depthByByte(b)
		err := checkDepth("doc", b)
		if deep != (err != nil) {
			t.Fatalf("%q: byte at a time deep=%v, checkDepth %v", b, deep, err)
		}
		if deep && err.(*Error).Line != lineAt(b, int64(at)) {
			t.Fatalf("%q: line %d, want %d", b, err.(*Error).Line, lineAt(b, int64(at)))
		}
	})
}

// FuzzKeysReadsAsTheDecoder: Keys gives the keys the decoder reads token
// by token, in order, and refuses what it refuses, with the same error.
func FuzzKeysReadsAsTheDecoder(f *testing.F) {
	for _, s := range []string{`{}`, ` {"a":1} `, `{"a":{"b":[1,{"c":2}]},"d":"}"}`, `{"a\"b":1,"\u00e9":2}`, `{"a":1,"a":2}`, `{"a":1}{}`, `[1]`, `"s"`, `{"a":"\xff"}`,
		`{"a":[{"b":1},{"b":2}],"c":null}`, `{"a":1,}`, `{"a" : 1 , "b" : [ ] }`, "{\n\"k\":\n\"v\"\n}", `{"\\":1,"\\\"":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, gerr := Keys("doc", b)
		want, werr := func() ([]string, error) {
			if err := checkDepth("doc", b); err != nil {
				return nil, err
			}
			return keysDecoded("doc", b)
		}()
		if fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("%q: error %v, the decoder's %v", b, gerr, werr)
		}
		if gerr == nil && !slices.Equal(got, want) {
			t.Fatalf("%q: keys %q, the decoder's %q", b, got, want)
		}
	})
}
