package claims

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// crdDetails are what an upgrade of a CustomResourceDefinition is judged
// by (planner/crdupgrade): its versions and how it converts between them.
type crdDetails struct {
	versions   []facts.CRDVersion
	conversion *facts.CRDConversion
}

// crdDetailsOf reads a CustomResourceDefinition's versions (spec.versions,
// or a v1beta1 CRD's single spec.version) and conversion from its
// decoded object. Each version's schema is kept as the sha256 of its
// canonical JSON (encoding/json sorts a map's keys): two versions' schemas
// are compared, never read. What is not of the expected type is left out,
// as the API server's own validation would refuse it first.
func crdDetailsOf(obj map[string]any) crdDetails {
	var d crdDetails
	spec, _ := obj["spec"].(map[string]any)
	// A v1beta1 CRD's schema for every version.
	var shared any
	if v, ok := spec["validation"].(map[string]any); ok {
		shared = v["openAPIV3Schema"]
	}
	list, _ := spec["versions"].([]any)
	for _, item := range list {
		v, ok := item.(map[string]any)
		if !ok {
			continue
		}
		name, _ := v["name"].(string)
		served, _ := v["served"].(bool)
		storage, _ := v["storage"].(bool)
		schema := shared
		if s, ok := v["schema"].(map[string]any); ok && s["openAPIV3Schema"] != nil {
			schema = s["openAPIV3Schema"]
		}
		d.versions = append(d.versions, facts.CRDVersion{Name: text(name), Served: served, Storage: storage, Schema: schemaDigest(schema)})
	}
	if len(d.versions) == 0 {
		if name, ok := spec["version"].(string); ok && name != "" {
			d.versions = []facts.CRDVersion{{Name: text(name), Served: true, Storage: true, Schema: schemaDigest(shared)}}
		}
	}
	conv, _ := spec["conversion"].(map[string]any)
	strategy, _ := conv["strategy"].(string)
	if strategy != "" {
		d.conversion = &facts.CRDConversion{Strategy: text(strategy)}
		// v1: conversion.webhook.clientConfig; v1beta1:
		// conversion.webhookClientConfig.
		config, _ := conv["webhookClientConfig"].(map[string]any)
		if w, ok := conv["webhook"].(map[string]any); ok {
			config, _ = w["clientConfig"].(map[string]any)
		}
		if svc, ok := config["service"].(map[string]any); ok {
			ns, _ := svc["namespace"].(string)
			name, _ := svc["name"].(string)
			d.conversion.Service = text(ns + "/" + name)
		}
	}
	return d
}

// schemaDigest is the sha256 of a schema's canonical JSON, "" for none.
func schemaDigest(schema any) string {
	if schema == nil {
		return ""
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
