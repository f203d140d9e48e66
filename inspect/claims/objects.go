package claims

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"unsafe"

	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	kubeyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// manifestShape bounds one document of a manifest file (raw, or a
// chart's rendered template) before it is decoded, and its Documents the
// documents of the file: far more objects and keys than a real package
// ships in one file. The file itself is bounded in bytes by whoever kept
// it (inspect's MaxContentFile, MaxRendered).
var manifestShape = facts.Shape{Nodes: 400000, Keys: 200000, Documents: 5000}

// Bounds on flattening Lists, which a document of a few bytes per item
// could otherwise nest and multiply.
const (
	// maxListDepth caps how deep Lists nest in one document.
	maxListDepth = 16
	// maxObjects caps the objects of one file, its Lists flattened.
	maxObjects = 20000
)

// object is what the claims need of one Kubernetes object; every other
// field is ignored.
type object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	// Spec of a CustomResourceDefinition.
	Spec struct {
		Group string `json:"group"`
		Scope string `json:"scope"`
		Names struct {
			Kind   string `json:"kind"`
			Plural string `json:"plural"`
		} `json:"names"`
	} `json:"spec"`
	// Rules of a ClusterRole.
	Rules []rule `json:"rules"`
	// Aggregates says a ClusterRole has an aggregationRule (not null),
	// which lets the cluster fill in its rules; Selectors are its
	// clusterRoleSelectors as Kubernetes writes them (labels.Selector).
	Aggregates      bool     `json:"-"`
	Selectors       []string `json:"-"`
	AggregationRule *struct {
		ClusterRoleSelectors []metav1.LabelSelector `json:"clusterRoleSelectors"`
	} `json:"aggregationRule"`
	// RoleRef and Subjects of a ClusterRoleBinding.
	RoleRef struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"roleRef"`
	Subjects []struct {
		Kind      string `json:"kind"`
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"subjects"`
	// CRD is a CustomResourceDefinition's versions and conversion
	// (crdDetails).
	CRD crdDetails `json:"-"`
	// Images are those the pod template of a workload names (podImages).
	Images []podImage `json:"-"`
	// Uses are the storage and priority classes it names (classUses).
	Uses []objectUse `json:"-"`
	// Labels are its metadata.labels whose values are strings (read
	// leniently: a label of another type, which Kubernetes refuses, is
	// left out, not the object).
	Labels map[string]string `json:"-"`
	// Annotations are its metadata.annotations whose values are
	// strings, read as the labels are.
	Annotations map[string]string `json:"-"`
}

// podImage is one image a workload's pod template names, at Field
// ("spec.template.spec.containers[0].image"); Bad says why the field is
// not an image reference string, when it is not.
type podImage struct {
	Field string
	Ref   string
	Bad   string
}

// podSpecs are where each workload kind holds its pod spec, by API group
// and kind: the objects whose pods the zarf agent rewrites.
var podSpecs = map[string]map[string][]string{
	"": {
		"Pod":                   {"spec"},
		"ReplicationController": {"spec", "template", "spec"},
		"PodTemplate":           {"template", "spec"},
	},
	"apps": {
		"Deployment":  {"spec", "template", "spec"},
		"StatefulSet": {"spec", "template", "spec"},
		"DaemonSet":   {"spec", "template", "spec"},
		"ReplicaSet":  {"spec", "template", "spec"},
	},
	"batch": {
		"Job":     {"spec", "template", "spec"},
		"CronJob": {"spec", "jobTemplate", "spec", "template", "spec"},
	},
}

// maxPodImages caps the images kept of one object's pod spec (the
// document's shape bounds it already); those past it are one unknown.
const maxPodImages = 1000

