package caller

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/colonel-byte/zarf-planner/planner/options"
)

// The caller's environment this package reads, and no other package does:
// the cluster options' fallbacks, as kubernetes.core reads them, and the
// reproducible-builds time of a page.
const (
	EnvKubeconfig = "K8S_AUTH_KUBECONFIG"
	EnvContext    = "K8S_AUTH_CONTEXT"
	// EnvSourceDateEpoch fixes the time a page states, so the pages of
	// one plan are byte-identical.
	EnvSourceDateEpoch = "SOURCE_DATE_EPOCH"
	// EnvCosignPassword is the password of the private key an approval
	// is signed with, where cosign reads it (approval.EnvPassword).
	EnvCosignPassword = "COSIGN_PASSWORD"
	// EnvDockerConfig is the directory of the Docker config file that
	// holds the caller's registry logins, as docker and oras read it.
	EnvDockerConfig = "DOCKER_CONFIG"
	// EnvTrace, set to 1, has the module write how long each stage of
	// its run took to its standard error (module/stages): what
	// make bench-cache prints of the module's side.
	EnvTrace = "ZARF_PLANNER_TRACE"
)

// Trace says the caller asked for the module's stages (EnvTrace is 1).
func Trace() bool { return os.Getenv(EnvTrace) == "1" }

// DockerConfig is the caller's Docker config file, which holds its
// registry logins: $DOCKER_CONFIG/config.json, else
// ~/.docker/config.json ("" when neither can be named). The caller
// resolves its logins from it (carry.Logins); the daemon reads none.
func DockerConfig() string {
	if d := os.Getenv(EnvDockerConfig); d != "" {
		abs, _ := filepath.Abs(filepath.Join(d, "config.json"))
		return abs
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".docker", "config.json")
	}
	return ""
}

// SigningPassword is the password of the caller's cosign private key.
func SigningPassword() []byte { return []byte(os.Getenv(EnvCosignPassword)) }

// Cluster is the cluster a caller means: explicit's kubeconfig and context
// where given, else the caller's environment (Kubeconfigs, Context). Every
// command that reaches a cluster, itself or through the daemon, takes its
// cluster from here, so none can forget K8S_AUTH_KUBECONFIG,
// K8S_AUTH_CONTEXT or a KUBECONFIG of several files.
func Cluster(explicit options.Cluster) options.Cluster {
	path, precedence := Kubeconfigs(explicit.Kubeconfig)
	return options.Cluster{Kubeconfig: path, KubeconfigPrecedence: precedence, Context: Context(explicit.Context)}
}

// Kubeconfigs are the kubeconfig files a caller means, as kubectl finds
// them: one path when one is given (explicit, else K8S_AUTH_KUBECONFIG),
// made absolute; else the files KUBECONFIG lists, in order, made
// absolute, empty entries and repeats dropped, as precedence (client-go
// merges them: the first file to set a value wins); else
// ~/.kube/config. Clients always send these: the daemon serves many
// callers and never reads its own environment.
func Kubeconfigs(explicit string) (path string, precedence []string) {
	if explicit == "" {
		explicit = os.Getenv(EnvKubeconfig)
	}
	if explicit != "" {
		abs, _ := filepath.Abs(explicit)
		return abs, nil
	}
	for _, p := range filepath.SplitList(os.Getenv("KUBECONFIG")) {
		if p == "" {
			continue
		}
		abs, _ := filepath.Abs(p)
		if !slices.Contains(precedence, abs) {
			precedence = append(precedence, abs)
		}
	}
	if len(precedence) > 0 {
		return "", precedence
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".kube", "config"), nil
	}
	return "", nil
}

// Context is the kubeconfig context a caller means: explicit, else
// K8S_AUTH_CONTEXT, else "" (the kubeconfig's current context).
func Context(explicit string) string {
	if explicit != "" {
		return explicit
	}
	return os.Getenv(EnvContext)
}

// Time is the time a caller states on a page (contract.PlanRequest.Time, the
// catalog's page): SOURCE_DATE_EPOCH when set, else now. Like the
// kubeconfig, it is the caller's: the daemon does not read its own
// environment for a caller. A SOURCE_DATE_EPOCH that is not a time is an
// *ArgError.
func Time() (int64, error) {
	v, ok := os.LookupEnv(EnvSourceDateEpoch)
	if !ok || v == "" {
		return time.Now().Unix(), nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, &ArgError{fmt.Errorf("%s is %q; want a positive number of seconds since 1970", EnvSourceDateEpoch, v)}
	}
	return n, nil
}
