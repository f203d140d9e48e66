package cache

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/inspect"
)

// fill sets every exported field reachable from v (a settable value) to
// something drawn from r and words: strings (with quotes, escapes, HTML,
// control and non-ASCII characters, invalid UTF-8), numbers of every
// sign, nil and empty and full slices and maps, nil and set pointers.
// An interface is left nil: the cache's values hold none.
func fill(v reflect.Value, r *rand.Rand, words []string, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(words[r.IntN(len(words))] + words[r.IntN(len(words))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := r.Int64() >> r.IntN(64)
		if r.IntN(2) == 1 {
			n = -n
		}
		if v.OverflowInt(n) {
			n = int64(r.IntN(128))
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n := r.Uint64() >> r.IntN(64)
		if v.OverflowUint(n) {
			n = uint64(r.IntN(256))
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(r.IntN(1 << 20)))
	case reflect.Pointer:
		if depth > 6 || r.IntN(3) == 0 {
			return // nil
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), r, words, depth+1)
	case reflect.Slice:
		switch n := r.IntN(4); {
		case depth > 6 || n == 0:
			// nil
		default:
			n--
			v.Set(reflect.MakeSlice(v.Type(), n, n))
			for i := range n {
				fill(v.Index(i), r, words, depth+1)
			}
		}
	case reflect.Map:
		if depth > 6 || r.IntN(3) == 0 {
			return // nil
		}
		m := reflect.MakeMap(v.Type())
		for range r.IntN(3) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k, r, words, depth+1)
			fill(e, r, words, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), r, words, depth+1)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Unix(r.Int64N(1<<36), r.Int64N(1e9)).UTC()))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), r, words, depth+1)
			}
		}
	}
}

// FuzzCacheValuesReadAsEncodingJSONReadsThem: what the cache writes with
// encoding/json's Marshal, its reader (unmarshal) reads back as
// encoding/json's Unmarshal does, field for field, nil for nil and empty
// for empty: a content entry with every field set, a path entry, and a
// registry source's listing (descriptors with annotations, platforms
// and data).
func FuzzCacheValuesReadAsEncodingJSONReadsThem(f *testing.F) {
	f.Add(uint64(1), "init")
	f.Add(uint64(2), "\"\\<>&\u2028\x00\xff")
	f.Add(uint64(3), "é☃\U0001F600\t\n")
	f.Fuzz(func(t *testing.T, seed uint64, word string) {
		r := rand.New(rand.NewPCG(seed, 47))
		words := []string{"", word, "a", "\"", "\\", "<script>", "\u2028", "\xff", "é", "\x01", "cert-manager.io"}
		for _, v := range []any{&entry{}, &pathEntry{}, &inspect.Outcome{}, &inspect.Listing{}} {
			fill(reflect.ValueOf(v).Elem(), r, words, 0)
			raw, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			want := reflect.New(reflect.TypeOf(v).Elem())
			if err := json.Unmarshal(raw, want.Interface()); err != nil {
				t.Fatalf("encoding/json cannot read what it wrote: %v\n%s", err, raw)
			}
			got := reflect.New(reflect.TypeOf(v).Elem())
			if err := unmarshal(raw, got.Interface()); err != nil {
				t.Fatalf("the cache's reader refused what encoding/json wrote: %v\n%s", err, raw)
			}
			if !reflect.DeepEqual(got.Interface(), want.Interface()) {
				again, _ := json.Marshal(got.Interface())
				t.Fatalf("read differently from encoding/json:\nwritten %s\nreread  %s", raw, again)
			}
		}
	})
}

// TestTheCacheReaderRefusesWhatMarshalNeverWrites: a key given twice or
// invalid UTF-8 in a stored value is refused (the value is read as
// absent), where encoding/json would take the last key or replace the
// byte.
func TestTheCacheReaderRefusesWhatMarshalNeverWrites(t *testing.T) {
	for _, raw := range [][]byte{
		[]byte(`{"schema":1,"schema":2}`),
		[]byte("{\"sha256\":\"\xff\"}"),
		[]byte(`{"schema":1} {}`),
	} {
		var e pathEntry
		if err := unmarshal(raw, &e); err == nil {
			t.Errorf("%q read as %+v; want it refused", raw, e)
		}
	}
	var e pathEntry
	if err := unmarshal(bytes.TrimSpace([]byte(` {"schema":3,"sha256":"ab"} `)), &e); err != nil || e.Schema != 3 || e.SHA256 != "ab" {
		t.Fatalf("a plain entry read as %+v, %v", e, err)
	}
}