// podImages are the images a workload's pod spec names, read as the zarf
// agent reads a pod (its pod mutation hook rewrites each of them to the
// zarf registry): every container, init container and ephemeral
// container, and every image volume (volumes[].image.reference). A field
// of the wrong type is kept as Bad: Kubernetes would refuse the object,
// and the image it meant is unknown. Nothing for any other kind.
func podImages(group, kind string, obj map[string]any) []podImage {
	path, ok := podSpecs[group][kind]
	if !ok {
		return nil
	}
	var out []podImage
	spec, where, bad := nested(obj, path)
	if bad != "" {
		return []podImage{{Field: where, Bad: bad}}
	}
	if spec == nil {
		return nil
	}
	over := false
	add := func(field string, v any, present bool) {
		if over {
			return
		}
		if len(out) >= maxPodImages {
			// What is past the bound is not dropped unsaid: the
			// image it names is unknown.
			over = true
			out = append(out, podImage{Field: field, Bad: fmt.Sprintf("pod spec names more than %d images: %s and those after it were not read", maxPodImages, field)})
			return
		}
		s, isString := v.(string)
		switch {
		case !present:
			// A container without an image (Kubernetes refuses it;
			// nothing is pulled).
		case !isString:
			out = append(out, podImage{Field: field, Bad: fmt.Sprintf("%s is %s, not a string", field, jsonType(v))})
		default:
			out = append(out, podImage{Field: field, Ref: s})
		}
	}
	base := strings.Join(path, ".")
	for _, list := range []string{"containers", "initContainers", "ephemeralContainers"} {
		items, err := listOf(spec[list])
		if err != "" {
			out = append(out, podImage{Field: base + "." + list, Bad: base + "." + list + " " + err})
			continue
		}
		for i, it := range items {
			field := fmt.Sprintf("%s.%s[%d]", base, list, i)
			c, isMap := it.(map[string]any)
			if !isMap {
				out = append(out, podImage{Field: field, Bad: fmt.Sprintf("%s is %s, not an object", field, jsonType(it))})
				continue
			}
			img, present := c["image"]
			add(field+".image", img, present)
		}
	}
	vols, err := listOf(spec["volumes"])
	if err != "" {
		return append(out, podImage{Field: base + ".volumes", Bad: base + ".volumes " + err})
	}
	for i, it := range vols {
		v, _ := it.(map[string]any)
		src, _ := v["image"].(map[string]any)
		if src == nil {
			continue
		}
		ref, present := src["reference"]
		add(fmt.Sprintf("%s.volumes[%d].image.reference", base, i), ref, present)
	}
	return out
}

// nested is the object at path, nil when a step is absent; bad says a
// step is not an object.
func nested(obj map[string]any, path []string) (m map[string]any, where, bad string) {
	m = obj
	for i, k := range path {
		v, ok := m[k]
		if !ok || v == nil {
			return nil, "", ""
		}
		next, isMap := v.(map[string]any)
		if !isMap {
			where = strings.Join(path[:i+1], ".")
			return nil, where, fmt.Sprintf("%s is %s, not an object", where, jsonType(v))
		}
		m = next
	}
	return m, "", ""
}

func listOf(v any) ([]any, string) {
	if v == nil {
		return nil, ""
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Sprintf("is %s, not a list", jsonType(v))
	}
	return l, ""
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case nil:
		return "null"
	default:
		return "a number"
	}
}

type rule struct {
	APIGroups       []string `json:"apiGroups"`
	Resources       []string `json:"resources"`
	ResourceNames   []string `json:"resourceNames"`
	NonResourceURLs []string `json:"nonResourceURLs"`
	Verbs           []string `json:"verbs"`
}

// group is the API group of the object's apiVersion.
func (o *object) group() string {
	g, _, ok := strings.Cut(o.APIVersion, "/")
	if !ok {
		return ""
	}
	return g
}

// splitter cuts a file into the documents its consumer reads.
type splitter func(b []byte) ([]string, error)

