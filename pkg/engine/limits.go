package engine

import (
	"fmt"
	"time"
	"unicode/utf8"
)

// Azure Table limits that every Store enforces (the service's documented limits; Azurite accepts more).
const (
	// maxBatchOps is the most operations in one Submit.
	maxBatchOps = 100
	// MaxBatchBytes is the most payload bytes of one Submit (estimated, see ValidateBatch).
	MaxBatchBytes = 4 << 20
	// maxEntityBytes is the largest entity (Azure's size formula).
	maxEntityBytes = 1 << 20
	// maxPropertyBytes is the largest string (UTF-16) or binary property value.
	maxPropertyBytes = 64 << 10
	// maxProperties is the most custom properties of an entity.
	maxProperties = 252
	// maxKeyBytes is the largest PartitionKey or RowKey, measured in UTF-16 bytes.
	maxKeyBytes = 1 << 10
	// MaxPageSize is the most entities of one query page.
	MaxPageSize = 1000
)

// batchOpOverhead estimates the per-operation bytes of a batch request beyond the entity
// (multipart headers, request line, JSON punctuation).
const batchOpOverhead = 512

// utf16Len returns the length of s in UTF-16 code units, the unit Azure measures strings in.
func utf16Len(s string) int {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf { // ASCII: one unit a byte
		i++
	}
	if i == len(s) {
		return i
	}
	n := i
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}

// ValidateKey checks a PartitionKey or RowKey: non-empty, at most 1 KiB in UTF-16, no
// '/', '\', '#', '?' or control characters. Errors wrap ErrInvalidEntity or ErrTooLarge.
func ValidateKey(name, key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty %s", ErrInvalidEntity, name)
	}
	if 2*len(key) > maxKeyBytes { // a UTF-16 length is at most the UTF-8 one
		if n := 2 * utf16Len(key); n > maxKeyBytes {
			return &LimitError{Limit: name, Size: n, Max: maxKeyBytes}
		}
	}
	for i := 0; i < len(key); i++ {
		if keyStop[key[i]] {
			if key[i] >= utf8.RuneSelf {
				return validateKeyRunes(name, key[i:])
			}
			return validateKeyRunes(name, key[i:i+1])
		}
	}
	return nil
}

// keyStop marks the bytes ValidateKey's ASCII scan stops at: those a key may not hold ('/',
// '\\', '#', '?', ASCII control characters) and the first bytes of multi-byte characters.
var keyStop = func() (t [256]bool) {
	for c := range t {
		t[c] = c < 0x20 || c == 0x7f || c == '/' || c == '\\' || c == '#' || c == '?' || c >= utf8.RuneSelf
	}
	return t
}()

// validateKeyRunes checks the characters of a key (or the rest of it) that ValidateKey's
// ASCII scan stopped at.
func validateKeyRunes(name, key string) error {
	for _, r := range key {
		switch {
		case r == '/' || r == '\\' || r == '#' || r == '?':
			return fmt.Errorf("%w: %s contains %q", ErrInvalidEntity, name, r)
		case r < 0x20 || (r >= 0x7f && r <= 0x9f):
			return fmt.Errorf("%w: %s contains control character %U", ErrInvalidEntity, name, r)
		}
	}
	return nil
}

// validPropertyName reports whether name is a C#-style identifier of at most 255 characters
// and not one of the system properties.
func validPropertyName(name string) bool {
	if name == "" || len(name) > 255 {
		return false
	}
	switch name {
	case "PartitionKey", "RowKey", "Timestamp", "ETag", "odata.etag", "odata.metadata":
		return false
	}
	if nameChars[name[0]] != nameStart {
		return false
	}
	for i := 1; i < len(name); i++ {
		if nameChars[name[i]] == 0 {
			return false
		}
	}
	return true
}

// Classes of the bytes of a property name: nameStart may begin it, nameDigit follow.
const (
	nameDigit = iota + 1
	nameStart
)

