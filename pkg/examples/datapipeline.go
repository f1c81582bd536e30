package examples

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// PipelineState is the state model of the data_pipeline graph.
type PipelineState struct {
	// SourceURL is where the data comes from; required.
	SourceURL string `json:"source_url" durable:"required"`
	// RawRecords are the extracted records.
	RawRecords []map[string]any `json:"raw_records"`
	// TransformedRecords are the cleaned records.
	TransformedRecords []map[string]any `json:"transformed_records"`
	// LoadResult describes the load, null until the load node ran.
	LoadResult *string `json:"load_result"`
	// RecordCount is the number of extracted records.
	RecordCount int `json:"record_count"`
}

const pipelinePrefix = "examples.data_pipeline.graph."

// DataPipeline builds the data_pipeline graph: extract → transform → load (terminal).
func DataPipeline() (durable.GraphRegistration[PipelineState], error) {
	b := durable.NewManifestBuilder[PipelineState]("data_pipeline",
		durable.WithMetadata(map[string]any{"example": true, "profile": "etl"}))
	b.SetEntrypoint("extract")
	_ = b.AddStep("extract", pipelineExtract, durable.WithHandlerName(pipelinePrefix+"extract"), durable.WithNext("transform"))
	_ = b.AddStep("transform", pipelineTransform, durable.WithHandlerName(pipelinePrefix+"transform"), durable.WithNext("load"))
	_ = b.AddStep("load", pipelineLoad, durable.WithHandlerName(pipelinePrefix+"load"), durable.Terminal())
	return b.Build() // Build reports any AddStep error
}

// MustDataPipeline is DataPipeline for package initialisation; it panics on error.
func MustDataPipeline() durable.GraphRegistration[PipelineState] {
	return must(DataPipeline())
}

func pipelineExtract(_ context.Context, s PipelineState) (PipelineState, error) {
	s.RawRecords = []map[string]any{
		{"id": 1, "name": "  Alice  ", "score": "85"},
		{"id": 2, "name": "  Bob  ", "score": "92"},
		{"id": 3, "name": "  Carol  ", "score": "78"},
	}
	s.RecordCount = 3
	return s, nil
}

func pipelineTransform(_ context.Context, s PipelineState) (PipelineState, error) {
	out := make([]map[string]any, 0, len(s.RawRecords))
	for i, r := range s.RawRecords {
		name, _ := r["name"].(string)
		score, err := pyInt(r["score"])
		if err != nil {
			return s, fmt.Errorf("transform record %d: %w", i, err)
		}
		out = append(out, map[string]any{"id": r["id"], "name": strings.TrimSpace(name), "score": score})
	}
	s.TransformedRecords = out
	return s, nil
}

// pipelineLoad describes the load, quoting an excerpt of the source URL (a URL past
// maxQuoteBytes is cut, so the result does not copy a large input).
func pipelineLoad(_ context.Context, s PipelineState) (PipelineState, error) {
	result := fmt.Sprintf("Loaded %d records to %s/output", len(s.TransformedRecords), excerpt(s.SourceURL, maxQuoteBytes))
	s.LoadResult = &result
	return s, nil
}

// pyInt converts like Python's int(): integer strings (surrounding whitespace allowed) and
// numbers, truncating floats.
func pyInt(v any) (int64, error) {
	switch x := v.(type) {
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("invalid literal for int() with base 10: '%s'", x)
		}
		return n, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, fmt.Errorf("cannot convert float %v to integer", x)
		}
		return int64(x), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("int() argument must be a string or a number, not '%T'", v)
}

func must[S any](g durable.GraphRegistration[S], err error) durable.GraphRegistration[S] {
	if err != nil {
		panic(fmt.Sprintf("examples: build graph: %v", err))
	}
	return g
}
