package tablestore

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// EDM type annotations of the JSON payload format.
const (
	edmBinary   = "Edm.Binary"
	edmBoolean  = "Edm.Boolean"
	edmDateTime = "Edm.DateTime"
	edmDouble   = "Edm.Double"
	edmGuid     = "Edm.Guid"
	edmInt32    = "Edm.Int32"
	edmInt64    = "Edm.Int64"
	edmString   = "Edm.String"

	typeSuffix = "@odata.type"
	// dateTimeFormat writes the service's 100 ns precision.
	dateTimeFormat = "2006-01-02T15:04:05.0000000Z"
)

// Azure's Edm.DateTime range.
var (
	minDateTime = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)
	maxDateTime = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
)

// checkValues enforces the rules ValidateEntity leaves to the backend: strings (keys
// included) must be valid UTF-8 (JSON would silently replace bad bytes), and times must lie
// in Azure's DateTime range. Errors wrap ErrInvalidEntity.
func checkValues(e engine.Entity) error {
	if !utf8.ValidString(e.PartitionKey) || !utf8.ValidString(e.RowKey) {
		return fmt.Errorf("%w: key is not valid UTF-8", engine.ErrInvalidEntity)
	}
	for name, v := range e.Properties {
		switch x := v.(type) {
		case string:
			if !utf8.ValidString(x) {
				return fmt.Errorf("%w: property %s is not valid UTF-8", engine.ErrInvalidEntity, name)
			}
		case time.Time:
			if u := x.UTC(); u.Before(minDateTime) || !u.Before(maxDateTime) {
				return fmt.Errorf("%w: property %s: time outside 1601-9999", engine.ErrInvalidEntity, name)
			}
		}
	}
	return nil
}

// encodeEntity writes the JSON body of an entity with the type annotations the service
// needs to store each value with its exact type.
func encodeEntity(pk, rk string, props map[string]any) ([]byte, error) {
	m := make(map[string]any, 2+2*len(props))
	m["PartitionKey"] = pk
	m["RowKey"] = rk
	for name, v := range props {
		switch x := v.(type) {
		case string, bool, int32:
			m[name] = x
		case []byte:
			m[name] = base64.StdEncoding.EncodeToString(x)
			m[name+typeSuffix] = edmBinary
		case int64:
			m[name] = strconv.FormatInt(x, 10)
			m[name+typeSuffix] = edmInt64
		case float64:
			switch {
			case math.IsNaN(x):
				m[name] = "NaN"
			case math.IsInf(x, 1):
				m[name] = "Infinity"
			case math.IsInf(x, -1):
				m[name] = "-Infinity"
			default:
				m[name] = x
			}
			m[name+typeSuffix] = edmDouble
		case time.Time:
			m[name] = x.UTC().Format(dateTimeFormat)
			m[name+typeSuffix] = edmDateTime
		default:
			return nil, fmt.Errorf("%w: property %s: unsupported value type %T", engine.ErrInvalidEntity, name, v)
		}
	}
	return json.Marshal(m)
}

// decodeJSON parses a JSON object keeping number literals.
func decodeJSON(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	return d.Decode(v)
}

// decodeEntity converts one entity object of a service reply (minimal metadata).
func decodeEntity(m map[string]any, etag string) (engine.Entity, error) {
	e := engine.Entity{ETag: etag, Properties: make(map[string]any, len(m))}
	e.PartitionKey, _ = m["PartitionKey"].(string)
	e.RowKey, _ = m["RowKey"].(string)
	if e.ETag == "" {
		e.ETag, _ = m["odata.etag"].(string)
	}
	if ts, ok := m["Timestamp"].(string); ok {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			e.Timestamp = t.UTC()
		}
	}
	for name, raw := range m {
		switch {
		case name == "PartitionKey", name == "RowKey", name == "Timestamp",
			strings.HasPrefix(name, "odata."), strings.Contains(name, "@"):
			continue
		case raw == nil:
			continue
		}
		typ, _ := m[name+typeSuffix].(string)
		v, err := decodeValue(raw, typ)
		if err != nil {
			return engine.Entity{}, fmt.Errorf("decode entity %s/%s property %s: %w", e.PartitionKey, e.RowKey, name, err)
		}
		e.Properties[name] = v
	}
	return e, nil
}

func decodeValue(raw any, typ string) (any, error) {
	switch typ {
	case edmInt64:
		s, ok := raw.(string)
		if !ok {
			if n, isNum := raw.(json.Number); isNum {
				s = string(n)
			}
		}
		return strconv.ParseInt(s, 10, 64)
	case edmBinary:
		s, _ := raw.(string)
		return base64.StdEncoding.DecodeString(s)
	case edmDateTime:
		s, _ := raw.(string)
		t, err := time.Parse(time.RFC3339Nano, s)
		return t.UTC(), err
	case edmDouble:
		switch x := raw.(type) {
		case json.Number:
			return x.Float64()
		case string:
			switch x {
			case "NaN":
				return math.NaN(), nil
			case "Infinity", "INF":
				return math.Inf(1), nil
			case "-Infinity", "-INF":
				return math.Inf(-1), nil
			}
			return strconv.ParseFloat(x, 64)
		}
	case edmInt32:
		if n, ok := raw.(json.Number); ok {
			i, err := strconv.ParseInt(string(n), 10, 32)
			return int32(i), err
		}
	case edmGuid, edmString:
		if s, ok := raw.(string); ok {
			return s, nil
		}
	case edmBoolean:
		if b, ok := raw.(bool); ok {
			return b, nil
		}
	case "":
		switch x := raw.(type) {
		case string, bool:
			return x, nil
		case json.Number:
			// Without an annotation an integer literal is Edm.Int32 and a literal with a
			// fraction or exponent is Edm.Double.
			if !strings.ContainsAny(string(x), ".eE") {
				if i, err := strconv.ParseInt(string(x), 10, 32); err == nil {
					return int32(i), nil
				}
			}
			return x.Float64()
		}
	default:
		return nil, fmt.Errorf("unsupported type %s", typ)
	}
	return nil, fmt.Errorf("value of type %T does not match %s", raw, typ)
}
