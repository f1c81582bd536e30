package host

import (
	"errors"
	"unicode/utf8"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
)

// Limits of the thread id rule.
const maxThreadIDChars = 256

// Validation sentinels. Messages of errors wrapping them are the contract's public messages.
var (
	// ErrEmptyName reports an empty graph name.
	ErrEmptyName = errors.New("host: empty graph name")
	// ErrInvalidName reports a graph name outside `^[A-Za-z][A-Za-z0-9_-]{0,63}$`.
	ErrInvalidName = errors.New("host: invalid graph name")
	// ErrInvalidThreadID reports a thread id that breaks the thread id rule.
	ErrInvalidThreadID = apierror.NewKind(apierror.ErrBadRequest, "host: invalid thread id")
)

// ValidateGraphName checks the graph name rule: non-empty, a letter followed by up to 63
// letters, digits, underscores or hyphens (ASCII), with no trailing newline allowance. The
// error's message is the contract's; it wraps ErrEmptyName or ErrInvalidName.
func ValidateGraphName(name string) error {
	if name == "" {
		return apierror.New(ErrEmptyName, "Graph name must not be empty")
	}
	ok := len(name) <= 64 && isASCIILetter(name[0])
	for i := 1; ok && i < len(name); i++ {
		c := name[i]
		ok = isASCIILetter(c) || (c >= '0' && c <= '9') || c == '_' || c == '-'
	}
	if !ok {
		return apierror.Newf(ErrInvalidName, "Invalid graph name %s. Must start with a letter, contain only letters, digits, underscores or hyphens, and be 1\u201364 characters.", pyRepr(name))
	}
	return nil
}

func isASCIILetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

// ValidateThreadID checks the thread id rule, in order: non-empty; at most 256 Unicode code
// points; only characters U+0020..U+007E. The error's message is the contract's; it wraps
// ErrInvalidThreadID.
func ValidateThreadID(id string) error {
	switch {
	case id == "":
		return apierror.New(ErrInvalidThreadID, "Thread ID must not be empty")
	case utf8.RuneCountInString(id) > maxThreadIDChars:
		return apierror.Newf(ErrInvalidThreadID, "Thread ID exceeds maximum length of %d characters", maxThreadIDChars)
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x20 || id[i] > 0x7e {
			return apierror.New(ErrInvalidThreadID, "Thread ID must contain only printable ASCII characters")
		}
	}
	return nil
}

// Limit violations found by checkLimits.
var (
	errTooDeep     = apierror.NewKind(apierror.ErrBadRequest, "host: input too deep")
	errTooManyNode = apierror.NewKind(apierror.ErrBadRequest, "host: input has too many nodes")
)

// checkLimits walks v depth-first in document order and returns the first violation: a value
// deeper than maxDepth (the top-level container is depth 1) or more than maxNodes member values
// and array items in total. Scalars always pass.
func checkLimits(t *jsonTree, v int32, maxDepth, maxNodes int) error {
	n := t.nodes[v].kind
	if n != kindObject && n != kindArray {
		return nil
	}
	count := 0
	return t.walk(v, 1, maxDepth, maxNodes, &count)
}

func (t *jsonTree) walk(v int32, depth, maxDepth, maxNodes int, count *int) error {
	if depth > maxDepth {
		return apierror.Newf(errTooDeep, "Input exceeds maximum nesting depth of %d", maxDepth)
	}
	nd := &t.nodes[v]
	if nd.kind != kindObject && nd.kind != kindArray {
		return nil
	}
	if nd.deep {
		// Not expanded by the parser; only reachable below maxDepth, which failed above.
		return apierror.Newf(errTooDeep, "Input exceeds maximum nesting depth of %d", maxDepth)
	}
	for c := nd.child; c >= 0; c = t.nodes[c].next {
		*count++
		if *count > maxNodes {
			return apierror.Newf(errTooManyNode, "Input exceeds maximum node count of %d", maxNodes)
		}
		child := c
		if nd.kind == kindObject {
			child = t.nodes[c].val
		}
		if err := t.walk(child, depth+1, maxDepth, maxNodes, count); err != nil {
			return err
		}
	}
	return nil
}
