package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"

	"github.com/funcgraph/funcgraph/pkg/model"
)

// DefaultBaseURL is the OpenAI API's base URL, used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1/"

// DefaultAzureAPIVersion is the Azure OpenAI data-plane api-version used when
// AzureConfig.APIVersion is empty: the GA version that has structured outputs and
// stream_options.include_usage.
const DefaultAzureAPIVersion = "2024-10-21"

// Config configures a model on the OpenAI API.
type Config struct {
	// APIKey is the OpenAI API key (required). It is never read from the environment.
	APIKey string
	// BaseURL is the API's base URL; empty, DefaultBaseURL. Set it for a compatible server.
	BaseURL string
	// Model is the model's name, e.g. "gpt-4.1-mini" (required).
	Model string
	// MaxTokens bounds a reply's tokens (max_completion_tokens) when a request sets none; 0
	// leaves it to the vendor.
	MaxTokens int64
	// MaxRetries is how many times the SDK retries a failed call (429, 5xx, a lost
	// connection). The default, 0, makes one request per Generate: a durable step owns
	// retry, and a call the SDK retries after the vendor answered is paid for twice.
	MaxRetries int
	// HTTPClient sends the requests; nil, http.DefaultClient.
	HTTPClient *http.Client
	// Options are more SDK options, applied after the ones Config sets.
	Options []option.RequestOption
}

// Validate reports a missing key or model, or a negative MaxTokens or MaxRetries.
func (c Config) Validate() error {
	switch {
	case c.APIKey == "":
		return errors.New("openai: config: APIKey required")
	case c.Model == "":
		return errors.New("openai: config: Model required")
	}
	return validateLimits(c.MaxTokens, c.MaxRetries)
}

// AzureConfig configures a model deployed on Azure OpenAI. Exactly one of APIKey and
// Credential authenticates.
type AzureConfig struct {
	// Endpoint is the resource's endpoint, https://<resource>.openai.azure.com (required).
	Endpoint string
	// APIKey is one of the resource's keys, sent as the api-key header.
	APIKey string
	// Credential is an Entra ID credential (azidentity's, e.g. a managed identity); its
	// token for https://cognitiveservices.azure.com/.default is sent as a bearer token.
	Credential azcore.TokenCredential
	// Deployment is the model deployment's name (required); replies name the model.
	Deployment string
	// APIVersion is the api-version; empty, DefaultAzureAPIVersion.
	APIVersion string
	// MaxTokens is Config.MaxTokens.
	MaxTokens int64
	// MaxRetries is Config.MaxRetries: 0 by default, a durable step owns retry.
	MaxRetries int
	// HTTPClient sends the requests; nil, the SDK's default. The SDK sends a key or a token
	// only over HTTPS (a test server: openaitest.NewTLSServer and its Client).
	HTTPClient *http.Client
	// Options are more SDK options, applied after the ones AzureConfig sets;
	// azure.WithUnsafeAllowHTTP() lets a test send a key to a plain-HTTP loopback server.
	Options []option.RequestOption
}

// Validate reports a missing endpoint or deployment, no credential or two, or a negative
// MaxTokens or MaxRetries.
func (c AzureConfig) Validate() error {
	switch {
	case c.Endpoint == "":
		return errors.New("openai: azure config: Endpoint required")
	case c.Deployment == "":
		return errors.New("openai: azure config: Deployment required")
	case (c.APIKey == "") == (c.Credential == nil):
		return errors.New("openai: azure config: exactly one of APIKey and Credential required")
	}
	return validateLimits(c.MaxTokens, c.MaxRetries)
}

// validateLimits reports a negative max tokens or retries.
func validateLimits(maxTokens int64, maxRetries int) error {
	if maxTokens < 0 {
		return fmt.Errorf("openai: config: MaxTokens %d is negative", maxTokens)
	}
	if maxRetries < 0 {
		return fmt.Errorf("openai: config: MaxRetries %d is negative", maxRetries)
	}
	return nil
}

// Model is a chat model on the OpenAI Chat Completions API (OpenAI or Azure OpenAI). It is
// safe for concurrent use.
type Model struct {
	chat      openai.ChatCompletionService
	model     string
	maxTokens int64
}

var _ model.Model = (*Model)(nil)

// New returns a model on the OpenAI API.
func New(cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	client := cfg.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(client),
		option.WithMaxRetries(cfg.MaxRetries),
	}
	// NewChatCompletionService, unlike openai.NewClient, reads no OPENAI_* variable.
	chat := openai.NewChatCompletionService(append(opts, cfg.Options...)...)
	return &Model{chat: chat, model: cfg.Model, maxTokens: cfg.MaxTokens}, nil
}

