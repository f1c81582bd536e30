// Package weatheragent is the front page's agent listing, compiled and tested: an agent with
// one tool, as a durable graph.
package weatheragent

import (
	"context"

	"github.com/funcgraph/funcgraph/pkg/agent"
	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/model"
	"github.com/funcgraph/funcgraph/pkg/tool"
)

// WeatherInput is the tool's input; the model sees the JSON Schema derived from it.
type WeatherInput struct {
	City string `json:"city" jsonschema:"description=The city, e.g. Oslo"`
}

var weather = tool.Must(tool.New("get_weather", "The current weather in a city.",
	func(ctx context.Context, in WeatherInput) (string, error) {
		return "18°C and sunny in " + in.City, nil
	}))

// New builds the agent as a durable graph on m (model/openai, model/anthropic, a Script).
func New(m model.Model) (durable.GraphRegistration[agent.State], error) {
	return agent.New(agent.Config{Name: "weather", Model: m, Tools: []*tool.Tool{weather},
		SystemPrompt: "You answer questions about the weather. Use get_weather."})
}
