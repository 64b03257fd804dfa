// Package fsguard is the file access backend for hamcp's root tools: it confines every path to a set of
// configured roots, writes atomically, and never destroys a user's file — deleted and overwritten versions
// go to a trash with retention, from which they can be restored. It knows nothing of MCP.
//
// # Paths
//
// A user path names a root by its alias ("/config/automations.yaml", "/ssl/cert.pem"); a relative path is
// relative to /config. Paths are taken literally and checked before anything touches the disk; these are
// refused rather than normalised, because normalising is where confusion (and escapes) come from:
//
//   - "..", "." and empty components ("//"), except for one trailing slash;
//   - NUL bytes and other control characters, backslashes;
//   - percent-encoding ("%2e", "%2F", "%u002e"): nothing downstream decodes, so an encoded name is
//     either a mistake or an attack;
//   - non-ASCII characters other than letters and decimal digits. This refuses fullwidth and one-dot-leader
//     dots, slash lookalikes, bidirectional overrides, zero-width characters and combining marks. Refusing
//     combining marks means decomposed (NFD) names cannot be typed, so "café" has exactly one spelling;
//   - names ending in a dot or a space, or starting with a space;
//   - a root alias spelt differently ("/CONFIG", "/configx").
//
// Every operation then goes through an [os.Root] opened on the root's directory, so a symlink (absolute,
// relative, chained or looping) cannot lead outside it.
//
// # Hard links
//
// A regular file with more than one link may share its content with a file outside the roots, and the
// other names cannot be found cheaply. fsguard therefore never reads or copies the content of such a file:
// ReadFile, ReadLines, overwriting (which copies the old version to the trash), Delete (which copies to the
// trash) and moves between roots refuse it with [ErrHardLink]. Renames inside one root are allowed since
// they touch names, not content. Writes never modify a file in place — they replace it by rename — so
// writing can never change content reached through another link.
//
// # Writes
//
// Writes never land under /etc, /usr, /bin, /sbin, /sys or /proc (checked on the real host path of the
// directory written to, so a misconfigured root pointing there stays read-only), nor in a read-only root;
// a directory reachable through a read-only root is read-only through every alias.
//
// # hamcp's own folders
//
// Options.Private names hamcp's data directory (its store, SSH host key and options with their tokens).
// No root may lie inside one, and no operation reads, lists, stats or changes anything in one — checked
// on the path, on its real host location when a root contains the folder, and on the descriptor a read
// actually opened — so a filesystem grant is never a way to read hamcp's own secrets ([ErrPrivate]).
//
// # Trash
//
// Each trash item is a directory under TrashDir/items holding the data and a meta.json sidecar, so the
// trash survives restarts without a database. Items expire after Options.Retention (expired ones are
// removed when the FS opens and whenever something new goes to the trash) and at most
// Options.MaxVersions are kept per path. Moving into the trash always copies: roots are separate mounts in
// the add-on, where rename across them is impossible. The trash assumes one process uses it at a time.
package fsguard