// NewAzure returns a model deployed on Azure OpenAI, requested at
// {Endpoint}/openai/deployments/{Deployment}/chat/completions?api-version={APIVersion}.
func NewAzure(cfg AzureConfig) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	version := cfg.APIVersion
	if version == "" {
		version = DefaultAzureAPIVersion
	}
	opts := []option.RequestOption{
		azure.WithEndpoint(strings.TrimSuffix(cfg.Endpoint, "/"), version),
		option.WithMaxRetries(cfg.MaxRetries),
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	if cfg.Credential != nil {
		opts = append(opts, azure.WithTokenCredential(cfg.Credential))
	} else {
		opts = append(opts, azure.WithAPIKey(cfg.APIKey))
	}
	chat := openai.NewChatCompletionService(append(opts, cfg.Options...)...)
	return &Model{chat: chat, model: cfg.Deployment, maxTokens: cfg.MaxTokens}, nil
}

// Generate asks the model for its reply to req, streamed to req.OnText when set. Errors:
// ctx's; the vendor's, wrapped (errors.As finds *openai.Error, or *ssestream.StreamError
// for an error the API sent in the middle of a stream); model.ErrRefused when the model
// refused or the vendor's content filter stopped the prompt or the reply; OnText's own.
func (m *Model) Generate(ctx context.Context, req model.Request) (model.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return model.Response{}, err
	}
	if req.OnText != nil {
		return m.stream(ctx, params, req.OnText)
	}
	cc, err := m.chat.New(ctx, params)
	if err != nil {
		return model.Response{}, vendorError(m.model, err)
	}
	return response(cc)
}

// stream requests the reply as server-sent events, hands each piece of text to onText,
// assembles the chunks (tool-call argument deltas included) with the SDK's accumulator, and
// returns the whole reply as Generate would have without streaming.
func (m *Model) stream(ctx context.Context, params openai.ChatCompletionNewParams, onText func(string) error) (model.Response, error) {
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	s := m.chat.NewStreaming(ctx, params)
	defer func() { _ = s.Close() }()
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		chunk := s.Current()
		if filtered(chunk) {
			return model.Response{}, fmt.Errorf("openai: stream model=%s: %w: stopped by the content filter", m.model, model.ErrRefused)
		}
		if annotation(chunk) {
			continue
		}
		if !acc.AddChunk(chunk) {
			return model.Response{}, fmt.Errorf("openai: stream model=%s: chunk %q could not be assembled", m.model, chunk.ID)
		}
		for _, c := range chunk.Choices {
			if c.Index == 0 && c.Delta.Content != "" {
				if err := onText(c.Delta.Content); err != nil {
					return model.Response{}, err
				}
			}
		}
	}
	if err := s.Err(); err != nil {
		return model.Response{}, vendorError(m.model, err)
	}
	if c := acc.Choices; len(c) == 0 || c[0].FinishReason == "" {
		// The connection ended before the reply did: what came is not the whole reply, and
		// a step must not commit it as one.
		return model.Response{}, fmt.Errorf("openai: stream model=%s: the stream ended before the reply's finish reason: %w", m.model, io.ErrUnexpectedEOF)
	}
	return response(&acc.ChatCompletion)
}

// annotation reports whether chunk is one of Azure OpenAI's content-filter annotations: no
// ID and nothing of the reply (no delta, finish reason or usage), such as the prompt's
// filter results before the reply and, from its asynchronous filter, the reply's
// (content_filter_offsets) among and after its chunks. The accumulator takes a chunk with
// another ID for another completion's, so they are skipped.
func annotation(chunk openai.ChatCompletionChunk) bool {
	if chunk.ID != "" || chunk.JSON.Usage.Valid() {
		return false
	}
	for _, c := range chunk.Choices {
		if d := c.Delta; d.Content != "" || d.Refusal != "" || len(d.ToolCalls) > 0 || c.FinishReason != "" {
			return false
		}
	}
	return true
}

// filtered reports whether a choice of chunk was stopped by the content filter, which an
// annotation of Azure's asynchronous filter may say with no ID of the reply.
func filtered(chunk openai.ChatCompletionChunk) bool {
	for _, c := range chunk.Choices {
		if c.FinishReason == "content_filter" {
			return true
		}
	}
	return false
}
