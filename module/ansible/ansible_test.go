package ansible

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

var spec = Spec{
	Options: map[string]Option{
		"name":    {Type: TypeStr, Required: true},
		"count":   {Type: TypeInt, Default: int64(3)},
		"enabled": {Type: TypeBool, Default: false},
		"tags":    {Type: TypeList, Elements: TypeStr},
		"weights": {Type: TypeDict, Elements: TypeInt},
		"token":   {Type: TypeStr, NoLog: true},
		"path":    {Type: TypePath},
		"mode":    {Type: TypeStr, Choices: []string{"fast", "slow"}},
		"a":       {Type: TypeStr},
		"b":       {Type: TypeStr},
	},
	MutuallyExclusive: [][]string{{"a", "b"}},
}

func TestValidateConvertsLikeAnsibleModule(t *testing.T) {
	t.Setenv("HOME", "/home/op")
	inv, err := spec.Validate(decode(t, `{"name": 7, "count": "12", "enabled": "yes", "tags": "x, y", "weights": {"a": "5"},
		"token": "s3cret", "path": "~/bundles", "_ansible_check_mode": true, "_ansible_diff": "no", "_ansible_new_thing": 1, "_ansible_module_name": "m"}`))
	if err != nil {
		t.Fatal(err)
	}
	p := inv.Params
	if p["name"] != "7" || p["count"] != int64(12) || p["enabled"] != true || p["path"] != "/home/op/bundles" {
		t.Errorf("params %v", p)
	}
	if tags := p["tags"].([]any); len(tags) != 2 || tags[1] != "y" {
		t.Errorf("tags %v", tags)
	}
	if w := p["weights"].(map[string]any); w["a"] != int64(5) {
		t.Errorf("weights %v", w)
	}
	if !inv.CheckMode || inv.Diff || inv.ModuleName != "m" {
		t.Errorf("internal keys: %+v", inv)
	}
	args := spec.ModuleArgs(inv)
	if args["token"] != "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER" || args["name"] != "7" || args["count"] != int64(12) {
		t.Errorf("module_args %v; want token masked and the rest shown", args)
	}
	if args["mode"] != nil {
		t.Errorf("unset option without default = %v; want nil", args["mode"])
	}
}

func TestValidateRejects(t *testing.T) {
	tests := map[string]struct{ args, want string }{
		"unknown option":     {`{"name": "n", "nmae": 1, "zzz": 2}`, "Unsupported parameters for (m) module: nmae, zzz. Supported parameters include: a, b, count"},
		"missing required":   {`{"_ansible_module_name": "m"}`, "missing required arguments: name"},
		"bad int":            {`{"name": "n", "count": 1.5}`, "argument 'count' is of type int and we were unable to convert to int: 1.5 is not a whole number"},
		"bad bool":           {`{"name": "n", "enabled": "perhaps"}`, "unable to convert to bool"},
		"bad choice":         {`{"name": "n", "mode": "medium"}`, "value of mode must be one of: fast, slow, got: medium"},
		"mutually exclusive": {`{"name": "n", "a": "1", "b": "2"}`, "parameters are mutually exclusive: a|b"},
		"dict expected":      {`{"name": "n", "weights": [1]}`, "argument 'weights' is of type list"},
		"element type":       {`{"name": "n", "weights": {"a": "x"}}`, `value of key a: "x" is not a whole number`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			raw := decode(t, tt.args)
			if _, ok := raw["_ansible_module_name"]; !ok {
				raw["_ansible_module_name"] = "m"
			}
			_, err := spec.Validate(raw)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %v; want %q", err, tt.want)
			}
		})
	}
}

func TestPrintWritesOneObject(t *testing.T) {
	var b strings.Builder
	if err := Fail(&b, "bad <thing> & more", map[string]any{"errors": []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, `"msg":"bad <thing> & more"`) || !strings.Contains(out, `"changed":false`) || !strings.Contains(out, `"failed":true`) {
		t.Errorf("printed %q", out)
	}
}

func TestPrintMergedAddsKeysWithoutDecoding(t *testing.T) {
	var b strings.Builder
	if err := PrintMerged(&b, []byte(` {"a": [1, 2], "msg": "x < y"} `), map[string]any{"invocation": map[string]any{"k": "v"}}, nil); err != nil {
		t.Fatal(err)
	}
	got := decode(t, b.String())
	if got["msg"] != "x < y" || got["changed"] != false || got["invocation"].(map[string]any)["k"] != "v" || len(got["a"].([]any)) != 2 {
		t.Errorf("merged %q", b.String())
	}
	if err := PrintMerged(&b, []byte(`[1]`), map[string]any{}, nil); err == nil {
		t.Error("a JSON list was accepted as a result")
	}
	b.Reset()
	if err := PrintMerged(&b, []byte(`{}`), map[string]any{"x": 1}, nil); err != nil || decode(t, b.String())["x"] == nil {
		t.Errorf("empty object: %q, %v", b.String(), err)
	}
}

// Whatever a document holds, the module returns no key Ansible gives a
// meaning of its own, none it adds itself, none the module's results do
// not have, and nothing Python and Go would read two ways.
func TestPrintMergedRefusesWhatAnsibleWouldReadAsItsOwn(t *testing.T) {
	plan := func(k string) bool { return k == "zarf_packages_to_deploy" || k == "msg" }
	for _, c := range []struct {
		name, doc string
		allowed   func(string) bool
	}{
		{"host facts", `{"msg": "x", "ansible_facts": {"zarf_bin": "/tmp/evil"}}`, nil},
		{"an ansible_ variable", `{"ansible_become_exe": "/tmp/evil"}`, nil},
		{"an internal key", `{"_ansible_no_log": false}`, nil},
		{"changed", `{"changed": true}`, nil},
		{"a key the module adds", `{"invocation": {}}`, nil},
		{"a key given twice", `{"zarf_packages_to_deploy": [], "zarf_packages_to_deploy": [{"name": "evil"}]}`, plan},
		{"a key given twice deep down", `{"zarf_packages_to_deploy": [{"name": "a", "name": "evil"}]}`, plan},
		{"a key spelled with other case", `{"zarf_packages_to_deploy": [], "Zarf_packages_to_deploy": []}`, plan},
		{"a key no plan has", `{"msg": "x", "deploy_first": ["evil"]}`, plan},
		{"more than one object", `{"msg": "x"} {"msg": "y"}`, plan},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			err := PrintMerged(&b, []byte(c.doc), map[string]any{"invocation": map[string]any{}}, c.allowed)
			if !errors.Is(err, ErrRefused) || b.Len() > 0 {
				t.Errorf("got %v, wrote %q; want refused, nothing written", err, b.String())
			}
		})
	}
}
