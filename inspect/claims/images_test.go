package claims_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/zarf-dev/zarf/src/api/v1alpha1"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// withImages is withManifest with the component listing images.
func withImages(t *testing.T, images []string, manifest string) facts.Contents {
	t.Helper()
	pkg := v1alpha1.ZarfPackage{Components: []v1alpha1.ZarfComponent{{Name: "app", Images: images,
		Manifests: []v1alpha1.ZarfManifest{{Name: "m", Namespace: "demo", Files: []string{"m.yaml"}}}}}}
	comps := map[string]*claims.Component{"app": {Files: map[string][]byte{"manifests/m-0.yaml": []byte(manifest)}}}
	c, err := claims.Collect(context.Background(), pkg, comps, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

func imageLines(c facts.Contents) []string {
	var out []string
	for _, x := range c.Claims.Images {
		var used []string
		for _, o := range x.Used {
			used = append(used, o.Kind+"/"+o.Name)
		}
		mark := "not carried"
		if x.Carried {
			mark = "carried"
		}
		out = append(out, x.Reference+" "+mark+" by ["+strings.Join(x.Components, " ")+"] used by ["+strings.Join(used, " ")+"]")
	}
	return out
}

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// Every workload kind's pod template is read, every container list and
// image volumes, as the zarf agent rewrites them.
func TestEveryImageAWorkloadNamesIsAClaim(t *testing.T) {
	docs := []string{
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: a:1}]\n  initContainers: [{name: b, image: b:1}]\n  ephemeralContainers: [{name: c, image: c:1}]\n  volumes: [{name: v, image: {reference: v:1}}, {name: e, emptyDir: {}}]\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {containers: [{name: a, image: d:1}]}}}\n",
		"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec: {template: {spec: {containers: [{name: a, image: s:1}]}}}\n",
		"apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds}\nspec: {template: {spec: {containers: [{name: a, image: ds:1}]}}}\n",
		"apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}\nspec: {template: {spec: {containers: [{name: a, image: rs:1}]}}}\n",
		"apiVersion: v1\nkind: ReplicationController\nmetadata: {name: rc}\nspec: {template: {spec: {containers: [{name: a, image: rc:1}]}}}\n",
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {template: {spec: {containers: [{name: a, image: j:1}]}}}\n",
		"apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: cj}\nspec: {jobTemplate: {spec: {template: {spec: {containers: [{name: a, image: cj:1}]}}}}}\n",
		"apiVersion: v1\nkind: PodTemplate\nmetadata: {name: pt}\ntemplate: {spec: {containers: [{name: a, image: pt:1}]}}\n",
		// Not a workload: its spec.template is not read.
		"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: demo}\nspec: {template: {spec: {containers: [{name: a, image: widget:1}]}}}\n",
	}
	c := withImages(t, []string{"d:1"}, strings.Join(docs, "---\n"))
	var got []string
	for _, x := range c.Claims.Images {
		got = append(got, strings.TrimPrefix(x.Reference, "docker.io/library/"))
	}
	want := []string{"a:1", "b:1", "c:1", "cj:1", "d:1", "ds:1", "j:1", "pt:1", "rc:1", "rs:1", "s:1", "v:1"}
	if !slices.Equal(got, want) {
		t.Errorf("images: got %v; want %v", got, want)
	}
	d := c.Claims.Images[4]
	if !d.Carried || !slices.Equal(d.Components, []string{"app"}) || len(d.Used) != 1 || d.Used[0].Kind != "Deployment" || d.Used[0].File != "manifests/m-0.yaml" {
		t.Errorf("d:1: got %+v; want carried by app and used by the Deployment", d)
	}
	if a := c.Claims.Images[0]; a.Carried || len(a.Components) != 0 || a.Used[0].Kind != "Pod" {
		t.Errorf("a:1: got %+v; want used by the Pod and not carried", a)
	}
}

