package openai_test

import (
	"context"
	"fmt"
	"log"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
	"github.com/funcgraph/funcgraph/pkg/model/openai"
	"github.com/funcgraph/funcgraph/pkg/model/openai/openaitest"
)

func ExampleNew() {
	// A fake of the API stands in for https://api.openai.com/v1/ (leave BaseURL empty there).
	api := openaitest.NewServer(openaitest.Reply{Text: "Paris.", Usage: openaitest.Usage{PromptTokens: 14, CompletionTokens: 2}})
	defer api.Close()

	m, err := openai.New(openai.Config{APIKey: "sk-…", Model: "gpt-4.1-mini", BaseURL: api.BaseURL()})
	if err != nil {
		log.Fatal(err)
	}
	resp, err := m.Generate(context.Background(), model.Request{
		Messages: []message.Message{message.System("Answer in one word."), message.Human("The capital of France?")},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Message.Text(), resp.StopReason, resp.Usage.InputTokens, resp.Usage.OutputTokens)
	// Output: Paris. stop 14 2
}

func ExampleNewAzure() {
	// A fake of an Azure OpenAI resource on HTTPS, as the SDK sends a key only over TLS.
	api := openaitest.NewTLSServer(openaitest.Reply{Text: "Hello from Azure."})
	defer api.Close()

	m, err := openai.NewAzure(openai.AzureConfig{
		Endpoint:   api.URL(), // https://<resource>.openai.azure.com
		APIKey:     "<key from the portal>",
		Deployment: "gpt-4o-mini",
		HTTPClient: api.Client(), // trusts the fake's certificate; leave nil in production
	})
	if err != nil {
		log.Fatal(err)
	}
	var streamed []string
	resp, err := m.Generate(context.Background(), model.Request{
		Messages: []message.Message{message.Human("Hi")},
		OnText:   func(text string) error { streamed = append(streamed, text); return nil },
	})
	if err != nil {
		log.Fatal(err)
	}
	r := api.Requests()[0]
	fmt.Printf("%q %q\n", streamed, resp.Message.Text())
	fmt.Println(r.Path, r.APIVersion)
	// Output:
	// ["Hello " "from " "Azure."] "Hello from Azure."
	// /openai/deployments/gpt-4o-mini/chat/completions 2024-10-21
}

func ExampleNewAzure_entraID() {
	// On Azure, a managed identity (or any azidentity credential) instead of a key; its
	// token is sent as "Authorization: Bearer …".
	cred, err := azidentity.NewManagedIdentityCredential(nil)
	if err != nil {
		log.Fatal(err)
	}
	m, err := openai.NewAzure(openai.AzureConfig{
		Endpoint:   "https://my-resource.openai.azure.com",
		Credential: cred,
		Deployment: "gpt-4o-mini",
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = m
}
