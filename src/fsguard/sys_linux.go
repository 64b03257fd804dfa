//go:build linux

package fsguard

import (
	"io/fs"
	"os"
	"syscall"
	"time"
)

// openReadFlags opens without blocking, so a FIFO swapped in after the type check cannot hang a read.
const openReadFlags = os.O_RDONLY | syscall.O_NONBLOCK

// openDirFlags opens only a directory: a FIFO or device named as a directory fails instead of blocking.
const openDirFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_DIRECTORY

// sysStat is the part of stat(2) that fs.FileInfo does not carry.
type sysStat struct {
	Nlink      uint64
	UID, GID   uint32
	AccessTime time.Time
	ChangeTime time.Time
}

func sysInfo(fi fs.FileInfo) (sysStat, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return sysStat{}, false
	}
	return sysStat{
		Nlink:      st.Nlink,
		UID:        st.Uid,
		GID:        st.Gid,
		AccessTime: time.Unix(st.Atim.Unix()).UTC(),
		ChangeTime: time.Unix(st.Ctim.Unix()).UTC(),
	}, true
}

// statfs reports the file system holding the open file: total, free (including blocks reserved for
// root) and available (to unprivileged users) bytes.
func statfs(f *os.File) (total, free, avail uint64, err error) {
	var s syscall.Statfs_t
	if err := syscall.Fstatfs(int(f.Fd()), &s); err != nil {
		return 0, 0, 0, err
	}
	bs := uint64(s.Bsize)
	return s.Blocks * bs, s.Bfree * bs, s.Bavail * bs, nil
}
