package tablestore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
)

// subResponse is one operation's reply inside a batch reply.
type subResponse struct {
	status int
	etag   string
	code   string // service error code of a failed op
	index  int    // op index named by a failed op's reply, -1 when unknown
}

// parseBatchReply reads the multipart/mixed reply of an entity group transaction: a batch
// part holding a changeset whose parts are HTTP responses, one per operation in op order
// on success, or the one failed operation's response on failure.
func parseBatchReply(contentType string, body []byte) ([]subResponse, error) {
	outer, err := boundaryOf(contentType, body)
	if err != nil {
		return nil, err
	}
	mr := multipart.NewReader(bytes.NewReader(body), outer)
	part, err := mr.NextPart()
	if err != nil {
		return nil, fmt.Errorf("read batch part: %w", err)
	}
	inner, err := io.ReadAll(part)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("read changeset: %w", err)
	}
	innerBoundary, err := boundaryOf(part.Header.Get("Content-Type"), inner)
	if err != nil {
		return nil, err
	}
	cr := multipart.NewReader(bytes.NewReader(inner), innerBoundary)
	var subs []subResponse
	for {
		p, err := cr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read changeset part %d: %w", len(subs), err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(p), nil)
		if err != nil {
			return nil, fmt.Errorf("read changeset response %d: %w", len(subs), err)
		}
		sub := subResponse{status: resp.StatusCode, etag: resp.Header.Get("ETag"), index: -1}
		if resp.StatusCode >= 400 {
			data, _ := io.ReadAll(resp.Body)
			sub.code, sub.index = errorOf(data)
			if sub.index < 0 {
				if id, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Content-ID"))); err == nil && id > 0 {
					sub.index = id - 1
				}
			}
		}
		_ = resp.Body.Close()
		subs = append(subs, sub)
	}
	return subs, nil
}

// boundaryOf returns the multipart boundary from a Content-Type header, or else from the
// first line of the body ("--<boundary>").
func boundaryOf(contentType string, body []byte) (string, error) {
	if _, params, err := mime.ParseMediaType(contentType); err == nil && params["boundary"] != "" {
		return params["boundary"], nil
	}
	line, _, _ := bytes.Cut(body, []byte("\n"))
	line = bytes.TrimRight(line, "\r")
	if !bytes.HasPrefix(line, []byte("--")) || len(line) < 3 {
		return "", errors.New("batch reply is not multipart")
	}
	return string(line[2:]), nil
}

// errorOf reads the code of an OData error body and the op index the service puts in front
// of its message ("1:The update condition …").
func errorOf(data []byte) (code string, index int) {
	var body struct {
		Err struct {
			Code    string `json:"code"`
			Message struct {
				Value string `json:"value"`
			} `json:"message"`
		} `json:"odata.error"`
	}
	if json.Unmarshal(data, &body) != nil {
		return "", -1
	}
	index = -1
	if head, _, ok := strings.Cut(body.Err.Message.Value, ":"); ok {
		if i, err := strconv.Atoi(head); err == nil && i >= 0 {
			index = i
		}
	}
	return body.Err.Code, index
}
