// Package fstools is the filesystem toolset: reading, writing, listing, moving and deleting
// files under the allowed roots (/config, /ssl, /backup, /share, /media, /addons, …). Every tool
// is in the filesystem permission category; nothing is ever lost — overwritten and deleted
// files go to a trash that ha_restore_file brings back.
package fstools

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"unicode/utf8"

	"github.com/hamcp/hamcp/src/fsguard"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetFiles is the toolset name.
const SetFiles = "files"

// fsError turns an fsguard error into one the model can act on.
func fsError(err error) error {
	var pe *fsguard.PathError
	msg := err.Error()
	if errors.As(err, &pe) {
		msg = pe.Error()
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &toolkit.Error{Code: "not_found", Message: msg, Hint: "list the directory with ha_list_directory to find the right name"}
	case errors.Is(err, fs.ErrExist):
		return &toolkit.Error{Code: "already_exists", Message: msg, Hint: "pass overwrite=true to replace it (the old version is kept in the trash)"}
	case errors.Is(err, fsguard.ErrOutsideRoots):
		return &toolkit.Error{Code: "path_not_allowed", Field: "path", Message: msg}
	case errors.Is(err, fsguard.ErrReadOnly):
		return &toolkit.Error{Code: "read_only", Field: "path", Message: msg}
	case errors.Is(err, fsguard.ErrHardLink), errors.Is(err, fsguard.ErrUnsupportedType):
		return &toolkit.Error{Code: "unsupported_file", Message: msg}
	}
	return &toolkit.Error{Code: "filesystem_error", Message: msg}
}

// namePathField points a path error at the argument that held the path, for tools whose path
// arguments are not called "path" (ha_move_file's from and to), so the model knows which to fix.
func namePathField(te, err error, fields map[string]string) error {
	var pe *fsguard.PathError
	var e *toolkit.Error
	if errors.As(err, &pe) && errors.As(te, &e) && e.Field == "path" {
		if name, ok := fields[pe.Path]; ok {
			e.Field = name
		}
	}
	return te
}

type readArgs struct {
	Path     string `json:"path" jsonschema:"file path under an allowed root, e.g. /config/configuration.yaml (relative paths are under /config)" validate:"required" example:"/config/configuration.yaml"`
	Encoding string `json:"encoding,omitempty" jsonschema:"text (default) or base64 for binary files" validate:"omitempty,oneof=text base64"`
	Offset   int64  `json:"offset,omitempty" jsonschema:"text: first line to return (1-based); base64: byte offset" validate:"omitempty,min=0"`
	Lines    int    `json:"lines,omitempty" jsonschema:"text: number of lines to return from offset (max 5000)" validate:"omitempty,min=1,max=5000"`
	MaxSize  int64  `json:"max_size,omitempty" jsonschema:"largest file (or base64 chunk) to return whole, in bytes (default 1048576)" validate:"omitempty,min=1,max=4194304"`
}

type readResult struct {
	Path       string `json:"path"`
	Size       int64  `json:"size"`
	Encoding   string `json:"encoding"`
	Content    string `json:"content"`
	FromLine   int    `json:"from_line,omitempty"`
	TotalLines int    `json:"total_lines,omitempty"`
	Offset     int64  `json:"offset,omitempty"`
	Truncated  bool   `json:"truncated,omitempty"`
	Next       string `json:"next,omitempty"`
}

type writeArgs struct {
	Path       string `json:"path" jsonschema:"file path under an allowed root, e.g. /config/automations.yaml" validate:"required"`
	Content    string `json:"content" jsonschema:"the complete new content"`
	Encoding   string `json:"encoding,omitempty" jsonschema:"text (default) or base64" validate:"omitempty,oneof=text base64"`
	CreateDirs bool   `json:"create_dirs,omitempty" jsonschema:"create missing parent directories"`
	Exclusive  bool   `json:"exclusive,omitempty" jsonschema:"fail if the file already exists"`
	Mode       string `json:"mode,omitempty" jsonschema:"octal permissions for a new file, e.g. 0644 (existing files keep theirs)"`
}