// nameChars classifies the bytes of a property name ('_', ASCII letters and digits).
var nameChars = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			t[c] = nameStart
		case c >= '0' && c <= '9':
			t[c] = nameDigit
		}
	}
	return t
}()

// ValidateEntity checks an entity against the Azure Table rules and returns its size by
// Azure's formula (4 + 2·len(keys) + per property 8 + 2·len(name) + value size). Errors
// wrap ErrInvalidEntity or ErrTooLarge (*LimitError).
func ValidateEntity(e Entity) (int, error) { return validateEntity(e, false) }

// validateEntity is ValidateEntity; with bound, a string counts its UTF-8 bytes, at least its
// UTF-16 units: a nil error then says the entity is valid and the size is an upper bound; an
// error may be wrong, and is checked again without bound.
func validateEntity(e Entity, bound bool) (int, error) {
	if err := ValidateKey("PartitionKey", e.PartitionKey); err != nil {
		return 0, err
	}
	if err := ValidateKey("RowKey", e.RowKey); err != nil {
		return 0, err
	}
	key := entityKey(e) // for errors only
	if len(e.Properties) > maxProperties {
		return 0, &LimitError{Limit: "property count", Key: key.String(), Size: len(e.Properties), Max: maxProperties}
	}
	strLen := utf16Len
	if bound {
		strLen = byteLen
	}
	size := 4 + 2*strLen(e.PartitionKey) + 4 + 2*strLen(e.RowKey) + 4
	for name, v := range e.Properties {
		if !validPropertyName(name) {
			return 0, fmt.Errorf("%w: entity %s: bad property name %q", ErrInvalidEntity, key, name)
		}
		vs, err := valueSize(v, strLen)
		if err != nil {
			return 0, fmt.Errorf("%w: entity %s: property %s: %v", ErrInvalidEntity, key, name, err)
		}
		if vs.limited && vs.bytes > maxPropertyBytes {
			return 0, &LimitError{Limit: "property value", Key: key.String(), Property: name, Size: vs.bytes, Max: maxPropertyBytes}
		}
		size += 8 + 2*len(name) + vs.bytes + vs.overhead
	}
	if size > maxEntityBytes {
		return 0, &LimitError{Limit: "entity", Key: key.String(), Size: size, Max: maxEntityBytes}
	}
	return size, nil
}

// entityKey names an entity in an error; it is built only when an error needs it.
type entityKey Entity

func (k entityKey) String() string { return k.PartitionKey + "/" + k.RowKey }

type valueSizes struct {
	bytes    int  // the value's bytes (UTF-16 for strings)
	overhead int  // length prefix
	limited  bool // subject to maxPropertyBytes
}

func byteLen(s string) int { return len(s) }

// valueSize returns the size of v, measuring a string's UTF-16 length with strLen.
func valueSize(v any, strLen func(string) int) (valueSizes, error) {
	switch x := v.(type) {
	case string:
		return valueSizes{bytes: 2 * strLen(x), overhead: 4, limited: true}, nil
	case []byte:
		return valueSizes{bytes: len(x), overhead: 4, limited: true}, nil
	case bool:
		return valueSizes{bytes: 1}, nil
	case int32:
		return valueSizes{bytes: 4}, nil
	case int64, float64, time.Time:
		return valueSizes{bytes: 8}, nil
	case nil:
		return valueSizes{}, fmt.Errorf("nil value")
	}
	return valueSizes{}, fmt.Errorf("unsupported value type %T", v)
}

// ValidateBatch checks a batch: 1–100 operations, one partition, each row once, valid
// entities, If-Match on Replace, Merge and Delete, and an estimated request size of at most
// MaxBatchBytes. Errors wrap ErrInvalidEntity or ErrTooLarge; per-op errors come as a
// *BatchError.
func ValidateBatch(ops []Op) error {
	if validateBatch(ops, true) == nil { // no string measured in UTF-16
		return nil
	}
	return validateBatch(ops, false)
}

