package hubitat

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"
)

// adminClient is logged in with Hub Security on h.
func adminClient(t *testing.T, h *Hub) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.PostForm(h.URL()+"/login", url.Values{"username": {"admin"}, "password": {"pw"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return c
}

func call(t *testing.T, c *http.Client, req *http.Request) (int, []byte) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func adminGet(t *testing.T, c *http.Client, h *Hub, path string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, h.URL()+path, nil)
	return call(t, c, req)
}

// TestHubCareRoutes pins the shapes upstream's parsers and the hub's own pages read, and that
// every route sits behind Hub Security.
func TestHubCareRoutes(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{Username: "admin", Password: "pw", RebootDelay: 10 * time.Millisecond})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{"/logs/past/json", "/logs/json", "/hub/advanced/freeOSMemoryHistory", "/hub2/localBackups",
		"/hub/fileManager/json", "/local/notes.txt", "/hub/cloud/checkForUpdate", "/hub2/restoreLocalBackup?fileName=x"} {
		if st, _ := adminGet(t, noFollow, h, p); st != http.StatusFound {
			t.Errorf("%s without a session: %d, want the login redirect", p, st)
		}
	}
	c := adminClient(t, h)

	_, b := adminGet(t, c, h, "/logs/past/json")
	lines := decode[[]string](t, b)
	if len(lines) != 7 || len(strings.Split(lines[0], "\t")) != 5 || !strings.HasSuffix(lines[0], "\tdev") {
		t.Errorf("past logs: %q", lines)
	}
	for q, want := range map[string]int{"?type=dev&id=8": 2, "?type=app&id=60": 1, "?type=dev&id=abc": 0, "?type=dev&id=999": 0} {
		if _, b := adminGet(t, c, h, "/logs/past/json"+q); len(decode[[]string](t, b)) != want {
			t.Errorf("%s: %s, want %d lines", q, b, want)
		}
	}
	_, b = adminGet(t, c, h, "/logs/json")
	stats := decode[struct {
		Uptime      string           `json:"uptime"`
		DeviceStats []map[string]any `json:"deviceStats"`
		AppStats    []map[string]any `json:"appStats"`
		Jobs        []map[string]any `json:"jobs"`
	}](t, b)
	if stats.Uptime == "" || len(stats.DeviceStats) == 0 || stats.DeviceStats[0]["formattedPct"] == nil || len(stats.Jobs) != 2 ||
		stats.Jobs[0]["methodName"] != "runRule" {
		t.Errorf("runtime stats: %s", b)
	}
	_, b = adminGet(t, c, h, "/hub/advanced/freeOSMemoryHistory")
	if rows := strings.Split(strings.TrimSpace(string(b)), "\n"); rows[0] != "Date/time,Free OS,5m CPU avg,Total Java,Free Java,Direct Java" || len(rows) != 145 {
		t.Errorf("memory history: %d rows, header %q", len(rows), rows[0])
	}

	// Backups: the list, a download by name, a 404 for another, and backupDB?fileName=latest
	// adding to the list as the hub does.
	_, b = adminGet(t, c, h, "/hub2/localBackups")
	bs := decode[[]struct {
		Name           string `json:"name"`
		CreateTimeOrig string `json:"createTimeOrig"`
		Size           int    `json:"size"`
	}](t, b)
	if len(bs) != 3 || !strings.HasSuffix(bs[0].Name, ".lzf") || !strings.HasSuffix(bs[0].CreateTimeOrig, "+0000") || bs[0].Size == 0 {
		t.Fatalf("local backups: %s", b)
	}
	if st, f := adminGet(t, c, h, "/hub/backupDB?fileName="+url.QueryEscape(bs[0].Name)); st != 200 || !bytes.HasPrefix(f, []byte("ZV")) {
		t.Errorf("download: %d %q", st, f)
	}
	if st, _ := adminGet(t, c, h, "/hub/backupDB?fileName=missing.lzf"); st != http.StatusNotFound {
		t.Errorf("download of a missing backup: %d", st)
	}
	adminGet(t, c, h, "/hub/backupDB?fileName=latest")
	if n := len(h.LocalBackupNames()); n != 4 {
		t.Errorf("%d local backups after backupDB?fileName=latest, want 4", n)
	}
	if _, b := adminGet(t, c, h, "/hub2/deleteLocalBackup?fileName=missing.lzf"); string(bytes.TrimSpace(b)) != `{"message":"Backup file not found","success":false}` {
		t.Errorf("delete of a missing backup: %s", b)
	}
	if _, b := adminGet(t, c, h, "/hub2/deleteLocalBackup?fileName="+url.QueryEscape(bs[2].Name)); string(bytes.TrimSpace(b)) != `{"success":true}` {
		t.Errorf("delete: %s", b)
	}

	// File Manager: list (a folder among the files), upload, read, delete with the page's body.
	_, b = adminGet(t, c, h, "/hub/fileManager/json")
	fm := decode[struct {
		Files []struct {
			Name string `json:"name"`
			Type string `json:"type"`
			Date int64  `json:"date"`
		} `json:"files"`
		FreeSpace int64 `json:"freeSpace"`
	}](t, b)
	if len(fm.Files) != 3 || fm.FreeSpace == 0 || fm.Files[0].Type != "dir" || fm.Files[1].Date == 0 {
		t.Errorf("file list: %s", b)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, _ := mw.CreateFormFile("uploadFile", "new file.txt")
	part.Write([]byte("hello"))
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, h.URL()+"/hub/fileManager/upload", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if _, b := call(t, c, req); !strings.Contains(string(b), `"success":true`) {
		t.Errorf("upload: %s", b)
	}
	if st, f := adminGet(t, c, h, "/local/new%20file.txt"); st != 200 || string(f) != "hello" {
		t.Errorf("read back: %d %q", st, f)
	}
	if st, _ := adminGet(t, c, h, "/local/missing.txt"); st != http.StatusNotFound {
		t.Errorf("missing file: %d", st)
	}
	req, _ = http.NewRequest(http.MethodPost, h.URL()+"/hub/fileManager/delete", strings.NewReader(`{"folder":"","name":"new file.txt","type":"file"}`))
	req.Header.Set("Content-Type", "text/plain;charset=UTF-8") // what fetch sends with a string body
	if _, b := call(t, c, req); string(bytes.TrimSpace(b)) != `{"status":true}` {
		t.Errorf("delete: %s", b)
	}

	// Platform update: nothing offered, then an offer, applied with a reboot.
	_, b = adminGet(t, c, h, "/hub/cloud/checkForUpdate")
	if !strings.Contains(string(b), `"status":"NO_UPDATE_AVAILABLE"`) || !strings.Contains(string(b), `"upgrade":false`) {
		t.Errorf("check, nothing offered: %s", b)
	}
	h.OfferPlatformUpdate("2.4.2.130")
	_, b = adminGet(t, c, h, "/hub2/hubData")
	if !strings.Contains(string(b), `"platformUpdateAvailable":true`) {
		t.Errorf("hubData with an update offered: %s", b)
	}
	_, b = adminGet(t, c, h, "/hub/cloud/updatePlatform")
	if string(bytes.TrimSpace(b)) != `{"success":true}` || h.Firmware() != "2.4.2.130" {
		t.Errorf("update: %s, firmware %s", b, h.Firmware())
	}
}
