package main

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// The users and groups of every image: root, nobody, and distroless's
// nonroot (65532), the user knit's charts run as. staff owns base-files'
// /var/local.
const (
	passwd = "root:x:0:0:root:/root:/bin/sh\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/usr/sbin/nologin\n"
	group = "root:x:0:\nstaff:x:50:\nnogroup:x:65534:\nnonroot:x:65532:\n"
	// libc-bin's postinst writes one; without it glibc asks DNS before
	// /etc/hosts.
	nsswitch = "passwd:         files\ngroup:          files\nshadow:         files\ngshadow:        files\n\n" +
		"hosts:          files dns\nnetworks:       files\n\n" +
		"protocols:      files\nservices:       files\nethers:         files\nrpc:            files\n"
	nonRootUID = 65532
	// subIDs are nonroot's subordinate uids and gids, as useradd gives
	// the first user: 65536 ids, enough for any image's owners.
	subIDs = "nonroot:100000:65536\n"
)

var pythonLib = regexp.MustCompile(`^usr/lib/(python3\.[0-9]+)$`)

// configure does what the packages' maintainer scripts would have done
// (they do not run) that an image needs, then adds what every image
// needs. certs are ca-certificates' certificates by path under
// /usr/share/ca-certificates.
func configure(t *tree, certs map[string][]byte) error {
	if err := t.addParents(); err != nil {
		return err
	}
	// base-files' postinst: the default dotfiles and profile, the
	// directories it creates, /var/run and /var/lock as links into /run.
	t.copyIfMissing("usr/share/base-files/profile", "etc/profile")
	t.copyIfMissing("usr/share/base-files/dot.profile", "root/.profile")
	t.copyIfMissing("usr/share/base-files/dot.bashrc", "root/.bashrc")
	if t.isDir("usr/share/base-files") {
		for _, d := range []string{"mnt", "srv", "opt", "media", "etc/opt", "var/opt",
			"usr/local/bin", "usr/local/etc", "usr/local/games", "usr/local/include", "usr/local/lib",
			"usr/local/sbin", "usr/local/share/man", "usr/local/src"} {
			t.dirIfMissing(d, 0o755, 0)
		}
		t.dirIfMissing("run/lock", 0o1777, 0)
		for link, target := range map[string]string{"var/run": "/run", "var/lock": "/run/lock",
			"usr/local/man": "share/man", "etc/dpkg/origins/default": "debian"} {
			if err := t.symlink(link, target); err != nil {
				return err
			}
		}
	}
	// readline-common's postinst.
	t.copyIfMissing("usr/share/readline/inputrc", "etc/inputrc")
	// debianutils': /etc/shells, and which; mawk's awk and nawk
	// (update-alternatives, here direct links).
	if sh, ok := t.files["usr/share/debianutils/shells"]; ok {
		var names []string
		for p, e := range t.files {
			if path.Dir(p) == "usr/share/debianutils/shells.d" && e.typ == tar.TypeReg {
				names = append(names, p)
			}
		}
		sort.Strings(names)
		dropins := make([][]byte, len(names))
		for i, n := range names {
			dropins[i] = t.files[n].data
		}
		t.file("etc/shells", 0o644, 0, shells(sh.data, dropins...))
	}
	for link, target := range map[string]string{"usr/bin/which": "which.debianutils", "usr/bin/awk": "mawk", "usr/bin/nawk": "mawk"} {
		if _, ok := t.files[path.Join(path.Dir(link), target)]; ok {
			if err := t.symlink(link, target); err != nil {
				return err
			}
		}
	}
	// python3.X-minimal's: the directory pip installs into.
	for p, e := range t.files {
		if m := pythonLib.FindStringSubmatch(p); m != nil && e.typ == tar.TypeDir {
			t.dirIfMissing("usr/local/lib/"+m[1]+"/dist-packages", 0o755, 0)
		}
	}
	// ca-certificates' (update-ca-certificates): the bundle, and the
	// links the openssl package has from OpenSSL's default paths to it.
	if len(certs) > 0 {
		t.file("etc/ssl/certs/ca-certificates.crt", 0o644, 0, bundle(certs))
		for link, target := range map[string]string{"usr/lib/ssl/certs": "/etc/ssl/certs", "usr/lib/ssl/cert.pem": "/etc/ssl/certs/ca-certificates.crt"} {
			if _, ok := t.files[link]; !ok {
				t.files[link] = &entry{typ: tar.TypeSymlink, mode: 0o777, link: target}
			}
		}
	}
	// shadow's useradd gives a user subordinate ids; newuidmap maps only
	// those into a user namespace nonroot makes (rootless BuildKit).
	if _, ok := t.files["usr/bin/newuidmap"]; ok {
		t.file("etc/subuid", 0o644, 0, []byte(subIDs))
		t.file("etc/subgid", 0o644, 0, []byte(subIDs))
		idMapsByCapability(t)
	}
	// Every image's.
	t.file("etc/passwd", 0o644, 0, []byte(passwd))
	t.file("etc/group", 0o644, 0, []byte(group))
	if _, ok := t.files["etc/nsswitch.conf"]; !ok {
		t.file("etc/nsswitch.conf", 0o644, 0, []byte(nsswitch))
	}
	t.files["tmp"] = &entry{typ: tar.TypeDir, mode: 0o1777}
	t.files["root"] = &entry{typ: tar.TypeDir, mode: 0o700}
	t.files["home/nonroot"] = &entry{typ: tar.TypeDir, mode: 0o700, uid: nonRootUID, gid: nonRootUID}
	if err := t.addParents(); err != nil {
		return err
	}
	// Merged /usr: /bin, /sbin, /lib... are links into /usr.
	for d := range aliased {
		if t.isDir("usr/" + d) {
			t.files[d] = &entry{typ: tar.TypeSymlink, mode: 0o777, link: "usr/" + d}
		}
	}
	return nil
}