// validateBatch is ValidateBatch, with validateEntity's bound.
func validateBatch(ops []Op, bound bool) error {
	if len(ops) == 0 {
		return fmt.Errorf("%w: empty batch", ErrInvalidEntity)
	}
	if len(ops) > maxBatchOps {
		return &LimitError{Limit: "batch operations", Size: len(ops), Max: maxBatchOps}
	}
	pk := ops[0].Entity.PartitionKey
	var seen map[string]struct{} // only for batches too long for a linear scan
	if len(ops) > smallBatch {
		seen = make(map[string]struct{}, len(ops))
	}
	total := 0
	for i, op := range ops {
		e := op.Entity
		if e.PartitionKey != pk {
			return &BatchError{Index: i, Err: fmt.Errorf("%w: batch spans partitions %q and %q", ErrInvalidEntity, pk, e.PartitionKey)}
		}
		if rowSeen(ops[:i], seen, e.RowKey) {
			return &BatchError{Index: i, Err: fmt.Errorf("%w: row %q appears twice in one batch", ErrInvalidEntity, e.RowKey)}
		}
		switch op.Kind {
		case OpInsert:
		case OpReplace, OpMerge, OpDelete:
			if op.IfMatch == "" {
				return &BatchError{Index: i, Err: fmt.Errorf("%w: %s without If-Match", ErrInvalidEntity, op.Kind)}
			}
		default:
			return &BatchError{Index: i, Err: fmt.Errorf("%w: unknown op kind %d", ErrInvalidEntity, int(op.Kind))}
		}
		if op.Kind == OpDelete {
			if err := ValidateKey("PartitionKey", e.PartitionKey); err != nil {
				return &BatchError{Index: i, Err: err}
			}
			if err := ValidateKey("RowKey", e.RowKey); err != nil {
				return &BatchError{Index: i, Err: err}
			}
			total += batchOpOverhead + 2*len(e.RowKey)
			continue
		}
		size, err := validateEntity(e, bound)
		if err != nil {
			return &BatchError{Index: i, Err: err}
		}
		total += batchOpOverhead + size
	}
	if total > MaxBatchBytes {
		return &LimitError{Limit: "batch", Size: total, Max: MaxBatchBytes}
	}
	return nil
}

// smallBatch is the longest batch whose duplicate rows ValidateBatch finds by a linear scan.
const smallBatch = 8

// rowSeen reports whether rk is the row of one of the ops before it (seen, when not nil,
// holds them) and records it in seen.
func rowSeen(before []Op, seen map[string]struct{}, rk string) bool {
	if seen == nil {
		for _, op := range before {
			if op.Entity.RowKey == rk {
				return true
			}
		}
		return false
	}
	if _, dup := seen[rk]; dup {
		return true
	}
	seen[rk] = struct{}{}
	return false
}

// ValidateQuery checks a query's limit and conditions. Errors wrap ErrInvalidQuery.
func ValidateQuery(q Query) error {
	if q.Limit < 0 || q.Limit > MaxPageSize {
		return fmt.Errorf("%w: limit %d outside 0..%d", ErrInvalidQuery, q.Limit, MaxPageSize)
	}
	for _, c := range q.Where {
		switch c.Op {
		case CondEq, CondNe, CondLt, CondLe, CondGt, CondGe:
		default:
			return fmt.Errorf("%w: unknown operator %q", ErrInvalidQuery, c.Op)
		}
		if c.Property != "PartitionKey" && c.Property != "RowKey" && !validPropertyName(c.Property) {
			return fmt.Errorf("%w: bad property %q", ErrInvalidQuery, c.Property)
		}
		if _, err := valueSize(c.Value, utf16Len); err != nil {
			return fmt.Errorf("%w: property %s: %v", ErrInvalidQuery, c.Property, err)
		}
	}
	return nil
}
