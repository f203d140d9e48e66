package contract

import (
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
// host: whole or not at all (a temporary file beside it, renamed over
// it), readable by others like any report. The directory must exist.
func WritePage(path string, page []byte) (err error) {
	if len(page) == 0 {
		return errors.New("the daemon returned no page: is it of an older release?")
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing the page: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, os.Remove(tmp.Name()))
		}
	}()
	if _, err = tmp.Write(page); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing the page: %w", err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing the page: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("writing the page: %w", err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing the page: %w", err)
	}
	return nil
}
