package engine

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxPayloadKeyLength is the longest payload key: Azure's blob name limit, in characters.
const MaxPayloadKeyLength = 1024

// CheckPayloadKey enforces the blob naming rules a PayloadStore key must meet, on every
// PayloadStore so that a key the in-memory twin takes is one Azure takes: non-empty, at most
// MaxPayloadKeyLength characters of valid UTF-8, no control characters or backslashes (Azure
// turns '\' into '/'), not ending in '.' or '/', and no "." or ".." segment (a URL normaliser
// would move the blob to another path). Errors wrap ErrInvalidEntity.
func CheckPayloadKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty key", ErrInvalidEntity)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: key is not valid UTF-8", ErrInvalidEntity)
	case utf8.RuneCountInString(key) > MaxPayloadKeyLength:
		return fmt.Errorf("%w: key longer than %d characters", ErrInvalidEntity, MaxPayloadKeyLength)
	case strings.HasSuffix(key, ".") || strings.HasSuffix(key, "/"):
		return fmt.Errorf("%w: key ends with '.' or '/'", ErrInvalidEntity)
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return fmt.Errorf("%w: key contains %U", ErrInvalidEntity, r)
		}
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("%w: key has a %q segment", ErrInvalidEntity, seg)
		}
	}
	return nil
}
