package claims_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/zarf-dev/zarf/src/api/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

func collectYAML(t *testing.T, zarfYAML string) facts.Contents {
	t.Helper()
	var pkg v1alpha1.ZarfPackage
	if err := yaml.Unmarshal([]byte(zarfYAML), &pkg); err != nil {
		t.Fatal(err)
	}
	c, err := claims.Collect(context.Background(), pkg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFilesAndActionsAreHostClaimsInZarfYAMLOrder(t *testing.T) {
	c := collectYAML(t, `
kind: ZarfPackageConfig
metadata: {name: host}
components:
  - name: tools
    files:
      - {source: bin/tool, target: /usr/local/bin/tool, executable: true, symlinks: [/usr/bin/tool]}
      - {source: "https://example.com/conf", target: conf/app.conf}
    actions:
      onRemove:
        before: [{cmd: rm -f /usr/local/bin/tool}]
      onDeploy:
        defaults: {dir: /opt}
        onFailure: [{cmd: "echo failed \u001b[31m"}]
        after:
          - {wait: {cluster: {kind: pod, name: app=web, namespace: gadgets, condition: Ready}}, cmd: ignored}
          - {wait: {network: {protocol: http, address: localhost:8080, code: 200}}}
          - {wait: {cluster: {kind: Deployment, name: web}}, description: the web}
        before: [{cmd: "curl -s https://example.com/x | sh", dir: /tmp, description: fetch}]
      onCreate:
        before: [{cmd: make}]
  - name: second
    actions:
      onDeploy:
        onSuccess: [{cmd: echo ok}]
`)
	if got := c.Claims.HostFiles; len(got) != 2 || (got[0].Target != "/usr/local/bin/tool" || !got[0].Executable || got[0].Source != "bin/tool" || !slices.Equal(got[0].Symlinks, []string{"/usr/bin/tool"})) ||
		got[1].Target != "conf/app.conf" || got[1].Executable || len(got[1].Symlinks) != 0 || got[1].Component != "tools" {
		t.Errorf("host files: got %+v", got)
	}
	var got []string
	for _, a := range c.Claims.Actions {
		got = append(got, a.Component+" "+a.Event+" ["+a.Command+"] dir="+a.Dir+" desc="+a.Description+map[bool]string{true: " wait"}[a.Wait])
	}
	want := []string{
		"tools onCreate.before [make] dir= desc=",
		"tools onDeploy.before [curl -s https://example.com/x | sh] dir=/tmp desc=fetch",
		"tools onDeploy.after [wait for cluster pod app=web in gadgets to be Ready] dir=/opt desc= wait",
		"tools onDeploy.after [wait for network http localhost:8080 to answer 200] dir=/opt desc= wait",
		"tools onDeploy.after [wait for cluster Deployment web to exist] dir=/opt desc=the web wait",
		"tools onDeploy.onFailure [echo failed \\x1b[31m] dir=/opt desc=",
		"tools onRemove.before [rm -f /usr/local/bin/tool] dir= desc=",
		"second onDeploy.onSuccess [echo ok] dir= desc=",
	}
	if !slices.Equal(got, want) {
		t.Errorf("actions:\ngot  %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// A zarf.yaml zarf has not migrated still holds scripts: they run as
// zarf's migration makes them run, after the actions of their list; once
// build.migrations says they were moved, they are not counted twice.
func TestDeprecatedScriptsAreActionsAsZarfMigratesThem(t *testing.T) {
	src := `
kind: ZarfPackageConfig
metadata: {name: old}
%s
components:
  - name: legacy
    actions: {onDeploy: {before: [{cmd: first}]}}
    scripts: {prepare: [make], before: [pre], after: [post]}
`
	c := collectYAML(t, strings.Replace(src, "%s", "", 1))
	var got []string
	for _, a := range c.Claims.Actions {
		got = append(got, a.Event+" "+a.Command)
	}
	if want := []string{"onCreate.before make", "onDeploy.before first", "onDeploy.before pre", "onDeploy.after post"}; !slices.Equal(got, want) {
		t.Errorf("unmigrated: got %q; want %q", got, want)
	}
	c = collectYAML(t, strings.Replace(src, "%s", "build: {migrations: [scripts-to-actions]}", 1))
	if len(c.Claims.Actions) != 1 || c.Claims.Actions[0].Command != "first" {
		t.Errorf("migrated: got %+v; want the one action", c.Claims.Actions)
	}
}
