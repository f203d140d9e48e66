package inspect

import (
	"encoding/binary"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// NoDataAllowance is how many bytes carrying no data (skippable zstd
// frames, and what follows an archive's tar stream) any archive may hold,
// beyond max_inflation times the bytes that do carry data. zarf writes
// none; a tar written with a large blocking factor, or a zstd stream with
// a seek table, holds kilobytes.
const NoDataAllowance = 16 << 20

// storedBytes is what the regular file f (of stat fi) stores on disk: its
// size, or, when it is sparse, the blocks its file system allocated to it,
// so that reading its holes, bytes that are nowhere, counts against
// max_inflation as decompressing does. Fewer blocks than the size alone do
// not make a file sparse: a compressing file system (btrfs, ZFS) stores
// files in fewer, and some FUSE file systems report none; so a file is
// taken as sparse only when lseek(2) also finds a hole before its end.
func storedBytes(f *os.File, fi os.FileInfo) int64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	size := fi.Size()
	if !ok || st.Blocks*512 >= size {
		return size
	}
	conn, err := f.SyscallConn()
	if err != nil {
		return size
	}
	hole := size
	if conn.Control(func(fd uintptr) {
		// pread(2) keeps no offset, but the stream reads from the
		// file's: seek back to its start.
		if h, err := unix.Seek(int(fd), 0, unix.SEEK_HOLE); err == nil {
			hole = h
		}
		_, _ = unix.Seek(int(fd), 0, io.SeekStart)
	}) != nil || hole >= size {
		return size
	}
	return st.Blocks * 512
}

// frames follows the zstd frames of a stream as its decoder reads them,
// to count the bytes of skippable frames (magic 0x184D2A50 to 0x184D2A5F),
// which the decoder skips without a word: they carry no data, yet every
// byte of them is read and hashed. It reads only the frames' structure
// (frame headers, block headers, checksums), never their contents; where
// the stream stops being zstd it stops counting, and the decoder fails.
type frames struct {
	r io.Reader
	// skipped counts the bytes of skippable frames, headers included.
	skipped int64
	// check is called after every read with the skipped bytes so far;
	// its error ends the stream and is kept in err (the decoder reports
	// a failed skip as an unexpected EOF).
	check func(skipped int64) error
	err   error

	state frameState
	need  int64 // bytes left of the current part
	hdr   [8]byte
	have  int // bytes of hdr collected
	fhd   byte
}

type frameState int

const (
	atMagic      frameState = iota // collecting a frame's 4-byte magic
	atSkipSize                     // collecting a skippable frame's 4-byte size
	inSkip                         // in a skippable frame's payload
	atDescriptor                   // collecting a frame header's descriptor byte
	inHeader                       // in the rest of a frame header
	atBlock                        // collecting a 3-byte block header
	inBlock                        // in a block's body (need bytes)
	inLastBlock                    // in the last block's body
	inChecksum                     // in a frame's content checksum
	opaque                         // not zstd: no longer followed
)

// fieldSize is the size of each fixed-size field.
var fieldSize = [...]int{atMagic: 4, atSkipSize: 4, atDescriptor: 1, atBlock: 3}

func (f *frames) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.r.Read(p)
	f.follow(p[:n])
	if cerr := f.check(f.skipped); cerr != nil {
		f.err = cerr
		return n, cerr
	}
	return n, err
}

// follow advances the frame structure over b.
func (f *frames) follow(b []byte) {
	for len(b) > 0 && f.state != opaque {
		switch f.state {
		case inSkip, inHeader, inBlock, inLastBlock, inChecksum:
			k := min(int64(len(b)), f.need)
			if f.state == inSkip {
				f.skipped += k
			}
			b, f.need = b[k:], f.need-k
			if f.need == 0 {
				f.next()
			}
		default: // a fixed-size field, collected into hdr
			want := fieldSize[f.state]
			k := copy(f.hdr[f.have:want], b)
			b, f.have = b[k:], f.have+k
			if f.have == want {
				f.have = 0
				f.field()
			}
		}
	}
}

// field acts on a fixed-size field collected into hdr.
func (f *frames) field() {
	switch f.state {
	case atMagic:
		switch m := binary.LittleEndian.Uint32(f.hdr[:4]); {
		case m == 0xFD2FB528:
			f.state = atDescriptor
		case m&0xFFFFFFF0 == 0x184D2A50:
			f.skipped += 4
			f.state = atSkipSize
		default:
			f.state = opaque
		}
	case atSkipSize:
		f.skipped += 4
		f.need = int64(binary.LittleEndian.Uint32(f.hdr[:4]))
		f.state = inSkip
		if f.need == 0 {
			f.state = atMagic
		}
	case atDescriptor:
		f.fhd = f.hdr[0]
		single := f.fhd&(1<<5) != 0
		f.need = int64([4]int{0, 1, 2, 4}[f.fhd&3]) + int64([4]int{0, 2, 4, 8}[f.fhd>>6])
		if !single {
			f.need++ // the window descriptor
		} else if f.fhd>>6 == 0 {
			f.need++ // a one-byte content size
		}
		f.state = inHeader
		if f.need == 0 {
			f.state = atBlock
		}
	case atBlock:
		h := uint32(f.hdr[0]) | uint32(f.hdr[1])<<8 | uint32(f.hdr[2])<<16
		last, kind, size := h&1 == 1, (h>>1)&3, int64(h>>3)
		switch kind {
		case 0, 2: // raw, compressed
			f.need = size
		case 1: // RLE: one byte, repeated
			f.need = 1
		default:
			f.state = opaque
			return
		}
		f.state = inBlock
		if last {
			f.state = inLastBlock
		}
		if f.need == 0 {
			f.next()
		}
	}
}

// next moves past a part of known size that has been read.
func (f *frames) next() {
	switch f.state {
	case inSkip, inChecksum:
		f.state = atMagic
	case inHeader, inBlock:
		f.state = atBlock
	case inLastBlock:
		f.state = atMagic
		if f.fhd&(1<<2) != 0 {
			f.state, f.need = inChecksum, 4
		}
	}
}
