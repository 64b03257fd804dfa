package panel

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/src/homeassistant"
)

// One simulated Home Assistant, started by the first test that needs it, answers every panel's user
// list over a real WebSocket (the fuzz targets never start it).
var simHA struct {
	once   sync.Once
	home   *sim.Home
	client *homeassistant.Client
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if simHA.client != nil {
		simHA.client.Close()
	}
	if simHA.home != nil {
		simHA.home.Close()
	}
	os.Exit(code)
}

// testHA is the shared simulated home and a started client holding its administrator token.
func testHA(t *testing.T) (*sim.Home, *homeassistant.Client) {
	t.Helper()
	simHA.once.Do(func() {
		h, err := sim.Start(context.Background(), sim.Options{HistoryDays: -1, Seed: 11})
		if err != nil {
			simHA.err = err
			return
		}
		simHA.home = h
		c, err := homeassistant.New(homeassistant.Config{BaseURL: h.URL(), Token: h.Token()})
		if err != nil {
			simHA.err = fmt.Errorf("client: %w", err)
			return
		}
		c.Start(context.Background())
		simHA.client = c
	})
	if simHA.err != nil {
		t.Fatalf("simulated Home Assistant: %v", simHA.err)
	}
	return simHA.home, simHA.client
}

// haUsers is Options.Users over the shared simulated home.
func haUsers(t *testing.T) func(context.Context) ([]homeassistant.AuthUser, error) {
	_, c := testHA(t)
	return c.Users
}
