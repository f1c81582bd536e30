package assistantmodel

import (
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/funcgraph/funcgraph/pkg/model"
	"github.com/funcgraph/funcgraph/pkg/model/anthropic"
	"github.com/funcgraph/funcgraph/pkg/model/openai"
)

// newOpenAI is the assistant on OpenAI (or a server speaking its API at baseURL).
func newOpenAI(key, baseURL, name string) (model.Model, error) {
	m, err := openai.New(openai.Config{APIKey: key, BaseURL: baseURL, Model: name})
	if err != nil {
		return nil, fmt.Errorf("assistant model: %w", err)
	}
	return m, nil
}

// newAzureOpenAI is the assistant on an Azure OpenAI deployment: with key, key authentication;
// without, Entra ID through azidentity's DefaultAzureCredential.
func newAzureOpenAI(endpoint, deployment, key, apiVersion string) (model.Model, error) {
	cfg := openai.AzureConfig{Endpoint: endpoint, Deployment: deployment, APIKey: key, APIVersion: apiVersion}
	if key == "" {
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, fmt.Errorf("assistant model: Entra ID credential for %s: %w", envAzureEndpoint, err)
		}
		cfg.Credential = cred
	}
	m, err := openai.NewAzure(cfg)
	if err != nil {
		return nil, fmt.Errorf("assistant model: %w", err)
	}
	return m, nil
}

// newAnthropic is the assistant on Anthropic (or a server speaking its API at baseURL).
func newAnthropic(key, baseURL, name string) (model.Model, error) {
	m, err := anthropic.New(anthropic.Config{APIKey: key, BaseURL: baseURL, Model: name})
	if err != nil {
		return nil, fmt.Errorf("assistant model: %w", err)
	}
	return m, nil
}
