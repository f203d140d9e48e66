package facts

import (
	"errors"
	"fmt"

	"github.com/Masterminds/semver/v3"
)

// OperatorDocument is a PackagePrerequisites document an operator wrote
// beside the archives (the prerequisites option), to add to or correct
// what a package requires, provides and assumes without rebuilding it.
// It applies to every archive of its metadata.package whose version its
// metadata.version accepts, read as a semver range ("1.2.3" is that
// version only; none, every version), and there it replaces the
// document the archive carries, whole.
type OperatorDocument struct {
	// File is the file it was read from (its name in the directory the
	// option names, or the file's base name), Index its place among that
	// file's documents, from 0.
	File  string `json:"file"`
	Index int    `json:"index"`
	// Of is how many documents the file holds.
	Of       int            `json:"of"`
	Document *Prerequisites `json:"document"`
}

// Where names the document for a message: "ops.yaml" for a file's only
// document, "ops.yaml document 2" (counted from 1) otherwise.
func (d OperatorDocument) Where() string {
	if d.Of <= 1 {
		return d.File
	}
	return fmt.Sprintf("%s document %d", d.File, d.Index+1)
}

// MaxOperator caps the operator's documents (the prerequisites option):
// its file, or the YAML files of its directory together.
const MaxOperator = 4 << 20

// operatorShape bounds one operator file: many documents, each held to
// what an archive's document may be.
var operatorShape = Shape{Nodes: 200000, Keys: 50000, Documents: 1000, Depth: MaxDepth}

// DecodeOperator reads the documents of one operator file (file names it
// in messages): one or more PackagePrerequisites documents, separated by
// "---", each decoded as strictly as an archive's (Decode), with
// metadata.version a semver range. An error names the file, the
// document and the field.
func DecodeOperator(file string, data []byte) ([]OperatorDocument, error) {
	docs, err := yamlDocuments(data, operatorShape)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: %w", file, &FieldError{Problem: "holds no document: write one PackagePrerequisites document per package, separated by ---"})
	}
	var out []OperatorDocument
	for i, doc := range docs {
		where := OperatorDocument{File: file, Index: i, Of: len(docs)}.Where()
		js, err := documentJSON(doc)
		if err == nil {
			var p *Prerequisites
			if p, err = decodeJSON(js); err == nil {
				out = append(out, OperatorDocument{File: file, Index: i, Of: len(docs), Document: p})
				if v := p.Metadata.Version; v != "" {
					if _, cerr := semver.NewConstraint(v); cerr != nil {
						err = &FieldError{Field: "metadata.version", Problem: fmt.Sprintf("%s is not a semver range (an operator's document names the versions it applies to, such as 1.2.3 or >=1.2.0 <2.0.0): %v", Quote(v), cerr)}
					}
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
	}
	return out, nil
}

// ErrOperatorAmbiguous is returned by OperatorFor when several operator
// documents apply to one archive: narrow their metadata.version ranges
// so that one does.
var ErrOperatorAmbiguous = errors.New("several operator documents apply")

// OperatorFor is the operator document among docs that applies to the
// archive of name and version (nil when none does): its metadata.package
// is name and its metadata.version accepts version (a package without a
// version is accepted only by a document naming none). Several that
// apply are an error (ErrOperatorAmbiguous) naming them.
func OperatorFor(docs []OperatorDocument, name, version string) (*OperatorDocument, error) {
	var found []*OperatorDocument
	for i := range docs {
		d := &docs[i]
		if d.Document.Metadata.Package != name || !versionIn(d.Document.Metadata.Version, version) {
			continue
		}
		found = append(found, d)
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return found[0], nil
	}
	names := ""
	for i, d := range found {
		if i > 0 {
			names += " and "
		}
		names += d.Where()
		if v := d.Document.Metadata.Version; v != "" {
			names += " (" + v + ")"
		}
	}
	return nil, fmt.Errorf("%w to %s %s: %s; narrow their metadata.version ranges so that one does", ErrOperatorAmbiguous, name, version, names)
}

// versionIn says the range rng ("": any) accepts version ("": none, which
// only the empty range accepts).
func versionIn(rng, version string) bool {
	if rng == "" {
		return true
	}
	if version == "" {
		return false
	}
	c, err := semver.NewConstraint(rng)
	if err != nil {
		return false
	}
	v, err := semver.NewVersion(version)
	return err == nil && c.Check(v)
}
