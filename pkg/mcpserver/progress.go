package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// Progress: a tools/call of a durable graph whose _meta carries a progressToken is answered as
// an event stream (the SDK's text/event-stream response), and while the call waits for its
// run, every row of the run's feed and every record of its live channel (a step's chunks and
// emitted events, as it writes them) is sent first as a notifications/progress of that token:
// progress counts them from 1, message says what happened. Under the Functions host without
// HTTP proxying the host buffers the stream, so they arrive together with the result.

// maxProgressMessageBytes bounds the message of one progress notification.
const maxProgressMessageBytes = 1024

// asksProgress reports whether body is a tools/call request with a progress token.
func asksProgress(body []byte) bool {
	var req struct {
		Method string `json:"method"`
		Params struct {
			Meta struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) != nil || req.Method != "tools/call" {
		return false
	}
	t := req.Params.Meta.ProgressToken
	return len(t) > 0 && string(t) != "null"
}

// progress sends the notifications of one call; nil when the call has no token.
type progress struct {
	session *mcp.ServerSession
	token   any
	n       float64
}

func newProgress(req *mcp.CallToolRequest) *progress {
	tok := req.Params.GetProgressToken()
	if tok == nil || req.Session == nil {
		return nil
	}
	return &progress{session: req.Session, token: tok}
}

// page sends one notification per feed row and live record of page. A notification that
// cannot be sent (the client went away) ends nothing: the call answers as it would.
func (p *progress) page(ctx context.Context, page engine.FeedPage) {
	if p == nil {
		return
	}
	for _, ev := range page.Items {
		p.send(ctx, describeRow(ev))
	}
	for _, rec := range page.Live {
		if msg := describeLive(rec); msg != "" {
			p.send(ctx, msg)
		}
	}
}

func (p *progress) send(ctx context.Context, msg string) {
	p.n++
	_ = p.session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: p.n, Message: bounded(msg)})
}

// describeRow says what a history row records.
func describeRow(ev engine.HistoryEvent) string {
	switch {
	case ev.Node != "" && ev.Type == engine.HistoryEventReceived:
		return fmt.Sprintf("%s %s at %s", ev.Type, ev.Name, ev.Node)
	case ev.Node != "":
		return ev.Type + " " + ev.Node
	}
	return ev.Type
}

// describeLive says what a live record carries: a chunk's or an emitted event's name and
// data (a string as its text), a commit or a retract of a step's chunks.
func describeLive(rec engine.LiveRecord) string {
	switch rec.Kind {
	case engine.LiveChunk, engine.LiveCustom:
		var text string
		var piece struct {
			Content *string `json:"content"`
		}
		switch {
		case json.Unmarshal(rec.Data, &text) == nil:
		case json.Unmarshal(rec.Data, &piece) == nil && piece.Content != nil:
			text = *piece.Content // a message chunk (durable.MessageChunk): its text
		default:
			text = string(rec.Data)
		}
		if rec.Name != "" {
			return rec.Name + ": " + text
		}
		return text
	case engine.LiveRetract:
		return "retracted the chunks of a failed attempt of " + rec.Node
	}
	return "" // commit records: the feed's row says it
}

// bounded cuts msg to maxProgressMessageBytes at a rune boundary.
func bounded(msg string) string {
	if len(msg) <= maxProgressMessageBytes {
		return msg
	}
	cut := maxProgressMessageBytes
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return strings.TrimSpace(msg[:cut]) + "…"
}
