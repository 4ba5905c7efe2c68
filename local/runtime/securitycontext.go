package runtime

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"

	"github.com/knitops/knit/local/view"
)

// identity is who knit dev's own process is: what a container runs as
// when its securityContext asks for nothing, since knit dev has no image
// whose USER would say otherwise.
type identity struct {
	uid, gid uint32
	groups   []uint32
	// confines: containers get views of their own (root on Linux with
	// mount namespaces), so a binary out of a user's reach can be bound
	// where it can reach it.
	confines bool
}

// ownIdentity is knit dev's process's identity.
func ownIdentity() identity {
	id := identity{uid: uint32(os.Geteuid()), gid: uint32(os.Getegid()), confines: view.Supported() == nil}
	groups, _ := os.Getgroups()
	for _, g := range groups {
		id.groups = append(id.groups, uint32(g))
	}
	return id
}

// root reports whether knit dev may run processes as anyone.
func (id identity) root() bool { return id.uid == 0 }

// runAs is the user a container's securityContext asks for, the
// container's fields over the pod's as the kubelet merges them
// (DetermineEffectiveSecurityContext); nil where neither sets one.
type runAs struct {
	uid, gid *int64
	nonRoot  bool
	groups   []uint32 // the pod's supplementalGroups, then its fsGroup
}

func effectiveRunAs(spec *corev1.PodSpec, c *corev1.Container) runAs {
	var r runAs
	if psc := spec.SecurityContext; psc != nil {
		r.uid, r.gid, r.nonRoot = psc.RunAsUser, psc.RunAsGroup, psc.RunAsNonRoot != nil && *psc.RunAsNonRoot
		for _, g := range psc.SupplementalGroups {
			r.groups = appendGroup(r.groups, uint32(g))
		}
		if psc.FSGroup != nil {
			r.groups = appendGroup(r.groups, uint32(*psc.FSGroup))
		}
	}
	if csc := c.SecurityContext; csc != nil {
		if csc.RunAsUser != nil {
			r.uid = csc.RunAsUser
		}
		if csc.RunAsGroup != nil {
			r.gid = csc.RunAsGroup
		}
		if csc.RunAsNonRoot != nil {
			r.nonRoot = *csc.RunAsNonRoot
		}
	}
	return r
}

func appendGroup(groups []uint32, g uint32) []uint32 {
	if slices.Contains(groups, g) {
		return groups
	}
	return append(groups, g)
}

// imageUser is the uid and gid of ko's default base images' nonroot user,
// which a ko:// or knit:// container runs as unless it asks otherwise.
const imageUser = 65532

// containerCredential is what container c's processes run as: nil to run
// as knit dev itself (nothing asked, or what is asked is what knit dev
// is), else the credential to fork with. A container asking for a user
// without a group gets the user's primary group from /etc/passwd as the
// container sees it (primaryGID), else 0, as containerd gives a uid its
// image's passwd does not name; the pod's supplementalGroups and fsGroup
// are its supplementary groups, as the kubelet adds them.
//
// Without runAsUser, a container of knit dev running as root (with the
// mount namespaces that confine it) runs as ko's nonroot user,
// 65532:65532 (imageUser), the USER of the image ko would build, never
// as root: root must be asked for (runAsUser: 0). Root without mount
// namespaces (a container without CAP_SYS_ADMIN) runs it as itself, as
// it could not bind the binary where that user reaches it.
//
// runAsNonRoot is checked as the kubelet checks it, with its messages:
// a runAsUser of 0 breaks it. When knit dev is not root and the container
// asks for anyone else, it fails rather than run as the wrong user.
func containerCredential(pod podIdentity, spec *corev1.PodSpec, c *corev1.Container, self identity, passwd func(uint32) (passwdUser, bool)) (*syscall.Credential, *failure) {
	want := effectiveRunAs(spec, c)
	podRef := fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
	if want.nonRoot {
		switch {
		case want.uid != nil && *want.uid == 0:
			return nil, &failure{Reason: ReasonCreateContainerConfigError, Message: fmt.Sprintf(
				"container's runAsUser breaks non-root policy (pod: %q, container: %s)", podRef, c.Name)}
		case want.uid == nil && self.root() && !self.confines:
			return nil, &failure{Reason: ReasonCreateContainerConfigError, Message: fmt.Sprintf(
				"container has runAsNonRoot and image will run as root (pod: %q, container: %s): knit dev runs as root without mount namespaces, so set runAsUser", podRef, c.Name)}
		}
	}
	if want.uid == nil && self.root() && self.confines {
		uid := int64(imageUser)
		want.uid = &uid
		if want.gid == nil {
			gid := int64(imageUser)
			want.gid = &gid
		}
	}
	if want.uid == nil && want.gid == nil && len(want.groups) == 0 {
		return nil, nil
	}
	cred := &syscall.Credential{Uid: self.uid, Gid: self.gid, Groups: want.groups}
	if want.uid != nil {
		cred.Uid = uint32(*want.uid)
		if cred.Uid != self.uid {
			cred.Gid = 0
			if u, ok := passwd(cred.Uid); ok {
				cred.Gid = u.gid
			}
		}
	}
	if want.gid != nil {
		cred.Gid = uint32(*want.gid)
	}
	if self.root() {
		return cred, nil
	}
	missing := slices.DeleteFunc(slices.Clone(want.groups), func(g uint32) bool { return g == self.gid || slices.Contains(self.groups, g) })
	if cred.Uid == self.uid && cred.Gid == self.gid && len(missing) == 0 {
		return nil, nil // already so; a process that is not root may not set its groups
	}
	return nil, &failure{Reason: ReasonSecurityContextUnsupported, Message: fmt.Sprintf(
		"container %s asks to run as %s (securityContext), which takes knit dev running as root: it runs as uid %d, gid %d",
		c.Name, describeCredential(cred), self.uid, self.gid)}
}

