package checkpoint

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Limits every Saver enforces, so an app that works on Memory works on Azure.
const (
	// MaxNameLength is Azure's blob name limit in characters. CheckNames keeps the names of
	// a checkpoint's parts within it.
	MaxNameLength = 1024
	// MaxValueBytes caps one value, metadata object or checkpoint (64 MiB): far below
	// Azure's block blob limit, it bounds what one read holds in memory.
	MaxValueBytes = 64 << 20
	// MaxMetadataBytes is Azure's limit on a blob's metadata (8 KiB, names and values),
	// which carries a write's channel and task path.
	MaxMetadataBytes = 8 << 10
	// nameOverhead is the fixed text of the longest name of the layout:
	// threads/<t>/ns/<n>/checkpoints/<c>/writes/<task>/<idx>.bin with idx at most 20 digits.
	nameOverhead = len("threads//ns//checkpoints//writes//.bin") + 20
)

// Escape percent-encodes every byte of s except ASCII letters, digits and "_.-~", so no id
// can add a path segment, query or fragment to a blob name; and a whole segment "." or ".."
// becomes "%2E" or "%2E%2E", so no id can become a dot segment that a URL normaliser would
// collapse into another path. Distinct inputs give distinct outputs, and url.PathUnescape
// reverses it. The blob checkpointer's names and the Blob lease lock's marker names use it.
func Escape(s string) string {
	switch s {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-' || c == '~' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// escapedLength is len(Escape(s)), without building it.
func escapedLength(s string) int {
	switch s {
	case ".":
		return len("%2E")
	case "..":
		return len("%2E%2E")
	}
	n := len(s)
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-' || c == '~') {
			n += 2 // %XX
		}
	}
	return n
}

// CheckNames refuses (ErrInvalidArgument) empty or non-UTF-8 required parts and parts whose
// names would exceed MaxNameLength. The namespace may be empty; every other part must not.
func CheckNames(threadID, ns string, others ...string) error {
	if threadID == "" {
		return fmt.Errorf("%w: empty thread id", ErrInvalidArgument)
	}
	n := nameOverhead
	for i := range 2 + len(others) {
		p := threadID
		switch {
		case i == 1:
			p = ns
		case i >= 2:
			p = others[i-2]
		}
		if !utf8.ValidString(p) {
			return fmt.Errorf("%w: name part %d is not valid UTF-8", ErrInvalidArgument, i)
		}
		if i >= 2 && p == "" {
			return fmt.Errorf("%w: empty name part %d", ErrInvalidArgument, i)
		}
		n += escapedLength(p)
	}
	if n > MaxNameLength {
		return fmt.Errorf("%w: names would be %d characters (max %d)", ErrInvalidArgument, n, MaxNameLength)
	}
	return nil
}

// isJSONObject reports whether encoding/json unmarshals b into a non-nil
// map[string]json.RawMessage: b is valid JSON (invalid UTF-8 in strings and repeated keys
// allowed, as there) and an object.
func isJSONObject(b []byte) bool {
	t := bytes.TrimLeft(b, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(b)
}

// CheckPut validates the arguments of Put: names, value sizes, a metadata object, and values
// only for channels cp versions.
func CheckPut(threadID, ns string, cp Checkpoint, values map[string]Value) error {
	if err := CheckNames(threadID, ns, cp.ID); err != nil {
		return err
	}
	if cp.ParentID != "" && !utf8.ValidString(cp.ParentID) {
		return fmt.Errorf("%w: parent id is not valid UTF-8", ErrInvalidArgument)
	}
	if len(cp.Metadata) > 0 && !isJSONObject(cp.Metadata) {
		return fmt.Errorf("%w: metadata must be a JSON object", ErrInvalidArgument)
	}
	if len(cp.Metadata) > MaxValueBytes {
		return fmt.Errorf("%w: metadata of %d bytes (max %d)", ErrTooLarge, len(cp.Metadata), MaxValueBytes)
	}
	for ch, ver := range cp.ChannelVersions {
		if err := CheckNames(threadID, ns, cp.ID, ch, ver); err != nil {
			return fmt.Errorf("channel %q: %w", ch, err)
		}
	}
	for ch, v := range values {
		if _, ok := cp.ChannelVersions[ch]; !ok {
			return fmt.Errorf("%w: value for channel %q that the checkpoint does not version", ErrInvalidArgument, ch)
		}
		if err := checkValue(v); err != nil {
			return fmt.Errorf("channel %q: %w", ch, err)
		}
	}
	return nil
}

// CheckWrites validates the arguments of PutWrites.
func CheckWrites(ref Ref, writes []Write) error {
	if err := CheckNames(ref.ThreadID, ref.NS, ref.ID); err != nil {
		return err
	}
	for _, w := range writes {
		if err := CheckNames(ref.ThreadID, ref.NS, ref.ID, w.TaskID); err != nil {
			return fmt.Errorf("write of task %q: %w", w.TaskID, err)
		}
		meta := len("serde_type") + len(Escape(w.Value.SerdeType)) + len("channel") + len(Escape(w.Channel)) +
			len("task_id") + len(Escape(w.TaskID)) + len("task_path") + len(Escape(w.TaskPath))
		if meta > MaxMetadataBytes {
			return fmt.Errorf("%w: write metadata of %d bytes (max %d)", ErrInvalidArgument, meta, MaxMetadataBytes)
		}
		if err := checkValue(w.Value); err != nil {
			return fmt.Errorf("write of task %q: %w", w.TaskID, err)
		}
	}
	return nil
}

func checkValue(v Value) error {
	if v.SerdeType == "" {
		return fmt.Errorf("%w: empty serde type", ErrInvalidArgument)
	}
	if escapedLength(v.SerdeType) > 256 {
		return fmt.Errorf("%w: serde type too long", ErrInvalidArgument)
	}
	if len(v.Data) > MaxValueBytes {
		return fmt.Errorf("%w: %d bytes (max %d)", ErrTooLarge, len(v.Data), MaxValueBytes)
	}
	return nil
}

// NewID returns a new checkpoint id: a UUID version 7, whose text sorts in creation order
// (monotonic within the process).
func NewID() string { return uuid.Must(uuid.NewV7()).String() }

// NextVersion returns the channel version after prev ("" for a new channel):
// "<32-digit zero-padded counter>.<16-digit random fraction>". Versions of one channel sort
// in the order they were made.
func NextVersion(prev string) string {
	var n uint64
	if head, _, ok := strings.Cut(prev, "."); ok {
		n, _ = strconv.ParseUint(head, 10, 64)
	}
	r, err := rand.Int(rand.Reader, big.NewInt(1e16))
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("%032d.%016d", n+1, r.Int64())
}
