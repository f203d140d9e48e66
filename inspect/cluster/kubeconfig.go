package cluster

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Pinned is a kubeconfig for the one cluster k names and nothing else: k's
// context made the current one, only what that context uses kept
// (minified), and every certificate and key file it names read in
// (flattened), so it stands on its own wherever it is written. It is for
// tools that take no context (zarf, and the Helm inside it): given it as
// their KUBECONFIG, they reach the cluster k names, as the planner and the
// barriers do. It also returns the context's name.
func (k Kube) Pinned() ([]byte, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if k.Kubeconfig != "" {
		rules.ExplicitPath = k.Kubeconfig
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
		return nil, name, fmt.Errorf("kubeconfig %s has no context %q (it has: %s); name one with context", k.Kubeconfig, name, strings.Join(names, ", "))
	}
	raw.CurrentContext = name
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
