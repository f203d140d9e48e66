package main

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// wrapWidth is the column the generated documentation is wrapped at, and
// maxLineLength the longest line it may hold: the limit of ansible-lint's
// yaml[line-length] rule (yamllint's line-length as ansible-lint
// configures it), which a certified collection must pass.
const (
	wrapWidth     = 100
	maxLineLength = 160
)

// foldLong marks every single-line string value longer than fits on one
// line (a mapping's value or a sequence's item, never a key) to be written
// as a folded block scalar (>-), the only YAML style whose line breaks
// read back as the spaces they replace; wrap then breaks its lines. A
// quoted value of the template is a string either way, so it folds too.
func foldLong(n *yaml.Node) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			foldLong(c)
		}
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			foldLong(n.Content[i])
		}
	case yaml.ScalarNode:
		quotedOrPlain := n.Style&^(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.FoldedStyle) == 0
		if quotedOrPlain && n.Tag == "!!str" && len(n.Value) > wrapWidth-20 &&
			!strings.ContainsAny(n.Value, "\n\t") && n.Value == strings.TrimSpace(n.Value) {
			n.Style = yaml.FoldedStyle
		}
	}
}

// wrap breaks the content lines of the folded block scalars of the YAML
// document out at single spaces so that each line is at most wrapWidth
// columns where it can be. A folded scalar reads a line break between two
// lines of its own indentation as one space, so the document means what it
// meant: wrap checks so by decoding both, and fails on any line still
// longer than maxLineLength (a literal block, a key, a word that long).
func wrap(in []byte) ([]byte, error) {
	lines := strings.Split(string(in), "\n")
	var out []string
	blockIndent := -1   // indentation of the line that opened a folded block; -1 outside one
	contentIndent := -1 // indentation of the block's content, once seen
	for _, line := range lines {
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if blockIndent >= 0 && strings.TrimSpace(line) != "" && indent <= blockIndent {
			blockIndent, contentIndent = -1, -1
		}
		if blockIndent >= 0 && strings.TrimSpace(line) != "" {
			if contentIndent < 0 {
				contentIndent = indent
			}
			if indent == contentIndent {
				out = append(out, breakLine(line, indent)...)
				continue
			}
		}
		out = append(out, line)
		if opensFolded(line) {
			blockIndent, contentIndent = indent, -1
		}
	}
	wrapped := []byte(strings.Join(out, "\n"))
	var before, after any
	if err := yaml.Unmarshal(in, &before); err != nil {
		return nil, fmt.Errorf("reading the generated documentation: %w", err)
	}
	if err := yaml.Unmarshal(wrapped, &after); err != nil {
		return nil, fmt.Errorf("reading the wrapped documentation: %w", err)
	}
	if !reflect.DeepEqual(before, after) {
		return nil, fmt.Errorf("wrapping changed what the documentation says (a bug in module/docgen's wrap)")
	}
	for i, line := range bytes.Split(wrapped, []byte("\n")) {
		if len(line) > maxLineLength {
			return nil, fmt.Errorf("line %d of the generated documentation is %d characters long, over ansible-lint's %d: shorten it in the template or the option's description", i+1, len(line), maxLineLength)
		}
	}
	return wrapped, nil
}

// opensFolded reports whether a line ends with a folded block scalar's
// header (">", ">-", ">+", with an optional indentation indicator).
func opensFolded(line string) bool {
	t := strings.TrimRight(line, " ")
	i := strings.LastIndexByte(t, '>')
	if i < 0 || (i > 0 && t[i-1] != ' ') {
		return false
	}
	for _, c := range t[i+1:] {
		if c != '-' && c != '+' && (c < '1' || c > '9') {
			return false
		}
	}
	head := strings.TrimSpace(t[:i])
	return head == "" || head == "-" || strings.HasSuffix(head, ":") || strings.HasSuffix(head, " -")
}

// breakLine splits one content line of a folded scalar at single spaces
// (a space between two other characters, which folding restores) so each
// piece is at most wrapWidth columns, or as short as its words allow.
func breakLine(line string, indent int) []string {
	if len(line) <= wrapWidth {
		return []string{line}
	}
	pad, text := line[:indent], line[indent:]
	var pieces []string
	for len(pad)+len(text) > wrapWidth {
		cut := -1
		for i := 1; i < len(text)-1; i++ {
			if text[i] == ' ' && text[i-1] != ' ' && text[i+1] != ' ' {
				if len(pad)+i > wrapWidth && cut > 0 {
					break
				}
				cut = i
			}
		}
		if cut < 0 {
			break
		}
		pieces = append(pieces, pad+text[:cut])
		text = text[cut+1:]
	}
	return append(pieces, pad+text)
}
