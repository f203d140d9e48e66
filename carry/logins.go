package carry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/privdir"
)

// Logins resolves the caller's logins for the registry hosts given
// (host[:port], each once), where the caller runs and as the caller: from
// the Docker config file config (the caller's $DOCKER_CONFIG/config.json,
// else ~/.docker/config.json: caller.DockerConfig), through its
// credential helpers (credsStore, credHelpers) as docker and oras read
// them. Only those hosts' logins are returned, to be sent with the
// request for those hosts alone; a host with none is left out (the
// registry is reached without a login). A config that does not exist is
// no login. The file is opened first as every carried file is (without
// blocking, fstat-checked), so a FIFO or device there is refused.
func Logins(ctx context.Context, config string, hosts []string) ([]contract.Login, error) {
	if len(hosts) == 0 || config == "" {
		return nil, nil
	}
	f, err := privdir.OpenRegular(config, true)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the Docker config file for registry logins: %w", err)
	}
	f.Close()
	store, err := credentials.NewStore(config, credentials.StoreOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the Docker config file %s for registry logins: %w", config, err)
	}
	get := credentials.Credential(store)
	var out []contract.Login
	seen := map[string]bool{}
	for _, h := range hosts {
		if h == "" || seen[h] {
			continue
		}
		seen[h] = true
		c, err := get(ctx, h)
		if err != nil {
			return nil, fmt.Errorf("the login for %s in %s: %w", h, config, err)
		}
		if c.Username == "" && c.Password == "" && c.RefreshToken == "" && c.AccessToken == "" {
			continue
		}
		out = append(out, contract.Login{Host: h, Username: c.Username, Password: c.Password, RefreshToken: c.RefreshToken, AccessToken: c.AccessToken})
	}
	slices.SortFunc(out, func(a, b contract.Login) int { return strings.Compare(a.Host, b.Host) })
	return out, nil
}

// RegistryHosts are the registry hosts (host[:port]) of the registry
// sources (oci://HOST/…) among sources, each once, in order.
func RegistryHosts(sources ...string) []string {
	var hosts []string
	for _, s := range sources {
		rest, ok := strings.CutPrefix(s, "oci://")
		if !ok {
			continue
		}
		host, _, _ := strings.Cut(rest, "/")
		if host != "" && !slices.Contains(hosts, host) {
			hosts = append(hosts, host)
		}
	}
	return hosts
}
