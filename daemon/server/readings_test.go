package server

import (
	"context"
	"testing"

	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/inspect"
)

// Status lists each read under way by the path its request named, with
// archives done of the total and the archive begun last; a read that has
// not listed its archives yet is left out, and an ended one forgotten.
func TestStatusListsTheReadsUnderWay(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	progress, done := s.reads.start("/bundles/a")
	_, doneB := s.reads.start("/bundles/b") // nothing listed yet
	progress(inspect.Progress{Done: 0, Total: 3, Reading: "zarf-package-x.tar.zst"})
	progress(inspect.Progress{Done: 1, Total: 3})
	st, err := s.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []contract.Reading{{Path: "/bundles/a", Done: 1, Total: 3, Archive: "zarf-package-x.tar.zst"}}
	if len(st.Readings) != 1 || st.Readings[0] != want[0] {
		t.Errorf("readings %+v; want %+v", st.Readings, want)
	}
	done()
	doneB()
	if st, _ := s.Status(context.Background()); len(st.Readings) != 0 {
		t.Errorf("readings after the requests ended: %+v; want none", st.Readings)
	}
}
