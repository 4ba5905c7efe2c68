package forward

import "sync"

// BufferSize is the size of the buffers BufferPool lends.
const BufferSize = 32 << 10

var buffers sync.Pool

// BufferPool is an httputil.BufferPool of BufferSize copy buffers shared
// by every proxy in the process. It stores array pointers, so Put does not
// allocate.
type BufferPool struct{}

// Get lends a buffer.
func (BufferPool) Get() []byte {
	if p, ok := buffers.Get().(*[BufferSize]byte); ok {
		return p[:]
	}
	return make([]byte, BufferSize)
}

// Put takes a buffer back; one of another size is left to the GC.
func (BufferPool) Put(b []byte) {
	if len(b) == BufferSize {
		buffers.Put((*[BufferSize]byte)(b))
	}
}
