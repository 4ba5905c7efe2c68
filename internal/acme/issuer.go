package acme

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	xacme "golang.org/x/crypto/acme"
)

// Solver publishes HTTP-01 challenge responses: it makes the platform's
// ingress answer http://<host>/.well-known/acme-challenge/<token> (on
// port 80, any path prefix of the host's routes notwithstanding) with the
// key authorization, status 200.
type Solver interface {
	// Present publishes keyAuthorization for host and token, and returns
	// once the ingress serves it: the CA may ask the moment Obtain tells
	// it to.
	Present(ctx context.Context, host, token, keyAuthorization string) error
	// CleanUp withdraws what Present published. Obtain calls it for every
	// challenge Present was called for, even one Present failed to
	// publish, on every path out, with a context of its own that outlives
	// Obtain's being cancelled.
	CleanUp(ctx context.Context, host, token string) error
}

// Issuer obtains certificates from one ACME CA with one account. It holds
// configuration only: each Obtain is independent, and an Issuer may be
// used by several goroutines at once.
type Issuer struct {
	// DirectoryURL is the CA's ACME directory, e.g.
	// https://acme-v02.api.letsencrypt.org/directory. Required: there is
	// no default, so a test can never reach a real CA by omission.
	DirectoryURL string
	// HTTPClient talks to the CA; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Key is the account key (NewAccountKey, ParseKey). The CA knows the
	// account by it: Obtain registers it on first use and finds it again
	// after.
	Key crypto.Signer
	// Email, when set, is the account's contact: where the CA writes about
	// expiring certificates and policy changes. It is given when the
	// account is created; changing it later does not update the account.
	Email string
	// Timeout bounds one Obtain, all its waits included, on top of its
	// context's own deadline. Zero means DefaultTimeout.
	Timeout time.Duration
	// Log gets what Obtain does at V(1), and the challenge responses it
	// could not withdraw. The zero Logger discards.
	Log logr.Logger
}

// DefaultTimeout bounds an Obtain whose Issuer sets no Timeout. A CA
// validates HTTP-01 in seconds; minutes mean something is stuck, and the
// caller is better off retrying than waiting on.
const DefaultTimeout = 5 * time.Minute

// cleanUpTimeout bounds withdrawing the challenge responses, which Obtain
// does even once its own context has ended.
const cleanUpTimeout = 30 * time.Second

// userAgent names knit to the CA, which asks clients to identify
// themselves in case they misbehave.
const userAgent = "knit"

// Certificate is an issued certificate and its private key.
type Certificate struct {
	// Hosts are the names the certificate is for, as Obtain normalized
	// them (lower case, no trailing dot, no duplicates).
	Hosts []string
	// ChainPEM is the certificate chain as PEM, the leaf first and then
	// the intermediates the CA sent, as a TLS server sends them.
	ChainPEM []byte
	// KeyPEM is the leaf's private key as a PKCS#8 "PRIVATE KEY" PEM block
	// (ParseKey reads it).
	KeyPEM []byte
	// NotBefore and NotAfter are the leaf's validity period.
	NotBefore, NotAfter time.Time
}

// RenewAt is when to renew c: see the function RenewAt.
func (c Certificate) RenewAt() time.Time { return RenewAt(c.NotBefore, c.NotAfter) }

// String describes c without its key, so a certificate that ends up in a
// log or an error message leaks nothing.
func (c Certificate) String() string {
	return fmt.Sprintf("certificate for %s valid %s to %s",
		strings.Join(c.Hosts, ", "), c.NotBefore.UTC().Format(time.RFC3339), c.NotAfter.UTC().Format(time.RFC3339))
}

// GoString is String, for %#v.
func (c Certificate) GoString() string { return c.String() }

