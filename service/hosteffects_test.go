package service

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// testdata/bundles/hosteffects is built by the real zarf CLI from
// testdata/sources/hosteffects: a package that writes a file on the host,
// runs actions, and deploys a workload with an image it does not list.
func TestTheCatalogShowsHostEffectsAndWarnsOfAnImageNotCarried(t *testing.T) {
	cat, err := CatalogOf(context.Background(), "../testdata/bundles/hosteffects", nil, inspect.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Packages) != 1 {
		t.Fatalf("packages: got %+v; want tools", cat.Packages)
	}
	p := cat.Packages[0]
	cl := p.Claims
	if got := cl.HostFiles; len(got) != 1 || got[0].Target != "/opt/tools/bin/tool" || got[0].Source != "files/tool.sh" || !got[0].Executable ||
		!slices.Equal(got[0].Symlinks, []string{"/usr/local/bin/tool"}) || got[0].Component != "tools" {
		t.Errorf("host files: got %+v", got)
	}
	var actions []string
	for _, a := range cl.Actions {
		actions = append(actions, a.Event+": "+a.Command)
	}
	want := []string{
		"onCreate.before: test -f files/tool.sh",
		"onDeploy.before: echo deploying tools",
		"onDeploy.after: wait for cluster Deployment app in tools to be Available",
		"onRemove.before: rm -f /opt/tools/bin/tool",
	}
	if !slices.Equal(actions, want) {
		t.Errorf("actions:\ngot  %q\nwant %q", actions, want)
	}
	if a := cl.Actions; len(a) == 4 && (a[0].Description != "Check the tool is there" || a[0].Wait || !a[2].Wait) {
		t.Errorf("actions: got %+v", a)
	}
	var images []string
	for _, x := range cl.Images {
		var used []string
		for _, o := range x.Used {
			used = append(used, o.Object()+" from "+o.File)
		}
		images = append(images, x.Reference+" carried="+map[bool]string{true: "yes", false: "no"}[x.Carried]+" listed by "+strings.Join(x.Components, ",")+" used by "+strings.Join(used, ","))
	}
	wantImages := []string{
		"127.0.0.1:47301/demo/app:1.0.0 carried=yes listed by tools used by Deployment/app from manifests/app-0.yaml",
		"127.0.0.1:47301/demo/sidecar:2.0.0 carried=no listed by  used by Deployment/app from manifests/app-0.yaml",
	}
	if !slices.Equal(images, wantImages) {
		t.Errorf("images:\ngot  %q\nwant %q", images, wantImages)
	}
	if len(cl.Registries) != 1 || !slices.Equal(cl.Registries[0].Images, []string{"tools: 127.0.0.1:47301/demo/app:1.0.0", "tools: 127.0.0.1:47301/demo/sidecar:2.0.0"}) {
		t.Errorf("registries: got %+v; want the one registry with both images", cl.Registries)
	}
	if len(cl.Unknown) != 0 {
		t.Errorf("unknown: got %+v; want none", cl.Unknown)
	}
	wantWarnings := []string{"Deployment/app (component tools, manifests/app-0.yaml) uses image 127.0.0.1:47301/demo/sidecar:2.0.0, which the package does not carry: zarf pushes only the images its components list, so in an air gap the pod cannot pull it; add it to the images of component tools"}
	if !slices.Equal(p.Warnings, wantWarnings) {
		t.Errorf("warnings:\ngot  %q\nwant %q", p.Warnings, wantWarnings)
	}
	if len(cat.Warnings) != 1 || !strings.HasPrefix(cat.Warnings[0], "tools 1.0.0 (zarf-package-tools-amd64-1.0.0.tar.zst): Deployment/app") {
		t.Errorf("catalog warnings: got %q", cat.Warnings)
	}
	// The claims travel as JSON with every list present.
	js, err := json.Marshal(cl)
	if err != nil {
		t.Fatal(err)
	}
	var back facts.Claims
	if err := json.Unmarshal(js, &back); err != nil || len(back.Actions) != 4 || !strings.Contains(string(js), `"host_files":[{"component":"tools","target":"/opt/tools/bin/tool"`) {
		t.Errorf("claims JSON: %s (%v)", js, err)
	}
}
