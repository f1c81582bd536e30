package host

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
)

// runRequest is a parsed invoke or stream request.
type runRequest struct {
	Request
	hasVersion bool
}

// requestKind says which request model is parsed.
type requestKind int

const (
	invokeRequestKind requestKind = iota
	streamRequestKind
)

// readBody reads the raw body, failing with the contract's message when it is longer than max
// bytes (equal passes). The length is checked before parsing: a declared Content-Length over the
// cap fails before anything is read, and a streamed (chunked) body is cut as soon as it passes
// the cap ("more than <max> bytes"). A body that cannot be read (bad chunked framing, cut short)
// is a 400 with a clear message; one that does not arrive in time is a 408.
func readBody(r *http.Request, maxBytes int64, buf []byte) ([]byte, error) {
	body, err := funchost.ReadRequestBodyInto(r, maxBytes, buf)
	if err == nil {
		return body, nil
	}
	var be *funchost.BodyError
	if !errors.As(err, &be) {
		return nil, fmt.Errorf("%w: read body: %v", apierror.ErrBadRequest, err)
	}
	return nil, apierror.Unread(be.Message(), errors.Is(be, funchost.ErrBodyTimeout))
}

// parseRunRequest applies checks 2–7 of the invoke contract to body: strict JSON (400), the
// request model (422), depth and node limits of input then config (400), and the configurable
// and thread id checks (400).
func parseRunRequest(body []byte, kind requestKind, lim limits) (*runRequest, error) {
	req := &runRequest{}
	if err := parseRunRequestInto(req, body, kind, lim); err != nil {
		return nil, err
	}
	return req, nil
}

// parseRunRequestInto is parseRunRequest into req, a zero runRequest.
func parseRunRequestInto(req *runRequest, body []byte, kind requestKind, lim limits) error {
	tree := treePool.Get().(*jsonTree)
	defer putTree(tree)
	if tree.parse(body, lim.maxDepth+2) != nil {
		return apierror.New(apierror.ErrBadRequest, "Invalid JSON body")
	}
	root := tree.root
	if tree.kind(root) != kindObject {
		return apierror.Invalid("body", "Input should be a valid dictionary")
	}
	input := tree.member(root, "input")
	switch {
	case input < 0:
		return apierror.Invalid("input", "Field required")
	case tree.kind(input) != kindObject:
		return apierror.Invalid("input", "Input should be a valid dictionary")
	}
	config := tree.member(root, "config")
	if config >= 0 && tree.kind(config) != kindObject && tree.kind(config) != kindNull {
		return apierror.Invalid("config", "Input should be a valid dictionary or null")
	}
	if v := tree.member(root, "version"); v >= 0 {
		switch tree.kind(v) {
		case kindNull:
		case kindString:
			s := tree.str(v)
			req.Version, req.hasVersion = &s, true
		default:
			return apierror.Invalid("version", "Input should be a valid string or null")
		}
	}
	if kind == streamRequestKind {
		req.StreamMode = "values"
		if v := tree.member(root, "stream_mode"); v >= 0 {
			if tree.kind(v) != kindString {
				return apierror.Invalid("stream_mode", "Input should be a valid string")
			}
			req.StreamMode = tree.str(v)
		}
	}
	if err := checkLimits(tree, input, lim.maxDepth, lim.maxNodes); err != nil {
		return err
	}
	req.Input = tree.raw(input)
	if config >= 0 && tree.kind(config) == kindObject {
		if !tree.isEmptyContainer(config) {
			if err := checkLimits(tree, config, lim.maxDepth, lim.maxNodes); err != nil {
				return err
			}
		}
		req.Config.Raw = tree.raw(config)
		if err := parseConfigurable(tree, config, &req.Config); err != nil {
			return err
		}
	}
	return nil
}

// parseConfigurable applies checks 5–7: configurable must be an object, its thread_id a string
// (or null) that passes the thread id rule.
func parseConfigurable(tree *jsonTree, config int32, out *Config) error {
	c := tree.member(config, "configurable")
	if c < 0 {
		return nil
	}
	if tree.kind(c) != kindObject {
		return apierror.New(errInvalidConfig, "config.configurable must be an object")
	}
	tid := tree.member(c, "thread_id")
	if tid < 0 || tree.kind(tid) == kindNull {
		return nil
	}
	if tree.kind(tid) != kindString {
		return apierror.New(errInvalidConfig, "config.configurable.thread_id must be a string")
	}
	s := tree.str(tid)
	if err := ValidateThreadID(s); err != nil {
		return apierror.New(errInvalidConfig, err.Error())
	}
	out.ThreadID = s
	return nil
}
