package recorder

import (
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	simrec "github.com/hamcp/hamcp/dev/sim/recorder"
)

// fixedNow anchors generated histories so tests are reproducible.
var fixedNow = time.Date(2026, 3, 4, 15, 7, 0, 0, time.UTC)

// homeEntities is a small but varied home: measurements, a meter, binaries,
// an enum and a static entity.
func homeEntities() []simrec.EntitySpec {
	return []simrec.EntitySpec{
		{EntityID: "sensor.kitchen_temperature", Kind: "numeric", Min: 17, Max: 25, Unit: "°C", DeviceClass: "temperature", StateClass: "measurement", Every: 6 * time.Minute},
		{EntityID: "sensor.house_energy", Kind: "numeric", Min: 5000, Max: 5100, Unit: "kWh", DeviceClass: "energy", StateClass: "total_increasing", Every: 8 * time.Minute},
		{EntityID: "sensor.outdoor_lux", Kind: "numeric", Min: 0, Max: 800, Unit: "lx", DeviceClass: "illuminance", Every: 10 * time.Minute},
		{EntityID: "binary_sensor.hall_motion", Kind: "binary", DeviceClass: "motion", Every: 15 * time.Minute},
		{EntityID: "light.kitchen", Kind: "binary", Every: 40 * time.Minute},
		{EntityID: "vacuum.roborock", Kind: "enum", Values: []string{"docked", "cleaning", "returning"}, Every: 3 * time.Hour},
		{EntityID: "sun.sun", Kind: "static", Values: []string{"above_horizon"}},
	}
}

var (
	genOnce sync.Once
	genDir  string
	genPath string
	genErr  error
)

// generated is one 3-day database shared by the tests; tests that write
// work on a copy (copyOf).
func generated(t testing.TB) string {
	t.Helper()
	genOnce.Do(func() {
		if genDir, genErr = os.MkdirTemp("", "hamcp-recorder-test-"); genErr != nil {
			return
		}
		genPath = filepath.Join(genDir, "home-assistant_v2.db")
		_, genErr = simrec.Generate(context.Background(), genPath, simrec.GenerateOptions{
			Entities: homeEntities(), Days: 3, Now: fixedNow, Seed: 11,
		})
	})
	if genErr != nil {
		t.Fatalf("generate recorder db: %v", genErr)
	}
	return genPath
}

// cleanups run after all tests: shared files outlive any one test.
var cleanups []func()

func TestMain(m *testing.M) {
	code := m.Run()
	if genDir != "" {
		os.RemoveAll(genDir)
	}
	for _, c := range cleanups {
		c()
	}
	os.Exit(code)
}

// copyOf copies the generated database into the test's temp dir.
func copyOf(t testing.TB) string {
	t.Helper()
	src := generated(t)
	dst := filepath.Join(t.TempDir(), "home-assistant_v2.db")
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

func openDB(t testing.TB, path string, o Options) *DB {
	t.Helper()
	o.Path = path
	db, err := Open(o)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// rawDB is a plain read-write connection for checks that must not go
// through the code under test.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
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

// writeConn opens the connection Exec uses, for tests of its authorizer.
func writeConn(t testing.TB, db *DB) *sql.DB {
	t.Helper()
	w := sql.OpenDB(connector{writeDriver, writeDSN(db.path, time.Second)})
	t.Cleanup(func() { w.Close() })
	return w
}
