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
	Path     string `json:"path" jsonschema:"file path; relative paths are under /config" validate:"required" example:"/config/configuration.yaml"`
	Encoding string `json:"encoding,omitempty" jsonschema:"text (default) or base64 for binary" validate:"omitempty,oneof=text base64"`
	Offset   int64  `json:"offset,omitempty" jsonschema:"text: first line (1-based); base64: byte offset" validate:"omitempty,min=0"`
	Lines    int    `json:"lines,omitempty" jsonschema:"text: lines to return from offset" validate:"omitempty,min=1,max=5000"`
	MaxSize  int64  `json:"max_size,omitempty" jsonschema:"largest file or base64 chunk to return, in bytes" validate:"omitempty,min=1,max=4194304"`
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
	Path       string `json:"path" jsonschema:"file path" validate:"required"`
	Content    string `json:"content" jsonschema:"the complete new content"`
	Encoding   string `json:"encoding,omitempty" jsonschema:"text (default) or base64" validate:"omitempty,oneof=text base64"`
	CreateDirs bool   `json:"create_dirs,omitempty" jsonschema:"create missing parent directories"`
	Exclusive  bool   `json:"exclusive,omitempty" jsonschema:"fail if the file already exists"`
	Mode       string `json:"mode,omitempty" jsonschema:"octal mode of a new file, e.g. 0644"`
}

type listArgs struct {
	Path   string `json:"path,omitempty" jsonschema:"directory (default /config)"`
	Hidden bool   `json:"hidden,omitempty" jsonschema:"include dot names (.storage)"`
	toolkit.Page
}

type pathArgs struct {
	Path string `json:"path" jsonschema:"path under an allowed root" validate:"required"`
}

type deleteArgs struct {
	Path      string `json:"path" jsonschema:"file or directory" validate:"required"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"required to delete a non-empty directory"`
}

type moveArgs struct {
	From      string `json:"from" jsonschema:"existing path" validate:"required"`
	To        string `json:"to" jsonschema:"new path" validate:"required"`
	Overwrite bool   `json:"overwrite,omitempty" jsonschema:"replace an existing target"`
}

type restoreArgs struct {
	ID        string `json:"id,omitempty" jsonschema:"trash item to restore; omit to list versions"`
	Path      string `json:"path,omitempty" jsonschema:"with id: where to restore; without: whose versions to list"`
	Overwrite bool   `json:"overwrite,omitempty" jsonschema:"replace a file now at the target"`
	toolkit.Page
}

type restoreResult struct {
	Restored *fsguard.TrashItem               `json:"restored,omitempty"`
	Versions *toolkit.List[fsguard.TrashItem] `json:"versions,omitempty"`
}

// Tools returns the filesystem tools over f.
func Tools(f *fsguard.FS) []*toolkit.Tool {
	return []*toolkit.Tool{readFile(f), writeFile(f), listDirectory(f), fileInfo(f), deleteFile(f), moveFile(f), restoreFile(f)}
}

// readFile is ha_read_file.
func readFile(f *fsguard.FS) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[readArgs, readResult]{
		Name: "ha_read_file", Toolset: SetFiles, Title: "Read a file", Category: toolkit.Filesystem,
		Description: "Read a file under the allowed roots (/config, /homeassistant, /ssl, /backup, /share, /media, /addons, /addon_configs). " +
			"Text by default; a long file by window (offset = first line, lines); encoding=base64 for binary. Over max_size it is refused with advice. " +
			"Find files with ha_list_directory. Needs the filesystem permission.",
		ReadOnly: true,
		Summary:  func(a readArgs) string { return a.Path },
		Handler:  func(ctx context.Context, c *toolkit.Call, a readArgs) (readResult, error) { return read(f, a) },
	})
}

