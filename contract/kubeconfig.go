package contract

import (
	"os"
	"path/filepath"
	"strings"
)

// Environment fallbacks for the cluster options, as kubernetes.core reads
// them.
const (
	EnvKubeconfig = "K8S_AUTH_KUBECONFIG"
	EnvContext    = "K8S_AUTH_CONTEXT"
)

// CallerKubeconfig is the kubeconfig path a client of the daemon means: the
// explicit flag or option, else K8S_AUTH_KUBECONFIG, else the first entry
// of KUBECONFIG, else ~/.kube/config, made absolute. Clients always send
// this path: the daemon serves many callers and never reads its own
// environment.
func CallerKubeconfig(explicit string) string {
	if explicit == "" {
		explicit = os.Getenv(EnvKubeconfig)
	}
	if explicit != "" {
		abs, _ := filepath.Abs(explicit)
		return abs
	}
	if env := os.Getenv("KUBECONFIG"); env != "" {
		first, _, _ := strings.Cut(env, string(os.PathListSeparator))
		abs, _ := filepath.Abs(first)
		return abs
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".kube", "config")
	}
	return ""
}

// CallerContext is the kubeconfig context a client means: the explicit
// flag or option, else K8S_AUTH_CONTEXT, else "" (the kubeconfig's
// current context).
func CallerContext(explicit string) string {
	if explicit != "" {
		return explicit
	}
	return os.Getenv(EnvContext)
}
