package examples

import (
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// All builds the five example graphs for the example app, in the order data_pipeline,
// content_classifier, support_agent, research_agent, reply_writer.
func All() ([]durable.Graph, error) {
	pipeline, err := DataPipeline()
	if err != nil {
		return nil, fmt.Errorf("build data_pipeline: %w", err)
	}
	classifier, err := ContentClassifier()
	if err != nil {
		return nil, fmt.Errorf("build content_classifier: %w", err)
	}
	support, err := SupportAgent()
	if err != nil {
		return nil, fmt.Errorf("build support_agent: %w", err)
	}
	research, err := ResearchAgent()
	if err != nil {
		return nil, fmt.Errorf("build research_agent: %w", err)
	}
	writer, err := ReplyWriter()
	if err != nil {
		return nil, fmt.Errorf("build reply_writer: %w", err)
	}
	return []durable.Graph{pipeline, classifier, support, research, writer}, nil
}
