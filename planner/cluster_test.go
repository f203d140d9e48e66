package planner

import (
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

func withSum(c facts.Candidate, sum string) facts.Candidate {
	c.AggregateChecksum = sum
	return c
}

func TestClusterPlanning(t *testing.T) {
	base := []facts.Candidate{
		withSum(pkg("init", "0.1.0", nil), "sum-init"),
		withSum(pkg("app", "2.0.0", func(p *facts.Prerequisites) {
			p.Requires.Packages = []facts.PackageRequirement{{Name: "init"}}
		}), "sum-app"),
	}
	installed := func(ps ...facts.InstalledPackage) *facts.Cluster {
		return &facts.Cluster{Name: "prod", KubernetesVersion: "v1.36.3", NodeArchitectures: []string{"amd64"}, Packages: ps}
	}
	tests := []struct {
		name        string
		cands       []facts.Candidate
		opts        Options
		want        []string // name:action in order
		wantSkipped []string
		wantReason  string // in some item's reasons or a skipped reason
		wantFail    string
	}{
		{
			name:        "installed, healthy, same build: skipped, and no longer an edge",
			cands:       base,
			opts:        Options{Plan: options.Plan{Mode: options.ModeCluster}, Cluster: installed(facts.InstalledPackage{Name: "init", Version: "0.1.0", AggregateChecksum: "sum-init", Healthy: true})},
			want:        []string{"app:deploy"},
			wantSkipped: []string{"init"},
			wantReason:  "init is installed and healthy on cluster prod",
		},
		{
			name:       "forced: redeployed although healthy",
			cands:      base,
			opts:       Options{Plan: options.Plan{Mode: options.ModeCluster, Force: []string{"init"}}, Cluster: installed(facts.InstalledPackage{Name: "init", Version: "0.1.0", AggregateChecksum: "sum-init", Healthy: true})},
			want:       []string{"init:redeploy", "app:deploy"},
			wantReason: "the operator forced it (option force)",
		},
		{
			name:       "unhealthy: redeployed with what is wrong",
			cands:      base,
			opts:       Options{Plan: options.Plan{Mode: options.ModeCluster}, Cluster: installed(facts.InstalledPackage{Name: "init", Version: "0.1.0", AggregateChecksum: "sum-init", Reason: "component init is Failed"})},
			want:       []string{"init:redeploy", "app:deploy"},
			wantReason: "init 0.1.0 is installed on cluster prod but not healthy: component init is Failed",
		},
		{
			name:       "another build of the same version: redeployed",
			cands:      base,
			opts:       Options{Plan: options.Plan{Mode: options.ModeCluster}, Cluster: installed(facts.InstalledPackage{Name: "init", Version: "0.1.0", AggregateChecksum: "sum-other", Healthy: true})},
			want:       []string{"init:redeploy", "app:deploy"},
			wantReason: "another build of init 0.1.0 is installed",
		},
		{
			name:       "an older version installed: upgrade",
			cands:      base,
			opts:       Options{Plan: options.Plan{Mode: options.ModeCluster}, Cluster: installed(facts.InstalledPackage{Name: "app", Version: "1.0.0", Healthy: true})},
			want:       []string{"init:deploy", "app:upgrade"},
			wantReason: "upgrades app 1.0.0 on cluster prod",
		},
		{
			name:     "a newer version installed: a downgrade is refused",
			cands:    base,
			opts:     Options{Plan: options.Plan{Mode: options.ModeCluster}, Cluster: installed(facts.InstalledPackage{Name: "app", Version: "3.0.0", Healthy: true})},
			wantFail: "app 3.0.0 is installed on cluster prod and the plan chose app 2.0.0",
		},
		{
			name:       "a downgrade allowed",
			cands:      base,
			opts:       Options{Plan: options.Plan{Mode: options.ModeCluster, AllowDowngrade: true}, Cluster: installed(facts.InstalledPackage{Name: "app", Version: "3.0.0", Healthy: true})},
			want:       []string{"init:deploy", "app:upgrade"},
			wantReason: "downgrades app 3.0.0",
		},
		{
			name: "requires.kubernetes picks the version the cluster can run",
			cands: []facts.Candidate{
				pkg("app", "2.0.0", func(p *facts.Prerequisites) { p.Requires.Kubernetes = ">=1.40.0" }),
				pkg("app", "1.0.0", func(p *facts.Prerequisites) { p.Requires.Kubernetes = ">=1.29.0" }),
			},
			opts: Options{Plan: options.Plan{Mode: options.ModeCluster}, Cluster: installed()},
			want: []string{"app:deploy"},
		},
		{
			name:     "requires.kubernetes no version meets fails naming the cluster's version",
			cands:    []facts.Candidate{pkg("app", "2.0.0", func(p *facts.Prerequisites) { p.Requires.Kubernetes = ">=1.40.0" })},
			opts:     Options{Plan: options.Plan{Mode: options.ModeCluster}, Cluster: installed()},
			wantFail: "app 2.0.0 requires kubernetes >=1.40.0 (requires.kubernetes in zarf-package-app-amd64-2.0.0.tar.zst) and cluster prod runs v1.36.3",
		},
		{
			name:     "mixed node architectures need the option",
			cands:    base,
			opts:     Options{Plan: options.Plan{Mode: options.ModeCluster}, Cluster: &facts.Cluster{Name: "prod", NodeArchitectures: []string{"amd64", "arm64"}}},
			wantFail: "the nodes of cluster prod have several architectures (amd64, arm64); set architecture",
		},
		{
			name:     "cluster mode without a snapshot",
			cands:    base,
			opts:     Options{Plan: options.Plan{Mode: options.ModeCluster}},
			wantFail: "cluster mode needs a cluster",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cands, tt.opts)
			if tt.wantFail != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantFail) {
					t.Fatalf("New = %v; want a failure saying %q", err, tt.wantFail)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got, skipped, reasons []string
			for _, it := range p.Packages {
				got = append(got, it.Name+":"+it.Action)
				reasons = append(reasons, it.Reasons...)
			}
			for _, s := range p.AlreadyInstalled {
				skipped = append(skipped, s.Name)
				reasons = append(reasons, s.Reason)
			}
			if !slices.Equal(got, tt.want) || !slices.Equal(skipped, tt.wantSkipped) {
				t.Errorf("plan %v skipped %v; want %v skipped %v", got, skipped, tt.want, tt.wantSkipped)
			}
			if tt.wantReason != "" && !slices.ContainsFunc(reasons, func(r string) bool { return strings.Contains(r, tt.wantReason) }) {
				t.Errorf("no reason says %q: %v", tt.wantReason, reasons)
			}
			for _, it := range p.Packages {
				for _, a := range it.After {
					if slices.Contains(skipped, a) {
						t.Errorf("%s waits for skipped %s", it.Name, a)
					}
				}
			}
		})
	}
}

func TestInstalledNotInBundleAndNodeArchitecture(t *testing.T) {
	arm := pkg("app", "1.0.0", nil)
	arm.Architecture, arm.Path, arm.SHA256 = "arm64", "/bundle/app-arm64.tar.zst", "arm"
	p, err := New([]facts.Candidate{pkg("app", "1.0.0", nil), arm}, Options{Cluster: &facts.Cluster{
		Name: "edge", NodeArchitectures: []string{"arm64"},
		Packages: []facts.InstalledPackage{{Name: "legacy-monitoring", Version: "0.9.0", Healthy: true}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Packages) != 1 || p.Packages[0].Architecture != "arm64" {
		t.Errorf("planned %+v; want the arm64 build (the nodes' architecture)", p.Packages)
	}
	if len(p.InstalledNotInBundle) != 1 || p.InstalledNotInBundle[0].Name != "legacy-monitoring" {
		t.Errorf("installed_not_in_bundle %+v", p.InstalledNotInBundle)
	}
}
