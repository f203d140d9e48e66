package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// stuck arms a backstop over a call that never returns, and reports the
// exit code it asked for (-1: none within wait) and what it wrote.
func stuck(t *testing.T, ctx context.Context, timeout time.Duration, begin bool, wait time.Duration) (int, string) {
	t.Helper()
	var buf bytes.Buffer
	out := &guardedOutput{w: &buf}
	exited := make(chan int, 1)
	disarm := backstop(ctx, timeout, out, map[string]any{"module_args": map[string]any{}}, func(code int) { exited <- code })
	defer disarm()
	if begin {
		if _, err := out.Write([]byte("{")); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case code := <-exited:
		out.mu.Lock()
		defer out.mu.Unlock()
		return code, buf.String()
	case <-time.After(wait):
		out.mu.Lock()
		defer out.mu.Unlock()
		return -1, buf.String()
	}
}

func TestTheBackstopEndsACallThatIgnoresItsTimeout(t *testing.T) {
	saved, savedSig := backstopGrace, signalGrace
	t.Cleanup(func() { backstopGrace, signalGrace = saved, savedSig })
	backstopGrace, signalGrace = 100*time.Millisecond, 100*time.Millisecond

	code, out := stuck(t, context.Background(), 200*time.Millisecond, false, 5*time.Second)
	var res map[string]any
	if code != 1 || json.Unmarshal([]byte(out), &res) != nil || res["failed"] != true || !strings.Contains(res["msg"].(string), "did not end within its timeout (200ms)") {
		t.Fatalf("exit %d, output %q; want exit 1 and one failure naming the timeout", code, out)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // SIGTERM
	code, out = stuck(t, ctx, time.Hour, false, 5*time.Second)
	if code != 1 || json.Unmarshal([]byte(out), &res) != nil || !strings.Contains(res["msg"].(string), "interrupted") {
		t.Fatalf("after a signal: exit %d, output %q; want exit 1 and one failure naming the interruption", code, out)
	}

	// A call that began writing its result is let finish: no second
	// document is written after its first bytes.
	if code, out := stuck(t, context.Background(), 100*time.Millisecond, true, time.Second); code != -1 || out != "{" {
		t.Fatalf("a call writing its result: exit %d, output %q; want no exit and its bytes alone", code, out)
	}
}

func TestADisarmedBackstopDoesNothing(t *testing.T) {
	saved := backstopGrace
	t.Cleanup(func() { backstopGrace = saved })
	backstopGrace = 0
	var buf bytes.Buffer
	out := &guardedOutput{w: &buf}
	exited := make(chan int, 1)
	backstop(context.Background(), 50*time.Millisecond, out, nil, func(code int) { exited <- code })()
	select {
	case code := <-exited:
		t.Fatalf("a disarmed backstop exited %d", code)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := out.Write([]byte("x")); err != nil || buf.String() != "x" {
		t.Fatalf("the call's write after a disarmed backstop: %q, %v", buf.String(), err)
	}
}