func (t *tree) copyIfMissing(src, dst string) {
	if e, ok := t.files[src]; ok && e.typ == tar.TypeReg {
		if _, ok := t.files[dst]; !ok {
			c := *e
			t.files[dst] = &c
		}
	}
}

func (t *tree) dirIfMissing(p string, mode int64, gid int) {
	if _, ok := t.files[p]; !ok {
		t.files[p] = &entry{typ: tar.TypeDir, mode: mode, gid: gid}
	}
}

func (t *tree) file(p string, mode int64, gid int, data []byte) {
	t.files[p] = &entry{typ: tar.TypeReg, mode: mode, gid: gid, data: data}
}

// symlink makes p a link to target, in place of an empty directory.
func (t *tree) symlink(p, target string) error {
	if e, ok := t.files[p]; ok && e.typ == tar.TypeDir {
		for q := range t.files {
			if strings.HasPrefix(q, p+"/") {
				return fmt.Errorf("%s: cannot become a link to %s: the directory holds %s", p, target, q)
			}
		}
	}
	t.files[p] = &entry{typ: tar.TypeSymlink, mode: 0o777, link: target}
	return nil
}

// shells is /etc/shells as debianutils' update-shells writes it: its
// template, then each shell the packages declare, each under /bin also
// under /usr/bin (merged /usr), once.
func shells(template []byte, dropins ...[]byte) []byte {
	var b bytes.Buffer
	seen := map[string]bool{}
	add := func(line string) {
		if !seen[line] {
			seen[line] = true
			b.WriteString(line + "\n")
		}
	}
	for _, src := range append([][]byte{template}, dropins...) {
		for _, line := range strings.Split(string(src), "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			add(line)
			if !strings.HasPrefix(line, "#") && (strings.HasPrefix(line, "/bin/") || strings.HasPrefix(line, "/sbin/")) {
				add("/usr" + line)
			}
		}
	}
	return b.Bytes()
}

// bundle is update-ca-certificates' /etc/ssl/certs/ca-certificates.crt:
// the certificates in path order (ca-certificates.conf's), each ending in
// a newline.
func bundle(certs map[string][]byte) []byte {
	names := make([]string, 0, len(certs))
	for n := range certs {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		b.Write(certs[n])
		if c := certs[n]; len(c) > 0 && c[len(c)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// idMapsByCapability makes newuidmap and newgidmap gain CAP_SETUID and
// CAP_SETGID alone through file capabilities rather than run setuid root
// (Fedora's packaging). Debian builds them without their own lockdown to
// the caller's uid, so setuid they open the child's uid_map as root, and
// the kernel then asks for CAP_SYS_ADMIN too (only the namespace's owner
// has it there) — a capability no build container should hold. With a
// file capability they run as nonroot, the owner of the namespace
// rootlesskit makes, holding just what writing its maps needs.
func idMapsByCapability(t *tree) {
	for name, capability := range map[string]uint{"usr/bin/newuidmap": capSetUID, "usr/bin/newgidmap": capSetGID} {
		if e, ok := t.files[name]; ok && e.typ == tar.TypeReg {
			e.mode &^= 0o7000
			e.xattrs = map[string]string{"security.capability": string(fileCapability(capability))}
		}
	}
}

// Capability numbers (linux/capability.h).
const (
	capSetGID = 6
	capSetUID = 7
)

// fileCapability is a security.capability value (struct
// vfs_cap_data, revision 2) granting capability permitted and effective.
func fileCapability(capability uint) []byte {
	const revision2, effective = 0x02000000, 0x000001
	b := make([]byte, 20) // magic_etc, then permitted/inheritable for each 32-capability half
	binary.LittleEndian.PutUint32(b[0:], revision2|effective)
	binary.LittleEndian.PutUint32(b[4:], 1<<capability)
	return b
}
