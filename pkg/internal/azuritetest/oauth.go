package azuritetest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// envAzuriteBinary names the variable holding the path of the azurite executable, which
// `make integration` sets for tests that start an Azurite of their own.
const envAzuriteBinary = "FUNCGRAPH_TEST_AZURITE_BIN"

// devAccount is Azurite's account; its endpoints are https://127.0.0.1:<port>/devstoreaccount1.
const devAccount = "devstoreaccount1"

// OAuthAzurite is an Azurite a test started with `--oauth basic` over HTTPS: it accepts
// bearer tokens (checking their audience, issuer and lifetime, not their signature) as well
// as shared keys. Stop it with t.Cleanup, which StartOAuth arranges.
type OAuthAzurite struct {
	// BlobURL, QueueURL and TableURL are the service endpoints of the emulator's account.
	BlobURL, QueueURL, TableURL string
	// Client is an HTTP client that trusts the emulator's self-signed certificate (pass it
	// as azcore.ClientOptions.Transport).
	Client *http.Client
}

// StartOAuth starts Azurite (the executable EnvAzuriteBinary names) in memory on three free
// loopback ports, with OAuth on and a self-signed certificate generated in t.TempDir, waits
// up to 30 s for it to accept TLS connections, and stops it at cleanup. It fails the test
// when the variable is unset or Azurite does not start: it never skips.
func StartOAuth(t testing.TB) OAuthAzurite {
	t.Helper()
	bin := os.Getenv(envAzuriteBinary)
	if bin == "" {
		t.Fatalf("%s is not set: run integration tests through `make test` (it names the azurite binary)", envAzuriteBinary)
	}
	dir := t.TempDir()
	certPEM, keyPEM := selfSigned(t)
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 3)
	cmd := exec.Command(bin, "--inMemoryPersistence", "--disableTelemetry", "--silent", "--skipApiVersionCheck", "--loose",
		"--oauth", "basic", "--cert", certFile, "--key", keyFile,
		"--blobHost", "127.0.0.1", "--blobPort", strconv.Itoa(ports[0]),
		"--queueHost", "127.0.0.1", "--queuePort", strconv.Itoa(ports[1]),
		"--tableHost", "127.0.0.1", "--tablePort", strconv.Itoa(ports[2]))
	cmd.Dir = dir
	var out bytes.Buffer // one writer at a time: exec copies both streams through one goroutine
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start azurite: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited // out is complete and no longer written
	}
	t.Cleanup(stop)

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(certPEM)
	tlsConf := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range ports {
		for {
			conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", "127.0.0.1:"+strconv.Itoa(p), tlsConf)
			if err == nil {
				_ = conn.Close()
				break
			}
			select {
			case <-exited:
				t.Fatalf("azurite exited before serving port %d:\n%s", p, out.String())
			default:
			}
			if time.Now().After(deadline) {
				stop()
				t.Fatalf("azurite did not serve TLS on port %d within 30 s (%v):\n%s", p, err, out.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	url := func(p int) string { return fmt.Sprintf("https://127.0.0.1:%d/%s", p, devAccount) }
	return OAuthAzurite{
		BlobURL: url(ports[0]), QueueURL: url(ports[1]), TableURL: url(ports[2]),
		Client: &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConf}, Timeout: time.Minute},
	}
}

// selfSigned returns a PEM certificate and PKCS #8 key for 127.0.0.1, valid for a day.
func selfSigned(t testing.TB) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "azurite-test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}
