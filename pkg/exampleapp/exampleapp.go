// Package exampleapp builds funcgraph's example function app: the graphs and routes that
// `make run` serves and that the committed functions/ folder describes.
package exampleapp

import (
	"log/slog"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// Config configures the example app. The handler binary fills it from the environment.
type Config struct {
	// Logger is the app's logger; nil means slog.Default().
	Logger *slog.Logger
}

// Build returns the example function app.
func Build(cfg Config) (*funchost.FunctionApp, error) {
	app := funchost.NewFunctionApp()
	err := app.HandleHTTP(funchost.HTTPFunction{
		Name:      "fg_health",
		Methods:   []string{http.MethodGet},
		Route:     "health",
		AuthLevel: funchost.AuthAnonymous,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status":"ok"}`))
		}),
	})
	if err != nil {
		return nil, err
	}
	return app, nil
}
