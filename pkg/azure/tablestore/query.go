package tablestore

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// Query implements engine.Store: one request, one page. A query without a PartitionKey
// scans the table (see the package doc).
func (s *Store) Query(ctx context.Context, q engine.Query) (engine.Page, error) {
	if err := engine.ValidateQuery(q); err != nil {
		return engine.Page{}, err
	}
	filter, never, err := buildFilter(q)
	if err != nil {
		return engine.Page{}, err
	}
	if never {
		return engine.Page{}, nil
	}
	top := int32(q.Limit)
	if top == 0 {
		top = engine.MaxPageSize
	}
	opts := &aztables.ListEntitiesOptions{Top: &top}
	if filter != "" {
		opts.Filter = &filter
	}
	if q.Continuation != "" {
		npk, nrk, err := decodeToken(q.Continuation)
		if err != nil {
			return engine.Page{}, err
		}
		opts.NextPartitionKey, opts.NextRowKey = &npk, &nrk
	}
	var raw *http.Response
	page, err := s.client.NewListEntitiesPager(opts).NextPage(policy.WithCaptureResponse(ctx, &raw))
	if err != nil {
		err = classify(err)
		var se *serviceError
		if errors.As(err, &se) && se.Status == http.StatusBadRequest {
			se.Sentinel = engine.ErrInvalidQuery
		}
		return engine.Page{}, fmt.Errorf("query: %w", err)
	}
	body, err := runtime.Payload(raw)
	if err != nil {
		return engine.Page{}, fmt.Errorf("query: read reply: %w", err)
	}
	var reply struct {
		Value []map[string]any `json:"value"`
	}
	if err := decodeJSON(body, &reply); err != nil {
		return engine.Page{}, fmt.Errorf("query: decode reply: %w", err)
	}
	out := engine.Page{Entities: make([]engine.Entity, 0, len(reply.Value))}
	for _, m := range reply.Value {
		e, err := decodeEntity(m, "")
		if err != nil {
			return engine.Page{}, fmt.Errorf("query: %w", err)
		}
		out.Entities = append(out.Entities, e)
	}
	if deref(page.NextPartitionKey) != "" || deref(page.NextRowKey) != "" {
		out.Continuation = encodeToken(deref(page.NextPartitionKey), deref(page.NextRowKey))
	}
	return out, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Tokens are base64url("<next partition key>\x00<next row key>"); the service's own
// continuation values never contain NUL.
func encodeToken(npk, nrk string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(npk + "\x00" + nrk))
}

func decodeToken(tok string) (npk, nrk string, err error) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return "", "", fmt.Errorf("%w: bad continuation token", engine.ErrInvalidQuery)
	}
	npk, nrk, ok := strings.Cut(string(raw), "\x00")
	if !ok || npk == "" {
		return "", "", fmt.Errorf("%w: bad continuation token", engine.ErrInvalidQuery)
	}
	return npk, nrk, nil
}

// buildFilter writes q as an OData $filter. never reports a condition that no entity can
// satisfy (a key compared with a non-string), so the query need not be sent.
func buildFilter(q engine.Query) (filter string, never bool, err error) {
	var parts []string
	if q.PartitionKey != "" {
		parts = append(parts, "PartitionKey eq "+stringLiteral(q.PartitionKey))
	}
	if q.RowKeyFrom != "" {
		parts = append(parts, "RowKey ge "+stringLiteral(q.RowKeyFrom))
	}
	if q.RowKeyTo != "" {
		parts = append(parts, "RowKey lt "+stringLiteral(q.RowKeyTo))
	}
	for _, c := range q.Where {
		expr, ok, err := condition(c)
		if err != nil {
			return "", false, err
		}
		if !ok {
			return "", true, nil
		}
		parts = append(parts, expr)
	}
	return strings.Join(parts, " and "), false, nil
}

// condition writes one condition. Integers compare only with properties of the same
// integer type (an int64 value with Edm.Int64, an int32 value with Edm.Int32), as in Azure;
// Azurite fails with 500 when an Int64 literal meets an Int32 property. "ne" on numbers is
// written "lt or gt" so that a property of another type or a missing one never matches
// (Azurite answers true for "ne" across types).
func condition(c engine.Cond) (string, bool, error) {
	op := string(c.Op)
	if c.Property == "PartitionKey" || c.Property == "RowKey" {
		s, ok := c.Value.(string)
		if !ok {
			return "", false, nil
		}
		return c.Property + " " + op + " " + stringLiteral(s), true, nil
	}
	p := c.Property
	switch v := c.Value.(type) {
	case string:
		return p + " " + op + " " + stringLiteral(v), true, nil
	case bool:
		return p + " " + op + " " + strconv.FormatBool(v), true, nil
	case int32:
		return numberCondition(p, c.Op, strconv.FormatInt(int64(v), 10)), true, nil
	case int64:
		return numberCondition(p, c.Op, strconv.FormatInt(v, 10)+"L"), true, nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "", false, fmt.Errorf("%w: property %s: NaN or infinity in a condition", engine.ErrInvalidQuery, p)
		}
		lit := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(lit, ".eE") {
			lit += ".0"
		}
		return p + " " + op + " " + lit, true, nil
	case time.Time:
		return p + " " + op + " datetime'" + v.UTC().Format(dateTimeFormat) + "'", true, nil
	case []byte:
		return p + " " + op + " X'" + hex.EncodeToString(v) + "'", true, nil
	}
	return "", false, fmt.Errorf("%w: property %s: unsupported value type %T", engine.ErrInvalidQuery, p, c.Value)
}

func numberCondition(p string, op engine.CondOp, lit string) string {
	if op == engine.CondNe {
		return "(" + p + " lt " + lit + " or " + p + " gt " + lit + ")"
	}
	return p + " " + string(op) + " " + lit
}

func stringLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