// Obtain gets a certificate for hosts (DNS names) from the CA, proving
// control of each name over HTTP-01 through s:
//
//  1. register the account key, agreeing to the CA's terms of service
//     (whoever points knit at a CA has chosen it), or find the account
//     if the key is registered already;
//  2. order a certificate for all hosts;
//  3. for each authorization the CA still wants, publish the HTTP-01
//     response through s and ask the CA to validate it, then wait until
//     every one is valid;
//  4. finalize the order with a CSR for a fresh key and fetch the chain.
//
// The key is new for every certificate, never the account key nor the
// previous certificate's: a key that leaks (from a Secret, a backup, a
// memory dump) is then worth one certificate's lifetime, and revoking one
// certificate never strands another that shares its key.
//
// Every wait is bounded by ctx and the Issuer's Timeout; every challenge
// response presented is withdrawn before Obtain returns, whatever the
// outcome. Failures a user can act on are returned as *Error, unwrapped;
// anything else (the context ending, s failing, a response x/crypto/acme
// could not read) is wrapped with what Obtain was doing.
func (i *Issuer) Obtain(ctx context.Context, hosts []string, s Solver) (*Certificate, error) {
	hosts, err := normalizeHosts(hosts)
	if err != nil {
		return nil, err
	}
	if err := i.check(s); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, i.timeout())
	defer cancel()

	o := &obtain{client: i.client(), solver: s, log: i.Log.WithValues("hosts", hosts)}
	defer o.cleanUp(ctx)
	if err := o.register(ctx, i.Email); err != nil {
		return nil, err
	}
	order, err := o.client.AuthorizeOrder(ctx, xacme.DomainIDs(hosts...))
	if err != nil {
		return nil, failed(err, soleHost(hosts), false, "ordering a certificate")
	}
	if err := o.authorize(ctx, order.AuthzURLs); err != nil {
		return nil, err
	}
	orderURL := order.URI
	if order, err = o.client.WaitOrder(ctx, orderURL); err != nil {
		return nil, failed(err, soleHost(hosts), false, "waiting for the order to be ready")
	}
	return o.finalize(ctx, orderURL, order.FinalizeURL, hosts)
}

func (i *Issuer) check(s Solver) error {
	switch {
	case i.DirectoryURL == "":
		return errors.New("acme: Issuer.DirectoryURL is empty")
	case i.Key == nil:
		return errors.New("acme: Issuer.Key is nil")
	case s == nil:
		return errors.New("acme: no Solver")
	}
	_, err := acmeSigner(i.Key)
	return err
}

func (i *Issuer) timeout() time.Duration {
	if i.Timeout > 0 {
		return i.Timeout
	}
	return DefaultTimeout
}

func (i *Issuer) client() *xacme.Client {
	return &xacme.Client{
		Key:          i.Key,
		HTTPClient:   i.HTTPClient,
		DirectoryURL: i.DirectoryURL,
		RetryBackoff: retryBackoff,
		UserAgent:    userAgent,
	}
}

// normalizeHosts lower-cases hosts, drops a trailing dot and duplicates,
// and refuses what HTTP-01 cannot validate.
func normalizeHosts(hosts []string) ([]string, error) {
	if len(hosts) == 0 {
		return nil, errors.New("acme: no hosts to obtain a certificate for")
	}
	out := make([]string, 0, len(hosts))
	for _, h := range hosts {
		h = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
		switch {
		case h == "":
			return nil, errors.New("acme: empty host name")
		case strings.Contains(h, "*"):
			return nil, &Error{
				Reason: ReasonRejected, Host: h,
				Detail: "a wildcard name can only be validated over DNS-01, and knit uses HTTP-01; list the names instead",
			}
		case !slices.Contains(out, h):
			out = append(out, h)
		}
	}
	return out, nil
}

// soleHost is the host an order-wide problem concerns: the order's only
// one, or none in particular ("") when it has several and the CA did not
// say which (a subproblem's identifier, which classify prefers).
func soleHost(hosts []string) string {
	if len(hosts) == 1 {
		return hosts[0]
	}
	return ""
}

// obtain is one Obtain's state: the client, whose account URL (KID) is
// learnt by register, and the challenges presented so far, which
// cleanUp withdraws.
type obtain struct {
	client    *xacme.Client
	solver    Solver
	log       logr.Logger
	presented []presented
}

type presented struct{ host, token string }

func (o *obtain) register(ctx context.Context, email string) error {
	acct := &xacme.Account{}
	if email != "" {
		acct.Contact = []string{"mailto:" + email}
	}
	_, err := o.client.Register(ctx, acct, xacme.AcceptTOS)
	if errors.Is(err, xacme.ErrAccountAlreadyExists) {
		return nil // the client has learnt the account's URL all the same
	}
	if err != nil {
		return failed(err, "", false, "registering the ACME account")
	}
	o.log.V(1).Info("registered an ACME account")
	return nil
}

