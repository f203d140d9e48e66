package contract

import (
	"bytes"
	"slices"
)

// StatedTime opens the one element in which a page states the time it
// was asked at (PlanRequest.Time for the plan page, the caller's time for
// the catalog's): <time data-stated datetime="RFC 3339">for people</time>.
// The renderer writes that time there and nowhere else, so the element,
// from StatedTime to the first "</time>" after it, is the only part of a
// page that two asks of the same plan at different times differ in.
// Values from archives cannot forge it: every one is escaped, so a page
// holds no "<time" it did not write itself.
const StatedTime = `<time data-stated datetime="`

// statedTimeEnd closes the element StatedTime opens.
const statedTimeEnd = "</time>"

// WithoutStatedTime returns page with the element stating its time
// (StatedTime) cut out, and true; or page as it is and false when it
// holds no such element, or more than one (then it is not a page whose
// time can be told apart from its content).
func WithoutStatedTime(page []byte) ([]byte, bool) {
	open := []byte(StatedTime)
	i := bytes.Index(page, open)
	if i < 0 {
		return page, false
	}
	n := bytes.Index(page[i:], []byte(statedTimeEnd))
	if n < 0 {
		return page, false
	}
	rest := page[i+n+len(statedTimeEnd):]
	if bytes.Contains(rest, open) {
		return page, false
	}
	return slices.Concat(page[:i], rest), true
}

// SamePage reports whether two pages show the same content: they are
// equal byte for byte, or each states its time once (StatedTime) and they
// are equal byte for byte without it. The caller writes a page to
// html_to only when it is not the same page as the file there, so a plan
// asked again, unchanged, changes nothing whatever time it states.
func SamePage(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	ca, okA := WithoutStatedTime(a)
	cb, okB := WithoutStatedTime(b)
	return okA && okB && bytes.Equal(ca, cb)
}