type listArgs struct {
	Path   string `json:"path,omitempty" jsonschema:"directory, e.g. /config (default /config)"`
	Hidden bool   `json:"hidden,omitempty" jsonschema:"include names starting with a dot (e.g. .storage)"`
	toolkit.Page
}

type pathArgs struct {
	Path string `json:"path" jsonschema:"path under an allowed root" validate:"required"`
}

type deleteArgs struct {
	Path      string `json:"path" jsonschema:"file or directory to delete (it goes to the trash)" validate:"required"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"required to delete a non-empty directory"`
}

type moveArgs struct {
	From      string `json:"from" jsonschema:"existing path" validate:"required"`
	To        string `json:"to" jsonschema:"new path" validate:"required"`
	Overwrite bool   `json:"overwrite,omitempty" jsonschema:"replace an existing target (it goes to the trash)"`
}

type restoreArgs struct {
	ID        string `json:"id,omitempty" jsonschema:"trash item to restore; omit to list the versions kept for path"`
	Path      string `json:"path,omitempty" jsonschema:"with id: where to restore (default: where it was); without id: list the versions of this path (empty: the whole trash)"`
	Overwrite bool   `json:"overwrite,omitempty" jsonschema:"replace a file that now exists at the target (it goes to the trash)"`
	toolkit.Page
}

type restoreResult struct {
	Restored *fsguard.TrashItem               `json:"restored,omitempty"`
	Versions *toolkit.List[fsguard.TrashItem] `json:"versions,omitempty"`
}

