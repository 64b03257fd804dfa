package recorder

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// fixedNow anchors generated histories so tests are reproducible.
var fixedNow = time.Date(2026, 3, 4, 15, 7, 0, 0, time.UTC)

// smallEntities is a compact but varied home for generator tests.
func smallEntities() []EntitySpec {
	return []EntitySpec{
		{EntityID: "sensor.kitchen_temperature", Kind: "numeric", Min: 17, Max: 25, Unit: "°C", DeviceClass: "temperature", StateClass: "measurement", Every: 5 * time.Minute},
		{EntityID: "sensor.house_energy", Kind: "numeric", Min: 5000, Max: 5100, Unit: "kWh", DeviceClass: "energy", StateClass: "total_increasing", Every: 10 * time.Minute},
		{EntityID: "sensor.wind_direction", Kind: "numeric", Min: 0, Max: 360, Unit: "°", StateClass: "measurement_angle", Every: 10 * time.Minute},
		{EntityID: "sensor.outdoor_lux", Kind: "numeric", Min: 0, Max: 800, Unit: "lx", DeviceClass: "illuminance", Every: 10 * time.Minute},
		{EntityID: "binary_sensor.hall_motion", Kind: "binary", DeviceClass: "motion", Every: 15 * time.Minute},
		{EntityID: "light.kitchen", Kind: "binary", Every: 40 * time.Minute},
		{EntityID: "switch.coffee_maker", Kind: "binary", Every: 2 * time.Hour},
		{EntityID: "vacuum.roborock", Kind: "enum", Values: []string{"docked", "cleaning", "returning"}, Every: 3 * time.Hour},
		{EntityID: "sun.sun", Kind: "static", Values: []string{"above_horizon"}},
	}
}

var (
	sharedOnce sync.Once
	sharedPath string
	sharedErr  error
	sharedDir  string
)

// sharedDB is one generated 12-day database reused by read-only tests.
func sharedDB(t testing.TB) string {
	t.Helper()
	sharedOnce.Do(func() {
		sharedDir, sharedErr = os.MkdirTemp("", "recorder-shared-")
		if sharedErr != nil {
			return
		}
		sharedPath = filepath.Join(sharedDir, "home-assistant_v2.db")
		_, sharedErr = Generate(context.Background(), sharedPath, GenerateOptions{Entities: smallEntities(), Days: 12, Now: fixedNow, Seed: 7})
	})
	if sharedErr != nil {
		t.Fatalf("generate shared db: %v", sharedErr)
	}
	return sharedPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range []string{sharedDir, benchDir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

// rawDB opens a plain read-only connection for assertions that must not go
// through the code under test.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=query_only(1)&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func scalar[T any](t testing.TB, db *sql.DB, q string, args ...any) T {
	t.Helper()
	var v T
	if err := db.QueryRow(q, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

func openShared(t testing.TB) *DB {
	t.Helper()
	db, err := Open(sharedDB(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