// writeFile is ha_write_file.
func writeFile(f *fsguard.FS) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[writeArgs, fsguard.WriteResult]{
		Name: "ha_write_file", Toolset: SetFiles, Title: "Write a file", Category: toolkit.Filesystem,
		Description: "Create or replace a file with its complete new content: atomic, and the old version goes to the trash (ha_restore_file). " +
			"Read the file first and change only what the user asked; validate HA configuration before reloading or restarting. Needs the filesystem permission.",
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
			c.Undoable(writeUndo(res))
			return res, nil
		},
	})
}

// listDirectory is ha_list_directory.
func listDirectory(f *fsguard.FS) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[listArgs, toolkit.List[fsguard.Entry]]{
		Name: "ha_list_directory", Toolset: SetFiles, Title: "List a directory", Category: toolkit.Filesystem,
		Description: "List a directory under the allowed roots (size, mode, modification time), by name; dot names only with hidden=true. Path \"/\" lists the roots. Paged. Needs the filesystem permission.",
		ReadOnly:    true,
		Summary:     func(a listArgs) string { return a.Path },
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
}

// fileInfo is ha_file_info.
func fileInfo(f *fsguard.FS) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[pathArgs, fsguard.FileInfo]{
		Name: "ha_file_info", Toolset: SetFiles, Title: "File details", Category: toolkit.Filesystem,
		Description: "One path's details: size, type, permissions, owner, times, a symlink's target. Needs the filesystem permission.",
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
}

// deleteFile is ha_delete_file.
func deleteFile(f *fsguard.FS) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[deleteArgs, fsguard.TrashItem]{
		Name: "ha_delete_file", Toolset: SetFiles, Title: "Delete a file", Category: toolkit.Filesystem,
		Description: "Delete a file or directory (recursive=true if not empty) by moving it to hamcp's trash for 7 days (ha_restore_file). " +
			"Ask the user before deleting anything they did not name. Needs the filesystem permission.",
		Destructive: true,
		Summary:     func(a deleteArgs) string { return a.Path },
		Handler: func(ctx context.Context, c *toolkit.Call, a deleteArgs) (fsguard.TrashItem, error) {
			item, err := f.Delete(a.Path, a.Recursive)
			if err != nil {
				return fsguard.TrashItem{}, fsError(err)
			}
			c.Undoable(deleteUndo(item))
			return item, nil
		},
	})
}

// moveFile is ha_move_file.
func moveFile(f *fsguard.FS) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[moveArgs, map[string]string]{
		Name: "ha_move_file", Toolset: SetFiles, Title: "Move or rename", Category: toolkit.Filesystem,
		Description: "Move or rename within the allowed roots; an existing target is replaced only with overwrite=true (and kept in the trash). Needs the filesystem permission.",
		Destructive: true,
		Summary:     func(a moveArgs) string { return a.From + " -> " + a.To },
		Handler: func(ctx context.Context, c *toolkit.Call, a moveArgs) (map[string]string, error) {
			if err := f.Move(a.From, a.To, a.Overwrite); err != nil {
				return nil, namePathField(fsError(err), err, map[string]string{a.From: "from", a.To: "to"})
			}
			c.Undoable(moveUndo(a.From, a.To, a.Overwrite))
			return map[string]string{"from": a.From, "to": a.To}, nil
		},
	})
}

// restoreFile is ha_restore_file.
func restoreFile(f *fsguard.FS) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[restoreArgs, restoreResult]{
		Name: "ha_restore_file", Toolset: SetFiles, Title: "Restore from trash", Category: toolkit.Filesystem,
		Description: "Bring back a deleted or overwritten file from the trash. Without id: list the versions kept for path (newest first; no path: whole trash). " +
			"With id: restore it where it was (or to path); restored_to says where. A file now there is replaced only with overwrite=true. Needs the filesystem permission.",
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
			c.Undoable(restoreUndo(item))
			return restoreResult{Restored: &item}, nil
		},
	})
}

// read serves ha_read_file: a whole text file, a window of lines, or a base64 chunk.
func read(f *fsguard.FS, a readArgs) (readResult, error) {
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
}