// Carried is decided as zarf decides it: the agent rewrites a pod's
// image to where zarf pushed a listed one (transform.ImageTransformHost).
func TestAnImageIsCarriedWhereZarfPushedIt(t *testing.T) {
	tests := []struct {
		name, listed, used string
		carried            bool
	}{
		{"the same reference", "nginx:1.25", "nginx:1.25", true},
		{"the same image written in full", "nginx:1.25", "docker.io/library/nginx:1.25", true},
		{"no tag is latest", "nginx", "nginx:latest", true},
		{"another tag", "nginx:1.25", "nginx:1.26", false},
		{"a listed digest does not carry its tag", "nginx:1.25@" + digest, "nginx:1.25", false},
		{"a listed digest carries the digest under any tag", "nginx:1.25@" + digest, "nginx:1.26@" + digest, true},
		{"a listed digest carries the bare digest", "nginx:1.25@" + digest, "nginx@" + digest, true},
		{"a digest from another registry is the same image", "ghcr.io/library/nginx@" + digest, "nginx@" + digest, true},
		{"a tag from another registry is not", "ghcr.io/library/nginx:1.25", "nginx:1.25", false},
		{"a listed tag does not carry a digest", "nginx:1.25", "nginx@" + digest, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := withImages(t, []string{tt.listed}, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, image: \""+tt.used+"\"}]}\n")
			var used *facts.ImageClaim
			for i, x := range c.Claims.Images {
				if len(x.Used) > 0 {
					used = &c.Claims.Images[i]
				}
			}
			if used == nil || used.Carried != tt.carried {
				t.Errorf("images %q; want %s used and carried=%v", imageLines(c), tt.used, tt.carried)
			}
		})
	}
}

// Registries are derived from every image, listed and used.
func TestRegistriesComeFromListedAndUsedImages(t *testing.T) {
	c := withImages(t, []string{"nginx:1.25"}, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, image: quay.io/x/y:1}, {name: b, image: nginx:1.25}]}\n")
	var got []string
	for _, r := range c.Claims.Registries {
		got = append(got, r.Registry+" "+strings.Join(r.Images, ","))
	}
	if want := []string{"docker.io app: docker.io/library/nginx:1.25", "quay.io app: quay.io/x/y:1"}; !slices.Equal(got, want) {
		t.Errorf("registries: got %q; want %q", got, want)
	}
}

func TestAnImageThatIsNotAReferenceIsAnUnknownOfImages(t *testing.T) {
	c := withImages(t, nil, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, image: \"Not A Ref\"}, {name: b, image: 7}], initContainers: {x: 1}}\n")
	if len(c.Claims.Images) != 0 {
		t.Errorf("images: got %q; want none", imageLines(c))
	}
	var got []string
	for _, u := range c.Claims.Unknown {
		got = append(got, u.Subject+": "+u.Reason+" "+strings.Join(u.Affects, ","))
	}
	if len(got) != 3 || !strings.Contains(got[0], "image Not A Ref: manifests/m-0.yaml Pod/p: spec.containers[0].image is not an image reference") ||
		!strings.Contains(got[1], "spec.containers[1].image is a number, not a string") || !strings.Contains(got[2], "spec.initContainers is an object, not a list") {
		t.Errorf("unknowns:\n%s", strings.Join(got, "\n"))
	}
	for _, u := range c.Claims.Unknown {
		if !slices.Equal(u.Affects, []string{facts.ClaimImages}) {
			t.Errorf("%s affects %v; want images only", u.Subject, u.Affects)
		}
	}
}

// The images of a hostile package are bounded, and what is past a bound
// is an unknown of images, never dropped unsaid.
func TestImagesPastTheBoundsAreUnknown(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n")
	for i := range 1001 {
		fmt.Fprintf(&b, "  - {name: c%d, image: \"img%d:1\"}\n", i, i)
	}
	c := withImages(t, nil, b.String())
	if len(c.Claims.Images) != 1000 {
		t.Errorf("images: got %d; want the first 1000", len(c.Claims.Images))
	}
	if len(c.Claims.Unknown) != 1 || !strings.Contains(c.Claims.Unknown[0].Reason, "spec.containers[1000].image and those after it were not read") ||
		!slices.Equal(c.Claims.Unknown[0].Affects, []string{facts.ClaimImages}) {
		t.Errorf("unknown: got %+v; want the image past the bound named", c.Claims.Unknown)
	}
	// 21 workloads of 1000 images each: past the package's 20000.
	var docs []string
	for w := range 21 {
		var d strings.Builder
		fmt.Fprintf(&d, "apiVersion: v1\nkind: Pod\nmetadata: {name: p%d}\nspec:\n  containers:\n", w)
		for i := range 1000 {
			fmt.Fprintf(&d, "  - {name: c%d, image: \"img%d:%d\"}\n", i, i, w)
		}
		docs = append(docs, d.String())
	}
	c = withImages(t, nil, strings.Join(docs, "---\n"))
	var used int
	for _, x := range c.Claims.Images {
		used += len(x.Used)
	}
	if used != 20000 || len(c.Claims.Unknown) != 1 || !strings.Contains(c.Claims.Unknown[0].Reason, "more than 20000 images") {
		t.Errorf("got %d uses and unknowns %+v; want 20000 and the rest unknown", used, c.Claims.Unknown)
	}
}
