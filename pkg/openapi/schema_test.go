package openapi_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/openapi"
)

type chatInput struct {
	Messages []chatMessage `json:"messages"`
	Temp     *float64      `json:"temperature,omitempty"`
	Tags     map[string]int
	Ignored  string    `json:"-"`
	When     time.Time `json:"when,omitempty"`
	Raw      json.RawMessage
	embedded
	Self *chatInput `json:"self,omitempty"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type embedded struct {
	Level int8 `json:"level"`
}

func TestSchemaOf_GoTypes_JSONSchema(t *testing.T) {
	t.Parallel()
	got, err := json.Marshal(openapi.SchemaOf(reflect.TypeFor[chatInput]()))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{` +
		`"messages":{"type":"array","items":{"type":"object","properties":{"role":{"type":"string"},"content":{"type":"string"}},"required":["role","content"]}},` +
		`"temperature":{"type":"number","format":"double","nullable":true},` +
		`"Tags":{"type":"object","additionalProperties":{"type":"integer","format":"int64"}},` +
		`"when":{"type":"string","format":"date-time"},` +
		`"Raw":{},` +
		`"level":{"type":"integer","format":"int32"},` +
		`"self":{"nullable":true}},` +
		`"required":["messages","Tags","Raw","level"]}`
	if string(got) != want {
		t.Fatalf("schema:\n%s\nwant:\n%s", got, want)
	}
}
