package runsclient

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"
)

// ListOptions filter and page List. Zero fields do not filter.
type ListOptions struct {
	// GraphName keeps one graph's runs; GraphHash one version's.
	GraphName, GraphHash string
	// Status keeps the runs with this status.
	Status Status
	// CreatedAfter and CreatedBefore bound the runs' creation time.
	CreatedAfter, CreatedBefore time.Time
	// Keys keep the runs with these search-key values (key.<name>=<value>), every one.
	Keys map[string]string
	// Limit is the page size (1–1000; 0 means the app's default, 100).
	Limit int
	// ContinuationToken continues from a previous page.
	ContinuationToken string
}

// query is the listing's query string.
func (o ListOptions) query() url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("graph_name", o.GraphName)
	set("graph_hash", o.GraphHash)
	set("runtime_status", string(o.Status))
	if !o.CreatedAfter.IsZero() {
		q.Set("created_after", o.CreatedAfter.UTC().Format(time.RFC3339Nano))
	}
	if !o.CreatedBefore.IsZero() {
		q.Set("created_before", o.CreatedBefore.UTC().Format(time.RFC3339Nano))
	}
	names := make([]string, 0, len(o.Keys))
	for k := range o.Keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		q.Set("key."+k, o.Keys[k])
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	set("continuation_token", o.ContinuationToken)
	return q
}

// RunSummary is one run of a listing.
type RunSummary struct {
	InstanceID    string    `json:"instance_id"`
	RuntimeStatus Status    `json:"runtime_status"`
	GraphName     string    `json:"graph_name"`
	GraphVersion  string    `json:"graph_version"`
	GraphHash     string    `json:"graph_hash"`
	CreatedAt     time.Time `json:"created_at"`
	LastUpdatedAt time.Time `json:"last_updated_at"`
}

// RunPage is one page of a listing. A page may hold fewer runs than the limit, even none,
// and still have a token; the last page has none.
type RunPage struct {
	Runs []RunSummary
	// ContinuationToken continues the listing ("" on the last page).
	ContinuationToken string
}

// runPageBody is the wire form of RunPage (the token is null on the last page).
type runPageBody struct {
	Runs              []RunSummary `json:"runs"`
	ContinuationToken *string      `json:"continuation_token"`
}

// List reads one page of runs, newest first. Errors: ErrBadRequest for a filter the app
// refuses (the message names the parameter) or a token of another listing.
func (c *Client) List(ctx context.Context, opts ListOptions) (*RunPage, error) {
	var body runPageBody
	if _, err := c.do(ctx, &request{method: http.MethodGet, path: "/runs", query: opts.query(), resend: true}, http.StatusOK, &body); err != nil {
		return nil, err
	}
	p := &RunPage{Runs: body.Runs}
	if body.ContinuationToken != nil {
		p.ContinuationToken = *body.ContinuationToken
	}
	return p, nil
}

// ListPages iterates over the pages of a listing from opts (its token included) until the
// last page or the first error, which it yields and stops after.
func (c *Client) ListPages(ctx context.Context, opts ListOptions) iter.Seq2[*RunPage, error] {
	return func(yield func(*RunPage, error) bool) {
		for {
			p, err := c.List(ctx, opts)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(p, nil) || p.ContinuationToken == "" {
				return
			}
			opts.ContinuationToken = p.ContinuationToken
		}
	}
}

// ListAll iterates over every run of a listing, page after page (ListPages).
func (c *Client) ListAll(ctx context.Context, opts ListOptions) iter.Seq2[RunSummary, error] {
	return func(yield func(RunSummary, error) bool) {
		for p, err := range c.ListPages(ctx, opts) {
			if err != nil {
				yield(RunSummary{}, err)
				return
			}
			for _, r := range p.Runs {
				if !yield(r, nil) {
					return
				}
			}
		}
	}
}

// Event is one row of a run's history, or one item of its feed.
type Event struct {
	// Seq is the row's sequence number: it increases along the history (it may skip).
	Seq int64 `json:"seq"`
	// Type is the row's type: run_started, node_completed, wait_started, event_applied,
	// custom (an event a node emitted), run_completed, … (docs/http-runs.md).
	Type string `json:"type"`
	// Name is the step kind, or the event's name for event_received and custom.
	Name string `json:"name"`
	// Node is the node the row is about.
	Node      string          `json:"node"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// Decode decodes the row's data into v.
func (e *Event) Decode(v any) error { return json.Unmarshal(e.Data, v) }

// UnmarshalJSON reads a history row ("sequence") as well as a feed item ("seq"), and null
// names and nodes as "".
func (e *Event) UnmarshalJSON(b []byte) error {
	var w struct {
		Seq       *int64          `json:"seq"`
		Sequence  *int64          `json:"sequence"`
		Type      string          `json:"type"`
		Name      *string         `json:"name"`
		Node      *string         `json:"node"`
		Timestamp time.Time       `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Event{Type: w.Type, Timestamp: w.Timestamp, Data: w.Data}
	switch {
	case w.Seq != nil:
		e.Seq = *w.Seq
	case w.Sequence != nil:
		e.Seq = *w.Sequence
	}
	if w.Name != nil {
		e.Name = *w.Name
	}
	if w.Node != nil {
		e.Node = *w.Node
	}
	return nil
}

// HistoryOptions page History.
type HistoryOptions struct {
	// Limit is the page size (1–1000; 0 means the app's default, 100).
	Limit int
	// ContinuationToken continues from a previous page.
	ContinuationToken string
}

// HistoryPage is one page of a run's history, oldest first.
type HistoryPage struct {
	Events []Event
	// ContinuationToken continues the history ("" on the last page).
	ContinuationToken string
}

// History reads one page of a run's history, oldest first. Errors: ErrNotFound.
func (c *Client) History(ctx context.Context, instanceID string, opts HistoryOptions) (*HistoryPage, error) {
	q := url.Values{}
	if opts.Limit > 0 {
		q.Set("limit", strconv.Itoa(opts.Limit))
	}
	if opts.ContinuationToken != "" {
		q.Set("continuation_token", opts.ContinuationToken)
	}
	var body struct {
		Events            []Event `json:"events"`
		ContinuationToken *string `json:"continuation_token"`
	}
	if _, err := c.do(ctx, &request{method: http.MethodGet, path: "/runs/" + seg(instanceID) + "/history", query: q, resend: true}, http.StatusOK, &body); err != nil {
		return nil, err
	}
	p := &HistoryPage{Events: body.Events}
	if body.ContinuationToken != nil {
		p.ContinuationToken = *body.ContinuationToken
	}
	return p, nil
}

// HistoryAll iterates over a run's whole history, oldest first, page after page, until the
// last row or the first error, which it yields and stops after.
func (c *Client) HistoryAll(ctx context.Context, instanceID string, opts HistoryOptions) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for {
			p, err := c.History(ctx, instanceID, opts)
			if err != nil {
				yield(Event{}, err)
				return
			}
			for _, e := range p.Events {
				if !yield(e, nil) {
					return
				}
			}
			if p.ContinuationToken == "" {
				return
			}
			opts.ContinuationToken = p.ContinuationToken
		}
	}
}