// authorize satisfies every authorization of an order: it presents and
// accepts an HTTP-01 challenge for each pending one, and only then waits,
// so the CA validates the names side by side.
func (o *obtain) authorize(ctx context.Context, urls []string) error {
	var pending []*xacme.Authorization
	for _, u := range urls {
		z, err := o.client.GetAuthorization(ctx, u)
		if err != nil {
			return failed(err, "", false, "reading an authorization")
		}
		switch z.Status {
		case xacme.StatusValid:
			continue // validated for this account recently: the CA reuses it
		case xacme.StatusPending:
		default:
			return &Error{
				Reason: ReasonChallengeFailed, Host: z.Identifier.Value,
				Detail: "the CA's authorization for it is " + z.Status,
			}
		}
		if err := o.challenge(ctx, z); err != nil {
			return err
		}
		pending = append(pending, z)
	}
	for _, z := range pending {
		if _, err := o.client.WaitAuthorization(ctx, z.URI); err != nil {
			return failed(err, z.Identifier.Value, true, "waiting for the CA to validate "+z.Identifier.Value)
		}
		o.log.V(1).Info("validated", "host", z.Identifier.Value)
	}
	return nil
}

// challenge presents z's HTTP-01 challenge and tells the CA to check it.
func (o *obtain) challenge(ctx context.Context, z *xacme.Authorization) error {
	host := z.Identifier.Value
	chal := http01(z)
	if chal == nil {
		return &Error{
			Reason: ReasonRejected, Host: host,
			Detail: "the CA offers no HTTP-01 challenge for this name, only " + challengeTypes(z),
		}
	}
	keyAuth, err := o.client.HTTP01ChallengeResponse(chal.Token)
	if err != nil {
		return fmt.Errorf("acme: computing the HTTP-01 key authorization for %s: %w", host, err)
	}
	o.presented = append(o.presented, presented{host: host, token: chal.Token})
	if err := o.solver.Present(ctx, host, chal.Token, keyAuth); err != nil {
		return fmt.Errorf("acme: publishing the HTTP-01 response for %s: %w", host, err)
	}
	o.log.V(1).Info("presented the HTTP-01 response", "host", host)
	if _, err := o.client.Accept(ctx, chal); err != nil {
		return failed(err, host, true, "asking the CA to validate "+host)
	}
	return nil
}

func http01(z *xacme.Authorization) *xacme.Challenge {
	for _, c := range z.Challenges {
		if c.Type == "http-01" {
			return c
		}
	}
	return nil
}

func challengeTypes(z *xacme.Authorization) string {
	types := make([]string, 0, len(z.Challenges))
	for _, c := range z.Challenges {
		types = append(types, c.Type)
	}
	if len(types) == 0 {
		return "none"
	}
	return strings.Join(types, ", ")
}

// finalize submits a CSR for a fresh key, fetches the chain and checks it
// is the certificate asked for.
func (o *obtain) finalize(ctx context.Context, orderURL, finalizeURL string, hosts []string) (*Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("acme: generating the certificate key: %w", err)
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{DNSNames: hosts}, key)
	if err != nil {
		return nil, fmt.Errorf("acme: creating the CSR: %w", err)
	}
	der, _, err := o.client.CreateOrderCert(ctx, finalizeURL, csr, true)
	if lostOrderURL(err) {
		der, err = o.awaitIssued(ctx, orderURL)
	}
	if err != nil {
		return nil, failed(err, soleHost(hosts), false, "finalizing the order")
	}
	cert, err := assemble(der, key, hosts)
	if err != nil {
		return nil, err
	}
	o.log.V(1).Info("issued", "notAfter", cert.NotAfter)
	return cert, nil
}

// lostOrderURL reports whether CreateOrderCert failed for want of the
// order's URL. When the CA answers the finalization with the order still
// processing, CreateOrderCert polls the order at the URL in the
// response's Location header; RFC 8555 does not require that header on
// this response and Pebble does not send it, so x/crypto/acme (v0.57.0)
// polls "" and fails before sending anything. The CSR was accepted by
// then: awaitIssued picks up from there.
func lostOrderURL(err error) bool {
	var u *url.Error
	return errors.As(err, &u) && u.URL == ""
}

