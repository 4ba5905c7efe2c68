package source

import (
	"bufio"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// writePack writes objs of st into a new pack and its index in the pack
// directory of the bare repository dir, and returns the pack's name. Each
// object is copied whole (no deltas) as it is read, and the index is made
// from what was written: go-git's pack writer would parse the pack again,
// holding its largest object in memory.
func writePack(dir string, st storer.EncodedObjectStorer, objs []plumbing.Hash) (plumbing.Hash, error) {
	packDir := filepath.Join(dir, "objects", "pack")
	pack, err := os.CreateTemp(packDir, "tmp_pack_")
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer os.Remove(pack.Name()) // renamed away on success
	idx, name, err := encodePack(pack, st, objs)
	if err == nil {
		err = pack.Chmod(0o444)
	}
	if cerr := pack.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	base := filepath.Join(packDir, "pack-"+name.String())
	if err := writeIndex(base+".idx", idx); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := os.Rename(pack.Name(), base+".pack"); err != nil {
		return plumbing.ZeroHash, errors.Join(err, os.Remove(base+".idx"))
	}
	return name, nil
}

// encodePack writes the pack of objs to w (version 2: a header, each
// object's type, size and zlib-compressed content, the SHA-1 of it all)
// and notes where each object starts, and the CRC-32 of its entry, for
// the index.
func encodePack(w io.Writer, st storer.EncodedObjectStorer, objs []plumbing.Hash) (*idxfile.Writer, plumbing.Hash, error) {
	sum := sha1.New()
	buf := bufio.NewWriterSize(io.MultiWriter(w, sum), 64<<10)
	out := &countingWriter{w: buf}
	idx := new(idxfile.Writer)
	_ = idx.OnHeader(uint32(len(objs)))
	header := []byte{'P', 'A', 'C', 'K', 0, 0, 0, 2, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(header[8:], uint32(len(objs)))
	if _, err := out.Write(header); err != nil {
		return nil, plumbing.ZeroHash, err
	}
	for _, h := range objs {
		offset := out.n
		crc, err := writeEntry(out, st, h)
		if err != nil {
			return nil, plumbing.ZeroHash, fmt.Errorf("pack object %s: %w", h, err)
		}
		idx.Add(h, uint64(offset), crc)
	}
	if err := buf.Flush(); err != nil {
		return nil, plumbing.ZeroHash, err
	}
	var name plumbing.Hash
	copy(name[:], sum.Sum(nil))
	if _, err := w.Write(name[:]); err != nil {
		return nil, plumbing.ZeroHash, err
	}
	_ = idx.OnFooter(name)
	return idx, name, nil
}

// writeEntry writes one object's pack entry and returns its CRC-32.
func writeEntry(w io.Writer, st storer.EncodedObjectStorer, h plumbing.Hash) (uint32, error) {
	o, err := st.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return 0, err
	}
	crc := crc32.NewIEEE()
	entry := io.MultiWriter(w, crc)
	if _, err := entry.Write(entryHeader(o.Type(), o.Size())); err != nil {
		return 0, err
	}
	r, err := o.Reader()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	zw := zlib.NewWriter(entry)
	n, err := io.Copy(zw, r)
	if err == nil && n != o.Size() {
		err = fmt.Errorf("read %d bytes of %d", n, o.Size())
	}
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	return crc.Sum32(), err
}

// entryHeader is a pack entry's type and size: the type and the low four
// bits of the size in the first byte, seven more bits in each next one.
func entryHeader(t plumbing.ObjectType, size int64) []byte {
	b := []byte{byte(t)<<4 | byte(size&0x0f)}
	for size >>= 4; size > 0; size >>= 7 {
		b[len(b)-1] |= 0x80
		b = append(b, byte(size&0x7f))
	}
	return b
}

func writeIndex(path string, idx *idxfile.Writer) error {
	mem, err := idx.Index()
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "tmp_idx_")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = idxfile.NewEncoder(f).Encode(mem)
	if err == nil {
		err = f.Chmod(0o444) // as git leaves packs: never written again
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// countingWriter counts the bytes written through it: the offset of the
// next pack entry.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
