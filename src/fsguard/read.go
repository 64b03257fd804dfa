package fsguard

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// ReadFile returns up to maxSize bytes (DefaultMaxRead when maxSize <= 0, at most MaxRead) from offset, and the file's
// info; info.Size tells the caller whether there is more to read.
func (f *FS) ReadFile(path string, offset, maxSize int64) ([]byte, FileInfo, error) {
	if offset < 0 {
		return nil, FileInfo{}, &PathError{Op: "read", Path: path, Reason: "offset must be 0 or more"}
	}
	if maxSize <= 0 {
		maxSize = DefaultMaxRead
	}
	if maxSize > MaxRead {
		return nil, FileInfo{}, &PathError{Op: "read", Path: path, Reason: fmt.Sprintf("maxSize may be at most %d bytes; read a large file in pieces with offset", MaxRead)}
	}
	file, info, err := f.openRegular("read", path)
	if err != nil {
		return nil, FileInfo{}, err
	}
	defer file.Close()
	if offset >= info.Size {
		return []byte{}, info, nil
	}
	buf := make([]byte, min(maxSize, info.Size-offset))
	n, err := file.ReadAt(buf, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, FileInfo{}, f.opError("read", path, err)
	}
	return buf[:n], info, nil
}

// ReadLines returns lines fromLine (1-based) onwards, at most `lines` of them (100 when lines <= 0) and at
// most DefaultMaxRead bytes, with the file's total line count. truncated is true when lines follow the
// ones returned, or the byte cap cut the text short.
func (f *FS) ReadLines(path string, fromLine, lines int) (text string, totalLines int, truncated bool, err error) {
	if fromLine < 0 {
		return "", 0, false, &PathError{Op: "read", Path: path, Reason: "fromLine must be 1 or more (0 means 1)"}
	}
	fromLine = max(fromLine, 1)
	if lines <= 0 {
		lines = 100
	}
	file, _, err := f.openRegular("read", path)
	if err != nil {
		return "", 0, false, err
	}
	defer file.Close()

	var out strings.Builder
	br := bufio.NewReaderSize(file, 64<<10)
	line := 1       // number of the line being read
	inLine := false // some bytes of the current line have been seen
	for {
		chunk, rerr := br.ReadSlice('\n')
		if len(chunk) > 0 {
			ends := chunk[len(chunk)-1] == '\n'
			if line >= fromLine && line < fromLine+lines {
				room := DefaultMaxRead - out.Len()
				if len(chunk) > room {
					chunk, truncated = chunk[:room], true
				}
				out.Write(chunk)
			}
			inLine = !ends
			if ends {
				line++
			}
		}
		if rerr == bufio.ErrBufferFull {
			continue
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return "", 0, false, f.opError("read", path, rerr)
		}
	}
	totalLines = line - 1
	if inLine {
		totalLines++
	}
	if totalLines >= fromLine+lines {
		truncated = true
	}
	return out.String(), totalLines, truncated, nil
}

// openRegular opens a regular file for reading, refusing directories, special files and files whose
// content may be shared with the outside through a hard link.
func (f *FS) openRegular(op, path string) (*os.File, FileInfo, error) {
	r, res, err := f.resolve(op, path)
	if err != nil {
		return nil, FileInfo{}, err
	}
	fi, err := r.root.Stat(res.Rel)
	if err != nil {
		return nil, FileInfo{}, f.opError(op, path, err)
	}
	if err := regularOnly(op, path, fi); err != nil {
		return nil, FileInfo{}, err
	}
	file, err := r.root.OpenFile(res.Rel, openReadFlags, 0)
	if err != nil {
		return nil, FileInfo{}, f.opError(op, path, err)
	}
	// Check again on what was actually opened: the path may have changed since the Stat.
	fi, err = file.Stat()
	if err == nil {
		err = regularOnly(op, path, fi)
	}
	if err == nil {
		err = singleLink(fi)
	}
	if err == nil {
		err = f.checkOpenedPrivate(op, path, file)
	}
	if err != nil {
		file.Close()
		return nil, FileInfo{}, f.opError(op, path, err)
	}
	return file, fileInfo(res.Display, fi), nil
}

func regularOnly(op, path string, fi os.FileInfo) error {
	switch {
	case fi.Mode().IsRegular():
		return nil
	case fi.IsDir():
		return &PathError{Op: op, Path: path, Reason: "is a directory; list it instead"}
	}
	return &PathError{Op: op, Path: path, Reason: fmt.Sprintf("is a %s, which is never opened", typeName(fi.Mode())), Err: ErrUnsupportedType}
}

// singleLink refuses regular files with several hard links (see the package documentation).
func singleLink(fi os.FileInfo) error {
	s, ok := sysInfo(fi)
	switch {
	case !ok:
		return fmt.Errorf("%w: link counts cannot be checked on this platform, so the content is not read", ErrHardLink)
	case s.Nlink > 1:
		return fmt.Errorf("%w (%s has %d): its content may be shared with a file outside the roots, so it is not "+
			"read or copied; make an independent copy with cp from a shell and use that", ErrHardLink, fi.Name(), s.Nlink)
	}
	return nil
}

func typeName(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "symlink"
	case m&os.ModeNamedPipe != 0:
		return "FIFO"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	case m.IsDir():
		return "directory"
	}
	return "special file"
}