// helmDocuments are the documents of a rendered template as Helm cuts
// them before it installs them (releaseutil.SortManifests): its own
// SplitManifests, in its order, which also takes a separator with text
// after it ("---#", "---apiVersion: v1"). Zarf's raw manifests are
// rendered as one template each holding the file's bytes
// (ChartFromZarfManifest), so they are cut the same way.
//
// SplitManifests builds every piece before it can be counted, so the
// file is first held to twice manifestShape.Documents separators: every
// cut it makes is at a "---" that starts the file or follows a newline.
func helmDocuments(b []byte) ([]string, error) {
	if n := bytes.Count(b, []byte("\n---")); n > 2*manifestShape.Documents {
		return nil, fmt.Errorf("holds %d document separators, more than the %d allowed", n, 2*manifestShape.Documents)
	}
	// The documents are cut from b itself, not from a copy (a chart's
	// rendering of MaxRendered would be held twice while it is read):
	// nothing changes b while they are read.
	docs := releaseutil.SplitManifests(unsafe.String(unsafe.SliceData(b), len(b)))
	if len(docs) > manifestShape.Documents {
		return nil, fmt.Errorf("holds more than %d YAML documents", manifestShape.Documents)
	}
	keys := slices.Collect(maps.Keys(docs))
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = docs[k]
	}
	return out, nil
}

// kubeDocuments are the documents of a chart's crds/ file as Helm cuts
// them: it hands the file unrendered to its Kubernetes client, whose
// reader (apimachinery's YAMLReader) cuts at lines of "---" followed by
// nothing or a comment.
func kubeDocuments(b []byte) ([]string, error) {
	r := kubeyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var out []string
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("document %d is not YAML as Kubernetes reads it: %s", len(out), facts.Printable(err.Error()))
		}
		if len(out) >= manifestShape.Documents {
			return nil, fmt.Errorf("holds more than %d YAML documents", manifestShape.Documents)
		}
		out = append(out, string(doc))
	}
}

// decodeObjects reads every object of a file as Helm's Kubernetes client
// would: cut into documents by split, each held to manifestShape, read
// as YAML turned to JSON (sigs.k8s.io/yaml), decoded as Unstructured
// (where an object with items is a List whatever its kind, and an item
// naming neither kind nor apiVersion takes them from its List), empty
// documents skipped, Lists flattened to every level. Kubernetes' client
// flattens one List and refuses a List inside it (Helm alone fails the
// release), but Helm with a post-renderer, as zarf deploys, unwraps a
// lone document of kind List with kustomize's reader before and after
// the post-renderer, so a List in a List in a List can deploy: the
// claims flatten every level (to maxListDepth), as what a package claims
// must never be less than what an install of it could make.
//
// A document that cannot be read is skipped and the objects of the
// others kept; the error names the first such document. Its errors read
// after the file's name.
//
// between, when not nil, is called before each document but the first:
// its error (the read's context ended) stops the decoding and is
// returned alone, the objects so far with it.
func decodeObjects(b []byte, split splitter, between func() error) ([]object, error) {
	docs, err := split(b)
	var out []object
	bad, more := err, 0
	for i, doc := range docs {
		if between != nil && i > 0 {
			if err := between(); err != nil {
				return out, &stopped{err}
			}
		}
		objs, err := decodeDocument(doc, maxObjects-len(out))
		out = append(out, objs...)
		switch {
		case err != nil && bad == nil:
			bad = fmt.Errorf("document %d %w", i, err)
		case err != nil:
			more++
		}
	}
	switch {
	case more == 1:
		bad = fmt.Errorf("%w (and 1 document more that cannot be read)", bad)
	case more > 1:
		bad = fmt.Errorf("%w (and %d documents more that cannot be read)", bad, more)
	}
	return out, bad
}

// stopped is why decodeObjects stopped before its last document: not a
// fact of the manifest, the read's.
type stopped struct{ err error }

func (s *stopped) Error() string { return s.err.Error() }
func (s *stopped) Unwrap() error { return s.err }

