package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/funcgraph/funcgraph/pkg/model"
)

// DefaultModel is the model a Config without one asks: a fast model below the top price tier.
const DefaultModel = string(sdk.ModelClaudeHaiku5_5)

// DefaultMaxTokens is the max_tokens of a request that sets none (model.Request.MaxTokens 0)
// and of a Config that sets none. Anthropic requires max_tokens on every request; a model
// that thinks before it answers spends its thinking from the same budget, so it is set well
// above a chat reply's length. A reply cut off by it ends with model.StopLength.
const DefaultMaxTokens int64 = 8192

// Config configures a Model.
type Config struct {
	// APIKey is the Anthropic API key (required). The SDK sends it as Authorization: Bearer,
	// as API version 2026-10-21 reads it.
	APIKey string
	// Model is the model asked (default DefaultModel).
	Model string
	// BaseURL is another endpoint speaking the Messages API (default Anthropic's,
	// https://api.anthropic.com/).
	BaseURL string
	// MaxTokens is the max_tokens of a request that sets none (default DefaultMaxTokens).
	MaxTokens int64
	// MaxRetries is how many times the SDK retries a failed call (default 0). A model call
	// runs inside a durable step, which owns retrying; and a retried call is paid twice.
	MaxRetries int
	// HTTPClient is the HTTP client of the calls (default the SDK's).
	HTTPClient *http.Client
	// Options are further SDK options (headers, middleware), applied after the above.
	Options []option.RequestOption
}

// Validate reports a missing key and out-of-range numbers.
func (c Config) Validate() error {
	switch {
	case c.APIKey == "":
		return errors.New("anthropic: APIKey required")
	case c.MaxTokens < 0:
		return fmt.Errorf("anthropic: MaxTokens %d is negative", c.MaxTokens)
	case c.MaxRetries < 0:
		return fmt.Errorf("anthropic: MaxRetries %d is negative", c.MaxRetries)
	}
	return nil
}

// Model is a model.Model on Anthropic's Messages API. It is safe for concurrent use.
type Model struct {
	client    sdk.Client
	model     string
	maxTokens int64
}

var _ model.Model = (*Model)(nil)

// New returns a Model configured by cfg. The SDK reads nothing from the environment
// (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL…): the app reads its settings and fills cfg.
// Errors: cfg.Validate's.
func New(cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if cfg.MaxTokens == 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(cfg.MaxRetries),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	opts = append(opts, cfg.Options...)
	return &Model{client: sdk.NewClient(opts...), model: cfg.Model, maxTokens: cfg.MaxTokens}, nil
}

// Generate asks the model for its reply to req; see model.Model. The reply's text is its
// text blocks joined; a reply that also has thinking blocks keeps them, in order, as parts
// of its content (message.Part with the block's JSON), so that they go back to the model
// with the conversation as Anthropic requires of a tool-using turn. Errors: ctx's; the
// SDK's (*sdk.Error for an error reply, with its status and type); model.ErrRefused for a
// reply that stopped with "refusal"; req.OnText's; a request this adapter cannot map
// (a content part of a kind it does not know, a schema that is not a JSON object).
func (m *Model) Generate(ctx context.Context, req model.Request) (model.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return model.Response{}, err
	}
	var reply *sdk.Message
	if req.OnText != nil {
		reply, err = m.stream(ctx, params, req.OnText)
	} else {
		reply, err = m.client.Messages.New(ctx, params)
		if err != nil {
			err = fmt.Errorf("anthropic: create message model=%s: %w", params.Model, err)
		}
	}
	if err != nil {
		return model.Response{}, err
	}
	return response(reply)
}

// stream asks for the reply as a stream, hands each text delta to onText and returns the
// message its events add up to. A stream that ends before message_stop is an error.
func (m *Model) stream(ctx context.Context, params sdk.MessageNewParams, onText func(string) error) (*sdk.Message, error) {
	s := m.client.Messages.NewStreaming(ctx, params)
	defer s.Close()
	var acc sdk.Message
	stopped := false
	for s.Next() {
		ev := s.Current()
		if err := acc.Accumulate(ev); err != nil {
			return nil, fmt.Errorf("anthropic: read stream model=%s: %w", params.Model, err)
		}
		switch {
		case ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" && ev.Delta.Text != "":
			if err := onText(ev.Delta.Text); err != nil {
				return nil, err
			}
		case ev.Type == "message_stop":
			stopped = true
		}
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("anthropic: stream message model=%s: %w", params.Model, err)
	}
	if !stopped {
		return nil, fmt.Errorf("anthropic: stream message model=%s: the stream ended before message_stop", params.Model)
	}
	return &acc, nil
}
