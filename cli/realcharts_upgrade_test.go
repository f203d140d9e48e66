package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
)

// certManagerCRDs are the six CRDs both cert-manager releases ship.
var certManagerCRDs = []string{
	"certificaterequests.cert-manager.io", "certificates.cert-manager.io", "challenges.acme.cert-manager.io",
	"clusterissuers.cert-manager.io", "issuers.cert-manager.io", "orders.acme.cert-manager.io",
}

// The two public cert-manager packages, each packaged by the real zarf
// CLI from the upstream chart: v1.5.5 (testdata/bundles/
// realcharts-upgrade) and v1.21.1 (testdata/bundles/realcharts).
const (
	certManagerOld     = "realcharts-upgrade/zarf-package-cert-manager-amd64-1.5.5.tar.zst"
	certManagerUpgrade = "realcharts/zarf-package-cert-manager-amd64-1.21.1.tar.zst"
)

// A public chart's CRD upgrade, judged against the test API server:
// cert-manager v1.5.5, deployed by the real zarf CLI, installs six CRDs
// serving v1alpha2, v1alpha3, v1beta1 and v1 (storage v1, converted by
// its webhook); v1.21.1's CRDs serve v1 alone. This is the upgrade
// cert-manager's v1.6 notes warn of.
//
//   - A fresh v1.5.5 install stored nothing but v1: the upgrade plans,
//     warning for each CRD that v1alpha2, v1alpha3 and v1beta1 are no
//     longer served, and nothing is refused.
//   - A cluster that began on an older cert-manager still lists v1alpha2
//     in a CRD's status.storedVersions (set here through the status
//     subresource, as the API server itself would have: the test API
//     server runs no webhook to convert an object written at v1alpha2):
//     the upgrade is refused before anything deploys, naming that CRD,
//     v1alpha2, the archive and the migration, live and from a snapshot.
//   - The API server agrees: the CRD cut to v1 alone is refused where
//     v1alpha2 is stored, and taken where v1 alone is.
//   - Standalone, the directory of both versions says once that CRD
//     upgrades were not checked.
func TestARealChartsCRDUpgradeIsJudged(t *testing.T) {
	dir := archivesDir(t, certManagerOld, certManagerUpgrade)
	old, upgrade := filepath.Join(dir, filepath.Base(certManagerOld)), filepath.Base(certManagerUpgrade)
	code, doc, warnings := planJSON(t, dir)
	if code != ExitOK || len(doc.Packages) != 1 || doc.Packages[0].Version != "1.21.1" ||
		!slices.ContainsFunc(warnings, func(w string) bool { return strings.HasPrefix(w, "CRD upgrades were not checked") }) {
		t.Fatalf("standalone: exit %d, %+v, warnings %q; want v1.21.1 planned and the word that CRD upgrades were not checked", code, doc, warnings)
	}

	c := clustertest.Start(t)
	ctx := context.Background()
	live := []string{"--mode", "cluster", "--kubeconfig", c.Kubeconfig}
	c.Deploy(t, old)
	ext, err := apiextclient.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range certManagerCRDs {
		crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("v1.5.5 deployed no CRD %s: %v", name, err)
		}
		if n := len(crd.Spec.Versions); n != 4 || !slices.Equal(crd.Status.StoredVersions, []string{"v1"}) || crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != "Webhook" {
			t.Fatalf("%s as v1.5.5 installed it: %d versions, stored %v, conversion %+v; want four, v1, a webhook", name, n, crd.Status.StoredVersions, crd.Spec.Conversion)
		}
	}

	code, doc, warnings = planJSON(t, dir, live...)
	if code != ExitOK || len(doc.Packages) != 1 || doc.Packages[0].Version != "1.21.1" {
		t.Fatalf("after a fresh v1.5.5: exit %d, %+v, warnings %q; want v1.21.1 planned", code, doc, warnings)
	}
	for _, name := range certManagerCRDs {
		if !slices.ContainsFunc(warnings, func(w string) bool {
			return strings.Contains(w, name) && strings.Contains(w, "no longer serving") &&
				strings.Contains(w, "v1alpha2") && strings.Contains(w, "v1alpha3") && strings.Contains(w, "v1beta1")
		}) {
			t.Errorf("no warning that %s no longer serves v1alpha2, v1alpha3 and v1beta1: %q", name, warnings)
		}
	}

	// The cluster that began on cert-manager 0.x: certificates still
	// stored at v1alpha2.
	crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "certificates.cert-manager.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crd.Status.StoredVersions = []string{"v1alpha2", "v1"}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().UpdateStatus(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	snapshot := filepath.Join(t.TempDir(), "snapshot.json")
	code, out, stderr := run(t, "snapshot", "--kubeconfig", c.Kubeconfig, "-o", "json")
	if code != ExitOK {
		t.Fatalf("snapshot: exit %d: %s", code, stderr)
	}
	if err := os.WriteFile(snapshot, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{live, {"--snapshot", snapshot}} {
		code, doc, _ := planJSON(t, dir, args...)
		if code != ExitFailed || !doc.Failed || len(doc.Errors) != 1 || doc.Errors[0].Kind != "crd_upgrade" || !slices.Equal(doc.Errors[0].Packages, []string{"cert-manager"}) {
			t.Fatalf("plan %v: exit %d, %+v; want one crd_upgrade problem of cert-manager", args, code, doc)
		}
		msg := doc.Errors[0].Message
		for _, w := range []string{"certificates.cert-manager.io", "v1alpha2", "storedVersions", "migrate", upgrade} {
			if !strings.Contains(msg, w) {
				t.Errorf("plan %v: the problem %q does not say %q", args, msg, w)
			}
		}
		for _, other := range certManagerCRDs {
			if other != "certificates.cert-manager.io" && strings.Contains(msg, other) {
				t.Errorf("plan %v: the problem names %s, whose stored versions the upgrade keeps: %q", args, other, msg)
			}
		}
	}

	// The judgment is the API server's own: the CRD as the cluster holds
	// it, cut to v1 alone as v1.21.1 ships it, is refused for
	// certificates (v1alpha2 stored) and taken for issuers (v1 alone
	// stored), whose plan only warned.
	toV1 := func(name string) error {
		crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		crd.Spec.Versions = slices.DeleteFunc(crd.Spec.Versions, func(v apiextv1.CustomResourceDefinitionVersion) bool { return v.Name != "v1" })
		crd.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.NoneConverter}
		_, err = ext.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, crd, metav1.UpdateOptions{})
		return err
	}
	if err := toV1("certificates.cert-manager.io"); err == nil || !strings.Contains(err.Error(), "storedVersions") {
		t.Errorf("the API server took certificates at v1 alone with v1alpha2 stored (%v): the refusal was wrong", err)
	}
	if err := toV1("issuers.cert-manager.io"); err != nil {
		t.Errorf("the API server refused issuers at v1 alone, which the plan only warned of: %v", err)
	}
}
