package hubitat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"sort"
	"strings"
	"time"
)

// The hub's File Manager, as its own page drives it (resources/hub2-source/vue-hub2.min.js:
// refreshFiles, deleteFile, getUploadFileUrl, handleUpload; upstream's mcp-files-lib
// toolListFiles reads the same list):
//
//	GET  /hub/fileManager/json          {files: [{name, type: file|dir, size, date (ms)}], freeSpace}
//	GET  /local/<name>                  the file's bytes; 404 when there is none
//	POST /hub/fileManager/upload        multipart, field uploadFile → {success, status}
//	POST /hub/fileManager/delete        {folder, name, type} → {status: true|false}

// HubFile is one file in the File Manager.
type HubFile struct {
	Name     string    `json:"name"`
	Size     int64     `json:"size"`
	Modified time.Time `json:"-"`
}

// ErrFileNotFound is a File Manager name the hub has no file for.
var ErrFileNotFound = errors.New("the hub's File Manager has no file of that name")

// MaxHubFileBytes is the largest file hamcp reads or writes (the hub's page uploads up to 15 MB;
// hamcp keeps a copy of what it overwrites).
const MaxHubFileBytes = 10 << 20

// ValidFileName checks a File Manager name: one file at the top level, no path.
func ValidFileName(name string) error {
	if name == "" || len(name) > 128 || strings.HasPrefix(name, ".") || strings.TrimSpace(name) != name {
		return fmt.Errorf("file name %q must be 1-128 characters, not start with a dot or a space", clean(name))
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._- ()", r)
		if !ok {
			return fmt.Errorf("file name %q may hold only letters, digits, spaces and . _ - ( ), e.g. notes.txt", clean(name))
		}
	}
	return nil
}

// HubFiles lists the File Manager's files (folders are left out), by name; free is the space
// left in bytes (-1 when the hub did not say).
func (c *Client) HubFiles(ctx context.Context) (files []HubFile, free int64, err error) {
	r, err := c.Admin(ctx, http.MethodGet, "/hub/fileManager/json", nil)
	if err != nil {
		return nil, -1, err
	}
	return ParseHubFiles(r.Body)
}

// ParseHubFiles reads /hub/fileManager/json: the object the current page reads, or the bare list
// older firmware sent (upstream reads both).
func ParseHubFiles(b []byte) ([]HubFile, int64, error) {
	type wireFile struct {
		Name string          `json:"name"`
		Type string          `json:"type"`
		Size json.RawMessage `json:"size"`
		Date json.RawMessage `json:"date"`
	}
	var obj struct {
		Files     []wireFile      `json:"files"`
		FreeSpace json.RawMessage `json:"freeSpace"`
	}
	var list []wireFile
	free := int64(-1)
	if err := json.Unmarshal(b, &obj); err == nil {
		list = obj.Files
		if f, ok := parseNumber(obj.FreeSpace); ok {
			free = int64(f)
		}
	} else if err2 := json.Unmarshal(b, &list); err2 != nil {
		return nil, -1, fmt.Errorf("hubitat /hub/fileManager/json: unexpected reply: %w", err)
	}
	out := make([]HubFile, 0, len(list))
	for _, w := range list {
		if w.Name == "" || (w.Type != "" && w.Type != "file") {
			continue
		}
		f := HubFile{Name: w.Name, Size: int64(num(w.Size))}
		if ms, ok := parseNumber(w.Date); ok && ms > 0 {
			f.Modified = time.UnixMilli(int64(ms)).UTC()
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, free, nil
}

// ReadHubFile downloads one file; ok is false when the hub has none of that name.
func (c *Client) ReadHubFile(ctx context.Context, name string) (data []byte, ok bool, err error) {
	if err := ValidFileName(name); err != nil {
		return nil, false, err
	}
	r, err := c.Admin(ctx, http.MethodGet, "/local/"+url.PathEscape(name), nil)
	if IsStatus(err, http.StatusNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if len(r.Body) > MaxHubFileBytes {
		return nil, true, fmt.Errorf("hubitat file %q is larger than %d MB", clean(name), MaxHubFileBytes>>20)
	}
	return r.Body, true, nil
}

// WriteHubFile uploads data as name, replacing any file of that name.
func (c *Client) WriteHubFile(ctx context.Context, name string, data []byte) error {
	if err := ValidFileName(name); err != nil {
		return err
	}
	if len(data) > MaxHubFileBytes {
		return fmt.Errorf("file is %d bytes; hamcp writes at most %d MB", len(data), MaxHubFileBytes>>20)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="uploadFile"; filename=%q`, name))
	h.Set("Content-Type", "application/octet-stream")
	part, err := mw.CreatePart(h)
	if err != nil {
		return err
	}
	if _, err := part.Write(data); err != nil {
		return err
	}
	if err := mw.Close(); err != nil {
		return err
	}
	r, err := c.adminSend(ctx, http.MethodPost, "/hub/fileManager/upload", &payload{body: body.Bytes(), ctype: mw.FormDataContentType()}, c.callTimeout)
	if err != nil {
		return err
	}
	var w struct {
		Success bool   `json:"success"`
		Status  string `json:"status"`
	}
	if r.JSON == nil || json.Unmarshal(r.JSON, &w) != nil {
		return fmt.Errorf("hubitat file upload %q: unexpected reply %q", clean(name), clean(r.Text))
	}
	if !w.Success {
		return fmt.Errorf("hubitat refused the file %q: %s", clean(name), clean(w.Status))
	}
	return nil
}

// DeleteHubFile deletes one file.
func (c *Client) DeleteHubFile(ctx context.Context, name string) error {
	if err := ValidFileName(name); err != nil {
		return err
	}
	r, err := c.AdminJSON(ctx, "/hub/fileManager/delete", map[string]string{"folder": "", "name": name, "type": "file"})
	if err != nil {
		return err
	}
	var w struct {
		Status bool `json:"status"`
	}
	if r.JSON == nil || json.Unmarshal(r.JSON, &w) != nil {
		return fmt.Errorf("hubitat file delete %q: unexpected reply %q", clean(name), clean(r.Text))
	}
	if !w.Status {
		return fmt.Errorf("hubitat could not delete %q", clean(name))
	}
	return nil
}
