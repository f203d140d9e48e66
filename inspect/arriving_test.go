package inspect

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"testing"
	"time"
)

// A component tarball streamed from a registry (members.arriving) holds
// of the budget only the bytes of a kept file that have arrived: none
// while it waits for the file's first byte, though its header declares
// 4 MiB, then what came. Read from an archive on disk, the same file is
// taken whole as its header declares (the disk answers at once).
func TestAComponentFromARegistryHoldsOnlyWhatArrived(t *testing.T) {
	for _, tc := range []struct {
		name     string
		arriving bool
		before   int64 // held once the header is in
	}{
		{"streamed from a registry", true, 0},
		{"read from an archive", false, MaxContentFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			budget := NewBudget(0)
			h := budget.hold()
			defer h.release()
			pr, pw := io.Pipe()
			m := &members{arriving: tc.arriving}
			done := make(chan error, 1)
			go func() {
				done <- m.walkComponent(context.Background(), pr, &tar.Header{Name: "components/app.tar", Size: 1 << 30}, "app", "oci://example/ns/app:1", h)
			}()
			var hdr bytes.Buffer
			tw := tar.NewWriter(&hdr)
			if err := tw.WriteHeader(&tar.Header{Name: "app/manifests/big.yaml", Typeflag: tar.TypeReg, Size: MaxContentFile, Mode: 0o644}); err != nil {
				t.Fatal(err)
			}
			if _, err := pw.Write(hdr.Bytes()); err != nil {
				t.Fatal(err)
			}
			settled := func(want int64) int64 {
				t.Helper()
				var got int64
				for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					if got = budget.held.Load(); got == want {
						time.Sleep(100 * time.Millisecond) // and it stays so
						return budget.held.Load()
					}
				}
				return got
			}
			if got := settled(tc.before); got != tc.before {
				t.Errorf("waiting for the file's first byte, the read holds %d bytes of the budget; want %d", got, tc.before)
			}
			if _, err := pw.Write(bytes.Repeat([]byte("a"), 1000)); err != nil {
				t.Fatal(err)
			}
			want := max(tc.before, 1000)
			if got := settled(want); got != want {
				t.Errorf("1,000 bytes in, the read holds %d bytes of the budget; want %d", got, want)
			}
			pw.CloseWithError(io.ErrUnexpectedEOF)
			if err := <-done; err == nil {
				t.Error("a component cut in its first file was read without an error")
			}
		})
	}
}
