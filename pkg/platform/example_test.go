package platform_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/platform"
)

func ExampleMount() {
	app, _ := host.New(host.Options{PlatformCompat: true, AuthLevel: funchost.AuthAnonymous})
	svc, err := platform.Mount(app, platform.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Close()
	srv := httptest.NewServer(app.FunctionApp().Standalone(funchost.StandaloneOptions{}))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/api/assistants/count", "application/json", strings.NewReader(`{}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	fmt.Println(resp.StatusCode)
	// Output: 200
}
