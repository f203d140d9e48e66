// Package document declares the documents the daemon answers with, as Go
// types, and their one encoding: a plan's result (planned, or failed),
// the catalog and the inspection of a directory, a cache warm-up's
// answer and a barrier's. It is a leaf: it imports the plan's own types
// (planner/result), the facts they are made of (planner/facts) and the
// strict decoder (strictjson), nothing that plans, reads archives or
// talks to a cluster, so the module and both front ends read the
// documents as the daemon wrote them. A field is added in one struct here,
// and the compiler shows every place that must change.
package document

import (
	"bytes"
	"encoding/json"
)

// Marshal is the documents' one encoding: JSON without escaping <, > and
// & (constraints such as ">=1.13" stay readable), with no trailing
// newline.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
