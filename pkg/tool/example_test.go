package tool_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/tool"
)

// WeatherInput is what the model passes the weather tool.
type WeatherInput struct {
	City string `json:"city" jsonschema:"description=The city to look up"`
	Unit string `json:"unit,omitempty" jsonschema:"enum=celsius,enum=fahrenheit"`
}

// A typed function is a tool: the model sees the schema derived from its input type, and a
// call's arguments arrive decoded.
func ExampleNew() {
	weather := tool.Must(tool.New("get_weather", "The current weather in a city.",
		func(ctx context.Context, in WeatherInput) (string, error) {
			return "18 degrees and sunny in " + in.City, nil
		}))
	fmt.Println(string(weather.Def().Parameters))
	out, err := weather.Call(context.Background(), message.ToolCall{ID: "call_1", Name: "get_weather", Args: json.RawMessage(`{"city":"Oslo"}`)})
	fmt.Println(out, err)
	// Output:
	// {"properties":{"city":{"type":"string","description":"The city to look up"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"additionalProperties":false,"type":"object","required":["city"]}
	// 18 degrees and sunny in Oslo <nil>
}
