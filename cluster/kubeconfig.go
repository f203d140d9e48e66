package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"slices"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"sigs.k8s.io/yaml"

	"github.com/colonel-byte/zarf-planner/privdir"
)

// checkKubeconfigs opens each kubeconfig file rules would read as
// privdir.OpenRegular does (without blocking, fstat-checked) and refuses
// a FIFO, device or socket before client-go's own open(2) could block on
// it forever. A missing file of a precedence list is left to client-go,
// which passes over it as kubectl does (a KUBECONFIG list may name files
// that do not exist), but a list none of whose files exists is refused,
// naming them, rather than read as an empty configuration. client-go
// then opens the files again by name: this refuses what is there, it
// cannot pin what client-go reads; the files the kubeconfig names
// (certificates, keys) are checked apart (checkContextFiles).
func checkKubeconfigs(rules *clientcmd.ClientConfigLoadingRules) error {
	found := false
	for _, p := range rules.GetLoadingPrecedence() {
		if p == "" {
			continue
		}
		f, err := privdir.OpenRegular(p, true)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading kubeconfig: %w", err)
		}
		err = checkKubeconfigText(p, f)
		f.Close()
		if err != nil {
			return err
		}
		found = true
	}
	if !found && rules.ExplicitPath == "" {
		return fmt.Errorf("reading kubeconfig: none of the files KUBECONFIG lists exists (%s); set KUBECONFIG to existing files, or give kubeconfig", strings.Join(rules.Precedence, ", "))
	}
	return nil
}

// maxKubeconfigChecked is the largest kubeconfig checkKubeconfigText
// reads (one with many embedded certificates is a few hundred KiB); a
// larger one is left to client-go as it is.
const maxKubeconfigChecked = 16 << 20

// checkKubeconfigText reads the kubeconfig at path (open as f) and, when
// it is not one client-go can decode, says so naming the file and what is
// wrong in words: not YAML (with the line), YAML that is not a mapping,
// or a field of another type than a kubeconfig's (clusters a number). For
// those client-go's own messages name a Go type ("cannot unmarshal string
// into Go value of type struct { APIVersion string ... }"). An empty file
// is an empty kubeconfig, as client-go takes it.
func checkKubeconfigText(path string, f io.Reader) error {
	b, err := io.ReadAll(io.LimitReader(f, maxKubeconfigChecked+1))
	if err != nil {
		return fmt.Errorf("reading kubeconfig %s: %w", path, err)
	}
	if len(b) > maxKubeconfigChecked || len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	const want = "a kubeconfig is a YAML mapping (apiVersion: v1, kind: Config, clusters, contexts, users); fix the file or name another kubeconfig"
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return fmt.Errorf("kubeconfig %s is not YAML: %w; %s", path, err, want)
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err) // YAMLToJSON writes JSON: not met
	}
	switch v.(type) {
	case map[string]any, nil:
	default:
		return fmt.Errorf("kubeconfig %s holds %s, not a mapping: %s", path, jsonKind(v), want)
	}
	var typed clientcmdv1.Config
	var te *json.UnmarshalTypeError
	if err := json.Unmarshal(j, &typed); errors.As(err, &te) {
		return fmt.Errorf("kubeconfig %s: field %s is %s where %s belongs; %s", path, te.Field, article(te.Value), goKind(te.Type), want)
	}
	return nil
}

// jsonKind says what a decoded JSON value is, in words.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	}
	return "a mapping"
}

// article is a JSON kind as encoding/json names it ("number", "array",
// "object"), in the words jsonKind uses.
func article(kind string) string {
	switch kind {
	case "array":
		return "a list"
	case "object":
		return "a mapping"
	case "bool":
		return "a boolean"
	}
	return "a " + kind
}

// goKind says what a field of type t holds, in the words jsonKind uses.
func goKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a string (base64)"
		}
		return "a list"
	case reflect.Map, reflect.Struct, reflect.Pointer, reflect.Interface:
		return "a mapping"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	}
	return "a number"
}

// checkContextFiles checks, as checkKubeconfigs does, the files the
// context name of raw uses (its cluster's certificate authority, its
// user's certificate, key and token file), which client-go reads by name
// when it builds a client or flattens the config. Paths are as client-go
// resolved them (relative to their kubeconfig).
func checkContextFiles(raw *clientcmdapi.Config, name string) error {
	ctx, ok := raw.Contexts[name]
	if !ok {
		return nil
	}
	var files []string
	if c, ok := raw.Clusters[ctx.Cluster]; ok {
		files = append(files, c.CertificateAuthority)
	}
	if u, ok := raw.AuthInfos[ctx.AuthInfo]; ok {
		files = append(files, u.ClientCertificate, u.ClientKey, u.TokenFile)
	}
	for _, p := range files {
		if p == "" {
			continue
		}
		f, err := privdir.OpenRegular(p, true)
		if err != nil {
			return fmt.Errorf("kubeconfig context %q: %w", name, err)
		}
		f.Close()
	}
	return nil
}

// Pinned is a kubeconfig for the one cluster k names and nothing else: k's
// context made the current one, only what that context uses kept
// (minified), and every certificate and key file it names read in
// (flattened), so it stands on its own wherever it is written. It is for
// tools that take no context (zarf, and the Helm inside it): given it as
// their KUBECONFIG, they reach the cluster k names, as the planner and the
// barriers do. It also returns the context's name.
func (k Kube) Pinned() ([]byte, string, error) {
	rules := k.rules()
	if err := checkKubeconfigs(rules); err != nil {
		return nil, "", err
	}
	raw, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).RawConfig()
	if err != nil {
		return nil, "", fmt.Errorf("reading kubeconfig: %w", err)
	}
	name := k.Context
	if name == "" {
		name = raw.CurrentContext
	}
	if _, ok := raw.Contexts[name]; !ok || name == "" {
		var names []string
		for n := range raw.Contexts {
			names = append(names, n)
		}
		slices.Sort(names)
		return nil, name, fmt.Errorf("kubeconfig %s has no context %q (it has: %s); name one with context", k.Files(), name, strings.Join(names, ", "))
	}
	raw.CurrentContext = name
	if err := checkContextFiles(&raw, name); err != nil {
		return nil, name, err
	}
	if err := clientcmdapi.MinifyConfig(&raw); err != nil {
		return nil, name, fmt.Errorf("kubeconfig context %q: %w", name, err)
	}
	if err := clientcmdapi.FlattenConfig(&raw); err != nil {
		return nil, name, fmt.Errorf("kubeconfig context %q: reading the files it names: %w", name, err)
	}
	b, err := clientcmd.Write(raw)
	if err != nil {
		return nil, name, fmt.Errorf("kubeconfig context %q: %w", name, err)
	}
	return b, name, nil
}
