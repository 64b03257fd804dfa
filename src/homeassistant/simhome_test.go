package homeassistant

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/hamcp/hamcp/dev/sim"
)

// One simulated home serves the read-mostly tests; tests that take HA down start their own.
var (
	sharedOnce sync.Once
	sharedHome *sim.Home
	sharedErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedHome != nil {
		_ = sharedHome.Close()
	}
	os.Exit(code)
}

func simHome(t testing.TB) *sim.Home {
	t.Helper()
	sharedOnce.Do(func() {
		sharedHome, sharedErr = sim.Start(context.Background(), sim.Options{HistoryDays: -1, Seed: 1})
	})
	if sharedErr != nil {
		t.Fatalf("starting the simulated home: %v", sharedErr)
	}
	return sharedHome
}

// ownHome starts a private simulated home for tests that break it.
func ownHome(t testing.TB) *sim.Home {
	t.Helper()
	h, err := sim.Start(context.Background(), sim.Options{HistoryDays: -1, Seed: 2})
	if err != nil {
		t.Fatalf("starting the simulated home: %v", err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// firstEntity returns the first entity of a domain from a live state list.
func firstEntity(t testing.TB, states []State, domain string) State {
	t.Helper()
	for _, s := range states {
		if s.Domain() == domain {
			return s
		}
	}
	t.Fatalf("the simulated home has no %s entity", domain)
	return State{}
}
