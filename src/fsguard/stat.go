package fsguard

import (
	"fmt"
	"io/fs"
	"os/user"
	"strconv"
	"sync"
	"time"
)

// FileInfo describes one file as the tools show it. Times are UTC.
type FileInfo struct {
	Path          string    `json:"path"`
	Name          string    `json:"name"`
	Size          int64     `json:"size"`
	IsDir         bool      `json:"is_dir"`
	IsSymlink     bool      `json:"is_symlink,omitempty"`
	SymlinkTarget string    `json:"symlink_target,omitempty"`
	Mode          string    `json:"mode"` // "-rw-r--r--"
	Perm          string    `json:"perm"` // "0644"
	UID           uint32    `json:"uid"`
	GID           uint32    `json:"gid"`
	Owner         string    `json:"owner,omitempty"`
	Group         string    `json:"group,omitempty"`
	Links         uint64    `json:"links,omitempty"`
	ModTime       time.Time `json:"mtime"`
	AccessTime    time.Time `json:"atime,omitzero"`
	ChangeTime    time.Time `json:"ctime,omitzero"`
}

// Stat describes a path without following a final symlink; a symlink's target is reported as written.
func (f *FS) Stat(path string) (FileInfo, error) {
	r, res, err := f.resolve("stat", path)
	if err != nil {
		return FileInfo{}, err
	}
	fi, err := r.root.Lstat(res.Rel)
	if err != nil {
		return FileInfo{}, f.opError("stat", path, err)
	}
	info := fileInfo(res.Display, fi)
	if info.IsSymlink {
		if info.SymlinkTarget, err = r.root.Readlink(res.Rel); err != nil {
			return FileInfo{}, f.opError("stat", path, err)
		}
	}
	return info, nil
}

func fileInfo(display string, fi fs.FileInfo) FileInfo {
	_, name := parentRel(display)
	info := FileInfo{
		Path:      display,
		Name:      name,
		Size:      fi.Size(),
		IsDir:     fi.IsDir(),
		IsSymlink: fi.Mode()&fs.ModeSymlink != 0,
		Mode:      fi.Mode().String(),
		Perm:      permString(fi.Mode()),
		ModTime:   fi.ModTime().UTC(),
	}
	if s, ok := sysInfo(fi); ok {
		info.UID, info.GID, info.Links = s.UID, s.GID, s.Nlink
		info.AccessTime, info.ChangeTime = s.AccessTime, s.ChangeTime
		info.Owner, info.Group = userName(s.UID), groupName(s.GID)
	}
	return info
}

// permString is the octal form chmod takes, including setuid/setgid/sticky.
func permString(m fs.FileMode) string {
	p := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		p |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		p |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		p |= 0o1000
	}
	return fmt.Sprintf("%04o", p)
}

// Owner lookups read /etc/passwd and /etc/group on every call; the answers rarely change while hamcp runs.
var (
	userNames  sync.Map
	groupNames sync.Map
)

func userName(uid uint32) string {
	if v, ok := userNames.Load(uid); ok {
		return v.(string)
	}
	name := ""
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		name = u.Username
	}
	userNames.Store(uid, name)
	return name
}

func groupName(gid uint32) string {
	if v, ok := groupNames.Load(gid); ok {
		return v.(string)
	}
	name := ""
	if g, err := user.LookupGroupId(strconv.FormatUint(uint64(gid), 10)); err == nil {
		name = g.Name
	}
	groupNames.Store(gid, name)
	return name
}
