// Package testkit holds the helpers tests across hamcp share: Eventually for state that another
// goroutine or process updates, and (in fakeclock) the one fake clock. It exists for tests only:
// nothing the add-on ships imports it.
package testkit

import (
	"testing"
	"time"
)

// Patience is how long Eventually waits. It is generous on purpose: a condition that holds
// returns at once, and a loaded 2-core CI machine can take seconds to schedule a goroutine, so a
// short deadline only buys flaky failures.
const Patience = 30 * time.Second

// Eventually polls cond until it holds, or fails the test after Patience naming what did not
// happen. For state changed asynchronously (a socket closed, a session ended, an event
// delivered), not for waiting out a duration: tests that wait for time use testing/synctest or
// fakeclock.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	EventuallyNoError(t, what, func() error {
		if cond() {
			return nil
		}
		return errNotYet
	})
}

// EventuallyNoError is Eventually for a check that says why it does not hold yet; the last
// reason is in the failure.
func EventuallyNoError(t testing.TB, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(Patience)
	pause := time.Millisecond
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			if err == errNotYet {
				t.Fatalf("%s: still not so after %s", what, Patience)
			}
			t.Fatalf("%s: still failing after %s: %v", what, Patience, err)
		}
		time.Sleep(pause)
		if pause < 50*time.Millisecond {
			pause *= 2
		}
	}
}

type notYet struct{}

func (notYet) Error() string { return "not yet" }

var errNotYet error = notYet{}