// decodeDocument reads the objects of one document, at most limit of
// them. Its errors read after "document N".
func decodeDocument(doc string, limit int) ([]object, error) {
	if err := facts.CheckShape([]byte(doc), manifestShape); err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		return nil, fmt.Errorf("is not valid YAML: %s", FirstLine(err))
	}
	js = bytes.TrimSpace(js)
	if len(js) == 0 || bytes.Equal(js, []byte("null")) {
		return nil, nil
	}
	top, err := decodeUnstructured(js)
	if err != nil {
		return nil, err
	}
	var out []object
	type pending struct {
		obj   runtime.Object
		depth int
	}
	queue := []pending{{top, 0}}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if !meta.IsListType(p.obj) {
			if len(out) >= limit {
				return out, fmt.Errorf("holds more than %d objects, its Lists flattened", maxObjects)
			}
			o, err := claimed(p.obj)
			if err != nil {
				return out, err
			}
			out = append(out, o)
			continue
		}
		if p.depth >= maxListDepth {
			return out, fmt.Errorf("nests Lists more than %d deep", maxListDepth)
		}
		if u, ok := p.obj.(*unstructured.Unstructured); ok {
			// A List as an item of a List (which Kubernetes' client
			// alone refuses) is read as if it stood alone.
			js, err := json.Marshal(u.Object)
			if err != nil {
				return out, fmt.Errorf("holds a List that cannot be read: %s", FirstLine(err))
			}
			if p.obj, err = decodeUnstructured(js); err != nil {
				return out, fmt.Errorf("holds a List that %w", err)
			}
		}
		items, err := meta.ExtractList(p.obj)
		if err != nil {
			return out, fmt.Errorf("holds a List that cannot be read: %s", FirstLine(err))
		}
		for _, it := range items {
			queue = append(queue, pending{it, p.depth + 1})
		}
	}
	return out, nil
}

// decodeUnstructured decodes one JSON object as Kubernetes' client does
// (unstructured.UnstructuredJSONScheme): an *Unstructured, or an
// *UnstructuredList when it has items.
func decodeUnstructured(js []byte) (runtime.Object, error) {
	obj, _, err := unstructured.UnstructuredJSONScheme.Decode(js, nil, nil)
	if runtime.IsMissingKind(err) {
		return nil, errors.New("is not a Kubernetes object: it names no kind")
	}
	if err != nil {
		return nil, fmt.Errorf("is not a Kubernetes object: %s", FirstLine(err))
	}
	return obj, nil
}

// claimed is what the claims need of one decoded object.
func claimed(obj runtime.Object) (object, error) {
	var o object
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return o, fmt.Errorf("holds a %T, not an object", obj)
	}
	// Read as Kubernetes reads JSON (utiljson: keys case-sensitive), and
	// the error names the field: "cannot unmarshal bool into Go struct
	// field .metadata.name of type string".
	js, err := json.Marshal(u.Object)
	if err == nil {
		err = utiljson.Unmarshal(js, &o)
	}
	if err != nil {
		return o, fmt.Errorf("is not a Kubernetes object: %s", FirstLine(err))
	}
	o.Aggregates = u.Object["aggregationRule"] != nil
	if o.AggregationRule != nil {
		if len(o.AggregationRule.ClusterRoleSelectors) == 0 {
			return o, errors.New("is not a ClusterRole Kubernetes accepts: its aggregationRule holds no clusterRoleSelectors (at least one is required)")
		}
		for i := range o.AggregationRule.ClusterRoleSelectors {
			sel, err := metav1.LabelSelectorAsSelector(&o.AggregationRule.ClusterRoleSelectors[i])
			if err != nil {
				return o, fmt.Errorf("is not a ClusterRole Kubernetes accepts: its aggregationRule.clusterRoleSelectors[%d]: %s", i, FirstLine(err))
			}
			o.Selectors = append(o.Selectors, sel.String())
		}
	}
	if o.group() == "apiextensions.k8s.io" && o.Kind == "CustomResourceDefinition" {
		o.CRD = crdDetailsOf(u.Object)
	}
	o.Images = podImages(o.group(), o.Kind, u.Object)
	o.Uses = classUses(o.group(), o.Kind, u.Object)
	if md, ok := u.Object["metadata"].(map[string]any); ok {
		o.Labels = stringsOf(md["labels"])
		o.Annotations = stringsOf(md["annotations"])
	}
	return o, nil
}

// stringsOf is the entries of a decoded map whose values are strings
// (nil when there are none, or it is not a map).
func stringsOf(v any) map[string]string {
	m, _ := v.(map[string]any)
	var out map[string]string
	for k, v := range m {
		if v, ok := v.(string); ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}
