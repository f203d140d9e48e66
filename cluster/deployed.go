package cluster

import "github.com/zarf-dev/zarf/src/api/v1alpha1"

// What zarf records of a deployed package: a secret zarf-package-<name> in
// namespace zarf, labelled package-deploy-info, whose data["data"] is the
// JSON of zarf's state.DeployedPackage (zarf v0.84.0, src/pkg/state).
//
// These are the fields health needs, under zarf's JSON names, rather than
// zarf's own type: importing zarf's state package links some 350 more
// packages (OCI registry clients among them) into every binary, whose
// initialisation alone doubled the CLI's start (20 ms -> 11 ms for
// `zarf-planner --help` without it). deployed_test.go decodes what zarf's
// own type encodes, and the cluster tests read secrets the zarf CLI wrote.
const (
	zarfNamespace        = "zarf"
	zarfPackageInfoLabel = "package-deploy-info"
	componentSucceeded   = "Succeeded"
)

// deployedPackage is the part of zarf's state.DeployedPackage health reads.
type deployedPackage struct {
	Name               string               `json:"name"`
	Data               v1alpha1.ZarfPackage `json:"data"`
	Generation         int                  `json:"generation"`
	DeployedComponents []deployedComponent  `json:"deployedComponents"`
}

// deployedComponent is the part of zarf's state.DeployedComponent health
// and ownership read.
type deployedComponent struct {
	Name               string `json:"name"`
	Status             string `json:"status"`
	ObservedGeneration int    `json:"observedGeneration"`
	// InstalledCharts are the Helm releases the component installed
	// (a chart's, or the chart zarf makes of raw manifests): ChartName
	// is the release's name.
	InstalledCharts []installedChart `json:"installedCharts"`
}

// installedChart is the part of zarf's state.InstalledChart ownership
// reads.
type installedChart struct {
	Namespace string `json:"namespace"`
	ChartName string `json:"chartName"`
}
