//go:build !linux

package fsguard

import (
	"errors"
	"io/fs"
	"os"
	"time"
)

// hamcp ships for Linux only. Elsewhere the package builds, but refuses what it cannot check: without
// link counts no file content is read (see ErrHardLink), and disk usage is unavailable.

const openReadFlags = os.O_RDONLY

const openDirFlags = os.O_RDONLY

type sysStat struct {
	Nlink      uint64
	UID, GID   uint32
	AccessTime time.Time
	ChangeTime time.Time
}

func sysInfo(fs.FileInfo) (sysStat, bool) { return sysStat{}, false }

func statfs(*os.File) (total, free, avail uint64, err error) {
	return 0, 0, 0, errors.New("disk usage is only available on Linux")
}