// Tools returns the filesystem tools over f.
func Tools(f *fsguard.FS) []*toolkit.Tool {
	read := toolkit.Define(toolkit.Spec[readArgs, readResult]{
		Name: "ha_read_file", Toolset: SetFiles, Title: "Read a file", Category: toolkit.Filesystem,
		Description: "Read a file under the allowed roots (/config, /homeassistant, /ssl, /backup, /share, /media, /addons, /addon_configs). " +
			"Text by default; for long files read a window with offset (first line) and lines. encoding=base64 for binary files. " +
			"Files over max_size (1 MB) are refused with advice. Needs the user's filesystem permission for this session. " +
			"To find files use ha_list_directory; for YAML configuration prefer the config tools when they exist.",
		ReadOnly: true,
		Summary:  func(a readArgs) string { return a.Path },
		Handler: func(ctx context.Context, c *toolkit.Call, a readArgs) (readResult, error) {
			maxSize := a.MaxSize
			if maxSize == 0 {
				maxSize = fsguard.DefaultMaxRead
			}
			if a.Encoding == "base64" {
				data, info, err := f.ReadFile(a.Path, a.Offset, maxSize)
				if err != nil {
					return readResult{}, fsError(err)
				}
				r := readResult{Path: info.Path, Size: info.Size, Encoding: "base64", Content: base64.StdEncoding.EncodeToString(data), Offset: a.Offset}
				if end := a.Offset + int64(len(data)); end < info.Size {
					r.Truncated = true
					r.Next = "read the rest with offset=" + strconv.FormatInt(end, 10)
				}
				return r, nil
			}
			info, err := f.Stat(a.Path)
			if err != nil {
				return readResult{}, fsError(err)
			}
			if info.IsDir {
				return readResult{}, &toolkit.Error{Code: "is_directory", Field: "path", Message: a.Path + " is a directory", Hint: "use ha_list_directory"}
			}
			if a.Offset == 0 && a.Lines == 0 {
				if info.Size > maxSize {
					return readResult{}, &toolkit.Error{Code: "too_large", Field: "max_size", Message: fmt.Sprintf("%s is %d bytes, over max_size %d", info.Path, info.Size, maxSize),
						Hint: "read a window with offset (first line) and lines, e.g. {\"offset\": 1, \"lines\": 200}, or search it with a command if allowed"}
				}
				data, _, err := f.ReadFile(a.Path, 0, maxSize)
				if err != nil {
					return readResult{}, fsError(err)
				}
				if !utf8.Valid(data) {
					return readResult{}, &toolkit.Error{Code: "binary_file", Field: "encoding", Message: info.Path + " is not UTF-8 text", Hint: "read it with encoding=base64"}
				}
				return readResult{Path: info.Path, Size: info.Size, Encoding: "text", Content: string(data)}, nil
			}
			from := int(a.Offset)
			if from == 0 {
				from = 1
			}
			text, total, truncated, err := f.ReadLines(a.Path, from, a.Lines)
			if err != nil {
				return readResult{}, fsError(err)
			}
			r := readResult{Path: info.Path, Size: info.Size, Encoding: "text", Content: text, FromLine: from, TotalLines: total, Truncated: truncated}
			if truncated {
				r.Next = "continue after the last line returned with a larger offset"
			}
			return r, nil
		},
	})

	write := toolkit.Define(toolkit.Spec[writeArgs, fsguard.WriteResult]{
		Name: "ha_write_file", Toolset: SetFiles, Title: "Write a file", Category: toolkit.Filesystem,
		Description: "Create or replace a file under the allowed roots with the complete new content. The write is atomic (never half-written) and the previous version is kept in the trash " +
			"(restore it with ha_restore_file). Never under /etc, /usr, /bin, /sbin, /sys, /proc. Read the file first and change only what the user asked; " +
			"after editing Home Assistant configuration, validate it before reloading or restarting. Needs the filesystem permission.",
		Destructive: true,
		Summary:     func(a writeArgs) string { return fmt.Sprintf("%s (%d bytes)", a.Path, len(a.Content)) },
		Handler: func(ctx context.Context, c *toolkit.Call, a writeArgs) (fsguard.WriteResult, error) {
			data := []byte(a.Content)
			if a.Encoding == "base64" {
				var err error
				if data, err = base64.StdEncoding.DecodeString(a.Content); err != nil {
					return fsguard.WriteResult{}, toolkit.InvalidArg("content", "is not valid base64", "")
				}
			}
			var perm os.FileMode
			if a.Mode != "" {
				m, err := strconv.ParseUint(a.Mode, 8, 32)
				if err != nil || m > 0o777 {
					return fsguard.WriteResult{}, toolkit.InvalidArg("mode", "must be octal permissions", `{"mode": "0644"}`)
				}
				perm = os.FileMode(m)
			}
			res, err := f.WriteFile(a.Path, data, perm, fsguard.WriteOptions{CreateDirs: a.CreateDirs, Exclusive: a.Exclusive})
			if err != nil {
				return fsguard.WriteResult{}, fsError(err)
			}
			return res, nil
		},
	})

	list := toolkit.Define(toolkit.Spec[listArgs, toolkit.List[fsguard.Entry]]{
		Name: "ha_list_directory", Toolset: SetFiles, Title: "List a directory", Category: toolkit.Filesystem,
		Description: "List a directory under the allowed roots with size, mode and modification time, sorted by name. Hidden names (starting with a dot) are left out unless hidden=true. " +
			"Paged: limit (default 100, max 1000), offset. Path \"/\" lists the roots. Needs the filesystem permission.",
		ReadOnly: true,
		Summary:  func(a listArgs) string { return a.Path },
		Handler: func(ctx context.Context, c *toolkit.Call, a listArgs) (toolkit.List[fsguard.Entry], error) {
			limit, offset := a.Page.Effective()
			if a.Path == "/" {
				var roots []fsguard.Entry
				for _, r := range f.Roots() {
					info, err := f.Stat(r.Alias)
					if err == nil {
						roots = append(roots, info)
					}
				}
				return toolkit.Paginate(roots, a.Page), nil
			}
			path := a.Path
			if path == "" {
				path = "/config"
			}
			entries, total, err := f.List(path, fsguard.ListOptions{Offset: offset, Limit: limit, Hidden: a.Hidden})
			if err != nil {
				return toolkit.List[fsguard.Entry]{}, fsError(err)
			}
			return toolkit.Window(entries, total, a.Page), nil
		},
	})

	info := toolkit.Define(toolkit.Spec[pathArgs, fsguard.FileInfo]{
		Name: "ha_file_info", Toolset: SetFiles, Title: "File details", Category: toolkit.Filesystem,
		Description: "Show one path's details: size, type, permissions, owner and group, link count, modification/access/change times and a symlink's target. Needs the filesystem permission.",
		ReadOnly:    true,
		Summary:     func(a pathArgs) string { return a.Path },
		Handler: func(ctx context.Context, c *toolkit.Call, a pathArgs) (fsguard.FileInfo, error) {
			fi, err := f.Stat(a.Path)
			if err != nil {
				return fsguard.FileInfo{}, fsError(err)
			}
			return fi, nil
		},
	})

	del := toolkit.Define(toolkit.Spec[deleteArgs, fsguard.TrashItem]{
		Name: "ha_delete_file", Toolset: SetFiles, Title: "Delete a file", Category: toolkit.Filesystem,
		Description: "Delete a file or directory by moving it to hamcp's trash (kept 7 days; ha_restore_file brings it back). A non-empty directory needs recursive=true. " +
			"Ask the user before deleting anything they did not name. Needs the filesystem permission.",
		Destructive: true,
		Summary:     func(a deleteArgs) string { return a.Path },
		Handler: func(ctx context.Context, c *toolkit.Call, a deleteArgs) (fsguard.TrashItem, error) {
			item, err := f.Delete(a.Path, a.Recursive)
			if err != nil {
				return fsguard.TrashItem{}, fsError(err)
			}
			return item, nil
		},
	})

	move := toolkit.Define(toolkit.Spec[moveArgs, map[string]string]{
		Name: "ha_move_file", Toolset: SetFiles, Title: "Move or rename", Category: toolkit.Filesystem,
		Description: "Move or rename a file or directory within the allowed roots. An existing target is replaced only with overwrite=true, and then kept in the trash. Needs the filesystem permission.",
		Destructive: true,
		Summary:     func(a moveArgs) string { return a.From + " -> " + a.To },
		Handler: func(ctx context.Context, c *toolkit.Call, a moveArgs) (map[string]string, error) {
			if err := f.Move(a.From, a.To, a.Overwrite); err != nil {
				return nil, namePathField(fsError(err), err, map[string]string{a.From: "from", a.To: "to"})
			}
			return map[string]string{"from": a.From, "to": a.To}, nil
		},
	})

	restore := toolkit.Define(toolkit.Spec[restoreArgs, restoreResult]{
		Name: "ha_restore_file", Toolset: SetFiles, Title: "Restore from trash", Category: toolkit.Filesystem,
		Description: "Bring back a deleted or overwritten file from hamcp's trash. Without id it lists the versions kept for path (newest first; empty path lists the whole trash); " +
			"with id it restores that version to where it was (or to path); restored_to in the answer is where it is now. A file now at the target is replaced only with overwrite=true and then itself kept in the trash. Needs the filesystem permission.",
		Destructive: true,
		Summary:     func(a restoreArgs) string { return a.ID + " " + a.Path },
		Handler: func(ctx context.Context, c *toolkit.Call, a restoreArgs) (restoreResult, error) {
			if a.ID == "" {
				items, err := f.Trash(a.Path)
				if err != nil {
					return restoreResult{}, fsError(err)
				}
				l := toolkit.Paginate(items, a.Page)
				return restoreResult{Versions: &l}, nil
			}
			item, err := f.Restore(a.ID, a.Path, a.Overwrite)
			if err != nil {
				return restoreResult{}, fsError(err)
			}
			return restoreResult{Restored: &item}, nil
		},
	})
	return []*toolkit.Tool{read, write, list, info, del, move, restore}
}