func describeCredential(cred *syscall.Credential) string {
	s := fmt.Sprintf("uid %d, gid %d", cred.Uid, cred.Gid)
	if len(cred.Groups) > 0 {
		s += fmt.Sprintf(", groups %v", cred.Groups)
	}
	return s
}

// passwdUser is uid's entry in a passwd file: its primary group and
// home directory.
type passwdUser struct {
	gid  uint32
	home string
}

// passwdLookup looks users up in the passwd file at path, read afresh
// each time (a container's start reads it once).
func passwdLookup(path string) func(uid uint32) (passwdUser, bool) {
	return func(uid uint32) (passwdUser, bool) {
		f, err := os.Open(path)
		if err != nil {
			return passwdUser{}, false
		}
		defer f.Close()
		s := bufio.NewScanner(f)
		for s.Scan() {
			fields := strings.Split(s.Text(), ":")
			if len(fields) < 6 || fields[2] != strconv.FormatUint(uint64(uid), 10) {
				continue
			}
			if gid, err := strconv.ParseUint(fields[3], 10, 32); err == nil {
				return passwdUser{gid: uint32(gid), home: fields[5]}, true
			}
		}
		return passwdUser{}, false
	}
}

// homeOf is HOME for a process of another user than knit dev's, as
// containerd sets it when the image's environment does not: the user's
// home in passwd, else "/".
func homeOf(uid uint32, lookup func(uint32) (passwdUser, bool)) string {
	if u, ok := lookup(uid); ok && u.home != "" {
		return u.home
	}
	return "/"
}

// fileOwner is what permission checks need of a file.
type fileOwner struct {
	mode     fs.FileMode
	uid, gid uint32
}

// unreachable says why cred cannot reach path — search permission on
// each directory above it, and want (of 0o1 execute, 0o2 write, 0o4 read)
// on path itself — as the kernel checks mode bits; "" when it can. Root
// reaches everything (a file to execute still needs an execute bit). ACLs
// are not read: a path they open is refused.
func unreachable(path string, cred *syscall.Credential, want fs.FileMode, stat func(string) (fileOwner, error)) string {
	if !filepath.IsAbs(path) {
		return fmt.Sprintf("%s is not an absolute path", path)
	}
	check := func(p string, bits fs.FileMode) string {
		fo, err := stat(p)
		if err != nil {
			return err.Error()
		}
		return fo.denies(cred, bits, p)
	}
	dir := "/"
	for _, e := range pathElems(path) {
		if why := check(dir, 0o1); why != "" {
			return why
		}
		dir = filepath.Join(dir, e)
	}
	return check(path, want)
}

// pathElems are the elements of an absolute path: none for "/" (as
// package view splits a mount path).
func pathElems(p string) []string {
	p = strings.Trim(filepath.Clean(p), "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// denies says why cred may not use p, whose owner and mode fo has, for
// bits (0o1 execute or search, 0o2 write, 0o4 read): "" when it may.
func (fo fileOwner) denies(cred *syscall.Credential, bits fs.FileMode, p string) string {
	if cred.Uid == 0 {
		if bits&0o1 != 0 && !fo.mode.IsDir() && fo.mode.Perm()&0o111 == 0 {
			return fmt.Sprintf("%s is %s: no one may execute it", p, fo.mode)
		}
		return ""
	}
	shift := 0 // others
	switch {
	case fo.uid == cred.Uid:
		shift = 6
	case fo.gid == cred.Gid || slices.Contains(cred.Groups, fo.gid):
		shift = 3
	}
	if fo.mode.Perm()>>shift&bits != bits {
		return fmt.Sprintf("%s is %s, owned by uid %d, gid %d", p, fo.mode, fo.uid, fo.gid)
	}
	return ""
}

// statOwner stats path, following links, for unreachable.
func statOwner(path string) (fileOwner, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileOwner{}, err
	}
	fo := fileOwner{mode: fi.Mode()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		fo.uid, fo.gid = st.Uid, st.Gid
	}
	return fo, nil
}
