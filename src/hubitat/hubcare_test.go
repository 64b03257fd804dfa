package hubitat

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// The shapes below are the ones upstream's parsers read (kingpanther13/Hubitat-local-MCP-server:
// ToolGetHubLogsSpec, ToolManageLogsSpec, ToolManageDiagnosticsSpec, ToolBackupSpec,
// ToolManageFilesSpec) and the hub's own pages send (resources/hub2-source/vue-hub2.min.js).

func TestParseHubLogsShapes(t *testing.T) {
	body := `["App 1\tinfo\tOldest message\t2026-04-19 10:00:00.000\tapp",` +
		`"Lamp\terror\tmsg\twith\ttabs\t2026-04-19 10:00:01.000\tdev",` +
		`"2026-04-19 10:00:02.000\twarn\tFirmware shape\t\tdev",` +
		`"App 1\tinfo\tUnparseable time\tNOT_A_DATE\tapp","","x"]`
	got, err := ParseHubLogs([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("%d entries: %+v", len(got), got)
	}
	if got[0].Message != "Unparseable time" || !got[0].Time.IsZero() || got[0].RawTime != "NOT_A_DATE" {
		t.Errorf("newest (bad time): %+v", got[0])
	}
	if got[1].Source != "" || got[1].Level != "warn" || got[1].Time != time.Date(2026, 4, 19, 10, 0, 2, 0, time.UTC) {
		t.Errorf("time-first line: %+v", got[1])
	}
	if got[2].Message != "msg\twith\ttabs" || got[2].Type != "dev" || got[2].Time.Second() != 1 {
		t.Errorf("tabs in the message: %+v", got[2])
	}
	if got[3].Source != "App 1" || got[3].Message != "Oldest message" {
		t.Errorf("oldest: %+v", got[3])
	}
	text, err := ParseHubLogs([]byte("Lamp\tinfo\ton\t2026-04-19 10:00:00\tdev\nLamp\tinfo\toff\t2026-04-19 10:00:05\tdev\n"))
	if err != nil || len(text) != 2 || text[0].Message != "off" {
		t.Errorf("older firmware's text: %+v %v", text, err)
	}
	if _, err := ParseHubLogs([]byte(`<html>login</html>`)); err == nil {
		t.Error("a login page read as logs")
	}
}

func TestParseDiagnosticsShapes(t *testing.T) {
	pts := ParseMemoryHistory("Date/time,Free OS,5m CPU avg,Total Java,Free Java,Direct Java\n2026-04-19 10:00,200000,0.5,500000,100000,2000\n" +
		"2026-04-19 10:05,150000,0.6,500000, 90000,2100\nDate/time,Free OS,5m CPU avg\n04-19 10:10,100000,0.9\n")
	if len(pts) != 3 || pts[1].FreeJavaKB == nil || *pts[1].FreeJavaKB != 90000 || pts[2].TotalJavaKB != nil || *pts[2].CPULoad5m != 0.9 {
		t.Errorf("memory history: %+v", pts)
	}
	rs, err := ParseRuntimeStats([]byte(`{"uptime":"5d 2h","totalDevicesRuntime":1000,"devicePct":12.5,"totalAppsRuntime":500,"appPct":6.25,
		"deviceStats":[{"id":1,"name":"SlowDevice","pct":15.0,"count":100,"total":500,"stateSize":1000,"formattedPct":"15.00"},
		{"id":"2","name":"FastDevice","pct":"2.0","count":5,"total":10,"stateSize":100,"largeState":true,"customAttributes":{"eventsCount":7}}],
		"appStats":[],"jobs":[{"id":5,"name":"R","recurring":true,"methodName":"run","nextRun":"2026-04-19 10:00"}],"runningJobs":[],"hubCommands":[{}]}`))
	if err != nil || rs.Uptime != "5d 2h" || len(rs.Devices) != 2 || rs.Devices[1].PctBusy != 2 || *rs.Devices[1].Events != 7 ||
		!rs.Devices[1].LargeState || rs.ScheduledJobs[0].Method != "run" || rs.HubActionsCount != 1 {
		t.Errorf("runtime stats: %+v %v", rs, err)
	}
	SortStats(rs.Devices, "count")
	if rs.Devices[0].Name != "SlowDevice" {
		t.Errorf("sorted by count: %+v", rs.Devices)
	}
	al, err := ParseHubAlerts([]byte(`{"hubId":"811e21ba","version":"2.4.1.177","safeMode":true,"alerts":{"platformUpdateAvailable":true,
		"platformUpdateVersion":"2.4.2.1","hubLowMemory":true,"zwaveOffline":false,"databaseSize":38,"headerMessages":["Low memory"]}}`))
	if err != nil || !al.SafeMode || al.UpdateAvailable == nil || !*al.UpdateAvailable || al.UpdateVersion != "2.4.2.1" ||
		strings.Join(al.Active, ",") != "hubLowMemory" || len(al.Messages) != 1 || *al.DatabaseSizeMB != 38 {
		t.Errorf("alerts: %+v %v", al, err)
	}
	if al, _ := ParseHubAlerts([]byte(`{"version":"x","alerts":{"platformUpdateAvailable":"maybe"}}`)); al.UpdateAvailable != nil {
		t.Error("an update flag of an unknown shape read as an answer")
	}
}

func TestParseBackupFileUpdateShapes(t *testing.T) {
	bs, err := ParseLocalBackups([]byte(`[{"name":"old.lzf","createTime":"2026-06-01","createTimeOrig":"2026-06-01T00:00:00","size":1024},` +
		`{"name":"new.lzf","createTimeOrig":"2026-06-02T00:00:00+0000","size":"2048"},{"name":""}]`))
	if err != nil || len(bs) != 2 || bs[0].Name != "new.lzf" || bs[0].Size != 2048 || bs[1].CreatedAt.IsZero() {
		t.Errorf("local backups: %+v %v", bs, err)
	}
	files, free, err := ParseHubFiles([]byte(`{"files":[{"name":"b.txt","type":"file","size":12,"date":1700000000000},` +
		`{"name":"sub","type":"dir"},{"name":"a.csv","type":"file","size":3}],"freeSpace":900000}`))
	if err != nil || len(files) != 2 || files[0].Name != "a.csv" || free != 900000 || files[1].Modified.IsZero() {
		t.Errorf("files: %+v %d %v", files, free, err)
	}
	if old, free, err := ParseHubFiles([]byte(`[{"name":"x.txt","size":1}]`)); err != nil || len(old) != 1 || free != -1 {
		t.Errorf("older list shape: %+v %v", old, err)
	}
	p, err := ParsePlatformUpdate([]byte(`{"version":"2.4.2.1","upgrade":true,"status":"UPDATE_AVAILABLE","releaseNotesUrl":"u","beta":false,"accountEmails":["me@x"]}`))
	if err != nil || !p.Available() || p.Version != "2.4.2.1" {
		t.Errorf("update: %+v %v", p, err)
	}
	if b, _ := json.Marshal(p); strings.Contains(string(b), "me@x") {
		t.Error("the owner's account e-mail is passed on")
	}
	for _, bad := range []string{"", ".hidden", "../x", "a/b", "x\ny", strings.Repeat("a", 129), " lead"} {
		if ValidFileName(bad) == nil {
			t.Errorf("file name %q accepted", bad)
		}
	}
}

func FuzzParseHubLogs(f *testing.F) {
	f.Add([]byte(`["App 1\tinfo\tm\t2026-04-19 10:00:00.000\tapp","2026-04-19 10:00:02.000\twarn\tx\t\tdev"]`))
	f.Add([]byte("a\tb\nc"))
	f.Add([]byte(`["\u00e9\t\"q\"\\", "x\/y"]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		// The fast reader of the hub's list agrees with encoding/json wherever it answers.
		var want []string
		if fast, ok := jsonStrings(string(b)); ok {
			if err := json.Unmarshal(b, &want); err != nil || !slices.Equal(fast, want) {
				t.Fatalf("jsonStrings %q, encoding/json %q (%v)", fast, want, err)
			}
		}
		es, err := ParseHubLogs(b)
		if err != nil {
			return
		}
		for _, e := range es {
			if !e.Time.IsZero() && e.Time.Location() != time.UTC {
				t.Fatalf("time not in UTC: %v", e.Time)
			}
		}
	})
}

func FuzzParseHubAdminLists(f *testing.F) {
	f.Add([]byte(`{"uptime":"x","deviceStats":[{"id":1,"pct":"2"}],"jobs":[{"id":1}]}`))
	f.Add([]byte(`[{"name":"a.lzf","createTimeOrig":"2026-06-01T00:00:00+0000","size":1}]`))
	f.Add([]byte(`{"files":[{"name":"a","type":"file","date":1}],"freeSpace":1}`))
	f.Add([]byte(`{"alerts":{"platformUpdateAvailable":true,"x":true},"safeMode":true}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if rs, err := ParseRuntimeStats(b); err == nil {
			SortStats(rs.Devices, "name")
			SortStats(rs.Apps, "pct")
		}
		if bs, err := ParseLocalBackups(b); err == nil {
			for _, x := range bs {
				if x.Name == "" {
					t.Fatal("a backup without a name was kept")
				}
			}
		}
		if fs, _, err := ParseHubFiles(b); err == nil {
			for _, x := range fs {
				if x.Name == "" {
					t.Fatal("a file without a name was kept")
				}
			}
		}
		_, _ = ParseHubAlerts(b)
		_, _ = ParsePlatformUpdate(b)
		_ = ParseMemoryHistory(string(b))
	})
}
