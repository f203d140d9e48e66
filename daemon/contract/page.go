package contract

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// EnvSourceDateEpoch is the reproducible-builds variable a caller sets to
// fix the time a page states, so the pages of one plan are byte-identical.
const EnvSourceDateEpoch = "SOURCE_DATE_EPOCH"

// CallerTime is the time a client sends with a request for a page
// (PlanRequest.time_unix): SOURCE_DATE_EPOCH when set, else now. Like the
// kubeconfig, it is the caller's: the daemon does not read its own
// environment for a caller.
func CallerTime() (int64, error) {
	v, ok := os.LookupEnv(EnvSourceDateEpoch)
	if !ok || v == "" {
		return time.Now().Unix(), nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s is %q; want a positive number of seconds since 1970", EnvSourceDateEpoch, v)
	}
	return n, nil
}

// WritePage writes a page the daemon returned to path, on the caller's
// host, as WriteSaved writes a saved plan: whole or not at all, only when
// its content differs (it reports whether it changed the file), nothing
// with dryRun. The directory must exist.
func WritePage(path string, page []byte, dryRun bool) (changed bool, err error) {
	if len(page) == 0 {
		return false, errors.New("the daemon returned no page: is it of an older release?")
	}
	return writeFile(path, page, dryRun)
}

// writeFile writes b to path, replacing the file whole (a temporary file
// beside it, renamed over it), readable by others like any report, and
// only when its content differs: it reports whether it changed the file.
// With dryRun it writes nothing and reports whether it would.
func writeFile(path string, b []byte, dryRun bool) (changed bool, err error) {
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, b) {
		return false, nil
	}
	if dryRun {
		return true, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, os.Remove(tmp.Name()))
		}
	}()
	if _, err = tmp.Write(b); err != nil {
		_ = tmp.Close()
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		_ = tmp.Close()
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	return true, nil
}
