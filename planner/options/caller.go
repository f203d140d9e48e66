package options

import (
	"fmt"
	"strings"
)

// Caller is who gives the options, and so how a message names them: a
// module user writes `exclude: [a]`, a CLI user `--exclude a`. Messages
// build their option references through a Caller, never by spelling an
// option themselves.
type Caller string

// Callers.
const (
	// ModuleCaller names options as Ansible module options (the default).
	ModuleCaller Caller = "module"
	// CLICaller names options as zarf-planner command-line flags.
	CLICaller Caller = "cli"
)

// Valid reports whether c is a known caller ("" counts as the module).
func (c Caller) Valid() bool { return c == "" || c == ModuleCaller || c == CLICaller }

func (c Caller) cli() bool { return c == CLICaller }

// Name is the option as the caller types it: "exclude" or "--exclude".
func (c Caller) Name(name string) string {
	if c.cli() {
		return "--" + strings.ReplaceAll(name, "_", "-")
	}
	return name
}

// Option refers to an option in a sentence: "option exclude" or
// "--exclude".
func (c Caller) Option(name string) string {
	if c.cli() {
		return c.Name(name)
	}
	return "option " + name
}

// The refers to an option as the subject of a sentence: "the flavor
// option" or "--flavor".
func (c Caller) The(name string) string {
	if c.cli() {
		return c.Name(name)
	}
	return "the " + name + " option"
}

// Setting shows an option set to a value: "allow_downgrade: true" or
// "--allow-downgrade", "architecture: arm64" or "--architecture arm64".
func (c Caller) Setting(name, value string) string {
	if !c.cli() {
		return name + ": " + value
	}
	if value == "true" {
		return c.Name(name)
	}
	return c.Name(name) + " " + shellWord(value)
}

// List shows a list option set to values: "prereleases: [a, b]" or
// "--prereleases a,b".
func (c Caller) List(name string, values ...string) string {
	if c.cli() {
		return c.Name(name) + " " + shellWord(strings.Join(values, ","))
	}
	return name + ": [" + strings.Join(values, ", ") + "]"
}

// Entry shows one entry of a map option: `select: {"g": a}` or
// `--select g=a`; `priorities: {a: 100}` or `--priorities a=100`. A
// module's string map quotes its key (it may hold commas).
func (c Caller) Entry(name, key, value string) string {
	if c.cli() {
		return c.Name(name) + " " + shellWord(key+"="+value)
	}
	if o, ok := Find(Request{}, name); ok && o.Kind == StringMap {
		return fmt.Sprintf("%s: {%q: %s}", name, key, value)
	}
	return fmt.Sprintf("%s: {%s: %s}", name, key, value)
}

// shellWord quotes s for a POSIX shell when it holds anything a shell
// would read specially.
func shellWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\"'\\$`<>|&;()*?[]#~!{}") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