// awaitIssued polls the order at orderURL until the CA has issued its
// certificate, and fetches the chain.
func (o *obtain) awaitIssued(ctx context.Context, orderURL string) ([][]byte, error) {
	for {
		order, err := o.client.WaitOrder(ctx, orderURL)
		if err != nil {
			return nil, err
		}
		if order.Status == xacme.StatusValid {
			return o.client.FetchCert(ctx, order.CertURL, true)
		}
		// Still ready: WaitOrder returns on it, but after finalization it
		// only means the CA has not started on the CSR yet.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// assemble checks the chain's leaf certifies key for every host and
// encodes chain and key as PEM.
func assemble(der [][]byte, key *ecdsa.PrivateKey, hosts []string) (*Certificate, error) {
	if len(der) == 0 {
		return nil, errors.New("acme: the CA sent an empty certificate chain")
	}
	leaf, err := x509.ParseCertificate(der[0])
	if err != nil {
		return nil, fmt.Errorf("acme: parsing the issued certificate: %w", err)
	}
	if !key.PublicKey.Equal(leaf.PublicKey) {
		return nil, errors.New("acme: the CA issued a certificate for another key than the CSR's")
	}
	for _, h := range hosts {
		if err := leaf.VerifyHostname(h); err != nil {
			return nil, fmt.Errorf("acme: the issued certificate does not cover %s: %w", h, err)
		}
	}
	keyPEM, err := MarshalKey(key)
	if err != nil {
		return nil, err
	}
	var chain []byte
	for _, d := range der {
		chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: d})...)
	}
	return &Certificate{Hosts: hosts, ChainPEM: chain, KeyPEM: keyPEM, NotBefore: leaf.NotBefore, NotAfter: leaf.NotAfter}, nil
}

// cleanUp withdraws every presented challenge response, with a context
// that survives ctx's cancellation: an Obtain that timed out must still
// not leave its responses published. Failures are logged, not returned:
// they do not make the outcome any better or worse.
func (o *obtain) cleanUp(ctx context.Context) {
	if len(o.presented) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanUpTimeout)
	defer cancel()
	for _, p := range o.presented {
		if err := o.solver.CleanUp(ctx, p.host, p.token); err != nil {
			o.log.Error(err, "withdrawing an HTTP-01 response", "host", p.host, "token", p.token)
		}
	}
}

// failed is err as an *Error when a user can act on it (see classify),
// else err wrapped with what was being done.
func failed(err error, host string, validating bool, doing string) error {
	if e := classify(err, host, validating); e != nil {
		return e
	}
	return fmt.Errorf("acme: %s: %w", doing, err)
}

// maxRetries bounds how often x/crypto/acme retries one request after a
// server error or a stale nonce; the context bounds the time.
const maxRetries = 4

// maxRetryDelay is the longest Retry-After a retry waits out inside
// Obtain; a CA asking for longer is down for maintenance, and the caller
// hears it (CAUnreachable, with RetryAfter) rather than a stalled Obtain.
const maxRetryDelay = 30 * time.Second

// retryBackoff is x/crypto/acme's Client.RetryBackoff. Unlike its
// default, it gives up on 429 at once: a rate limit lasts minutes to
// hours, and the caller should hear RateLimited with the CA's
// Retry-After, not wait inside Obtain until its deadline. A bad nonce
// (400; x/crypto/acme retries nothing else below 500) is retried at once
// with the fresh nonce the rejection carried; server errors back off 1s,
// 2s, 4s, 8s, or as the CA's Retry-After says.
func retryBackoff(n int, _ *http.Request, res *http.Response) time.Duration {
	switch {
	case res.StatusCode == http.StatusTooManyRequests, n > maxRetries:
		return 0
	case res.StatusCode == http.StatusBadRequest:
		return time.Millisecond
	}
	d := time.Second << (n - 1)
	if ra := retryAfter(res.Header, time.Now()); ra > maxRetryDelay {
		return 0
	} else if ra > 0 {
		d = ra
	}
	return d
}
