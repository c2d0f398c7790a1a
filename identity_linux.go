package hale

import (
	"fmt"
	"os"
	"syscall"
)

// fileIdentity is what identifies fi's file beyond its size and
// modification time: its device and inode and its status-change time,
// which a rewrite of the file always changes (the modification time can
// be set back; that one cannot).
func fileIdentity(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d:%d.%d", st.Dev, st.Ino, st.Ctim.Sec, st.Ctim.Nsec)
}
